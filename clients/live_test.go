package clients_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/google/uuid"

	"broll/clients/go/brollclient"
)

// The generated clients against a live node: search, create a customer key,
// buy with it, list its purchases, revoke it. The Go client here, the
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
