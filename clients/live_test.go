package clients_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/google/uuid"

	"broll/clients/go/brollclient"
)

// The generated clients against a live node: search, create a customer key,
// buy with it, list its purchases, shortlist the clips in a collection and
// buy the collection whole (the clip bought before skipped), revoke it. The Go client here, the
// TypeScript one through node (clients/ts/test/live.mjs).
func TestClientsAgainstALiveNode(t *testing.T) {
	t.Parallel()
	n := startNode(t)
	ctx := context.Background()

	t.Run("go", func(t *testing.T) {
		root, err := brollclient.NewClientWithResponses(n.url, bearer(n.rootKey))
		if err != nil {
			t.Fatal(err)
		}
		limit := brollclient.Limit(5)
		search, err := root.ListVideosWithResponse(ctx, &brollclient.ListVideosParams{Limit: &limit})
		if err != nil || search.JSON200 == nil || len(search.JSON200.Videos) == 0 {
			t.Fatalf("search: %v %s", err, body(search))
		}
		video := search.JSON200.Videos[0].Id
		created, err := root.CreateCustomerKeyWithResponse(ctx, nil, brollclient.KeyCreate{CustomerLabel: "go client"})
		if err != nil || created.JSON201 == nil {
			t.Fatalf("create key: %v %s", err, body(created))
		}
		customer, err := brollclient.NewClientWithResponses(n.url, bearer(created.JSON201.ApiKey))
		if err != nil {
			t.Fatal(err)
		}
		bought, err := customer.PurchaseVideosWithResponse(ctx, nil, brollclient.PurchaseRequest{VideoIds: []uuid.UUID{video}})
		if err != nil || bought.JSON200 == nil || bought.JSON200.Purchases[0].VideoId != video || bought.JSON200.Purchases[0].AlreadyOwned {
			t.Fatalf("purchase: %v %s", err, body(bought))
		}
		listed, err := customer.ListPurchasesWithResponse(ctx, &brollclient.ListPurchasesParams{})
		if err != nil || listed.JSON200 == nil || len(listed.JSON200.Purchases) != 1 || listed.JSON200.Purchases[0].VideoId != video {
			t.Fatalf("list purchases: %v %s", err, body(listed))
		}

		// The collections quickstart's steps: make, fill, read back in order,
		// quote and buy whole.
		made, err := customer.CreateCollectionWithResponse(ctx, brollclient.CollectionCreate{Name: "go client shortlist"})
		if err != nil || made.JSON201 == nil || made.JSON201.ItemCount != 0 {
			t.Fatalf("create collection: %v %s", err, body(made))
		}
		col := made.JSON201.Id
		var all []uuid.UUID
		for _, v := range search.JSON200.Videos {
			all = append(all, v.Id)
		}
		slices.Reverse(all) // an order of our own, not the search's
		added, err := customer.AddCollectionItemsWithResponse(ctx, col, brollclient.CollectionItemsAdd{VideoIds: all})
		if err != nil || added.JSON200 == nil || added.JSON200.ItemCount != len(all) {
			t.Fatalf("add to collection: %v %s", err, body(added))
		}
		got, err := customer.GetCollectionWithResponse(ctx, col, nil)
		if err != nil || got.JSON200 == nil || len(got.JSON200.Items) != len(all) {
			t.Fatalf("get collection: %v %s", err, body(got))
		}
		for i, v := range got.JSON200.Items {
			if v.Id != all[i] || v.Owned != (v.Id == video) {
				t.Fatalf("item %d: %s owned %v, want %s in the order added", i, v.Id, v.Owned, all[i])
			}
		}
		quote, err := customer.PurchaseVideosWithResponse(ctx, nil, brollclient.PurchaseRequest{CollectionId: &col, DryRun: brollclient.Ptr(true)})
		if err != nil || quote.JSON200 == nil || len(quote.JSON200.Purchases) != len(all)-1 {
			t.Fatalf("quote the collection: %v %s", err, body(quote))
		}
		whole, err := customer.PurchaseVideosWithResponse(ctx, nil, brollclient.PurchaseRequest{CollectionId: &col,
			ExpectedTotal: &quote.JSON200.TotalCharged})
		if err != nil || whole.JSON200 == nil || len(whole.JSON200.Purchases) != len(all)-1 || whole.JSON200.TotalCharged != quote.JSON200.TotalCharged ||
			whole.JSON200.Skipped == nil || len(*whole.JSON200.Skipped) != 1 || (*whole.JSON200.Skipped)[0].VideoId != video ||
			(*whole.JSON200.Skipped)[0].Reason != "already_owned" {
			t.Fatalf("buy the collection: %v %s", err, body(whole))
		}

		revoked, err := root.RevokeCustomerKeyWithResponse(ctx, &brollclient.RevokeCustomerKeyParams{Id: created.JSON201.Details.Id})
		if err != nil || revoked.StatusCode() != http.StatusOK {
			t.Fatalf("revoke: %v %s", err, body(revoked))
		}
		after, err := customer.GetBalanceWithResponse(ctx)
		if err != nil || after.StatusCode() != http.StatusUnauthorized || after.ApplicationproblemJSON401 == nil {
			t.Fatalf("a revoked key: %v %s", err, body(after))
		}
	})

	t.Run("typescript", func(t *testing.T) {
		node(t, "live.mjs", "BROLL_URL="+n.url, "BROLL_ROOT_KEY="+n.rootKey)
	})
}

type bodied interface{ StatusCode() int }

func body(r bodied) string {
	if r == nil {
		return "(no response)"
	}
	return fmt.Sprintf("status %d", r.StatusCode())
}
