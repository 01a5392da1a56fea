package api

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"broll/billing/billingtest"
	"broll/clients/go/brollclient"
)

// sameAsREST fails unless a tool's structuredContent is the body of the
// REST call (links' signatures and expiry times aside, which differ a
// second apart).
func sameAsREST(t *testing.T, e *testEnv, key, what string, mcpOut response, method, path string, body any) {
	t.Helper()
	r := e.do(t, 0, method, path, key, body)
	var got, want any
	if json.Unmarshal(mcpOut.raw, &got) != nil || json.Unmarshal(r.raw, &want) != nil || r.status >= 300 ||
		!reflect.DeepEqual(withoutLinkTimes(got), withoutLinkTimes(want)) {
		t.Fatalf("%s over MCP differs from REST %s %s (%d):\nmcp  %s\nrest %s", what, method, path, r.status, mcpOut.raw, r.raw)
	}
}

func itemIDs(c brollclient.CollectionWithItems) []uuid.UUID {
	ids := make([]uuid.UUID, len(c.Items))
	for i, v := range c.Items {
		ids[i] = v.Id
	}
	return ids
}

// TestMCPCollectionToolsMatchREST: each collection tool returns what its
// REST route returns, for collections made over either surface.
func TestMCPCollectionToolsMatchREST(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	base := e.serveLoopback(t)
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 5000})
	cust := acct.CustomerKey(t, e.pool, "alice")
	vids := billingtest.Videos(t, e.pool, 4, "medium")
	cs := mcpMustConnect(t, base, cust.Secret)

	made := decode[brollclient.Collection](t, callToolOK(t, cs, "create_collection",
		map[string]any{"name": "Cafe scenes", "description": "for the spring campaign"}))
	if made.Name != "Cafe scenes" || deref(made.Description) != "for the spring campaign" || made.ItemCount != 0 ||
		made.ApiKeyId != cust.ID || !made.Livemode {
		t.Fatalf("create_collection: %+v", made)
	}
	col := made.Id.String()

	t.Run("create_collection and add_to_collection answer as the collection list shows it", func(t *testing.T) {
		list := decode[brollclient.CollectionList](t, e.do(t, 0, "GET", "/api/v1/collections", cust.Secret, nil))
		if len(list.Collections) != 1 || !reflect.DeepEqual(list.Collections[0], made) {
			t.Fatalf("REST list %+v, create_collection %+v", list.Collections, made)
		}
		added := callToolOK(t, cs, "add_to_collection", map[string]any{"collection_id": col,
			"video_ids": []string{vids[2].String(), vids[0].String()}})
		// The REST add of a clip already there changes nothing and answers
		// the collection as it is: the same body.
		sameAsREST(t, e, cust.Secret, "add_to_collection", added, "PUT", "/api/v1/collections/"+col+"/items",
			map[string]any{"video_ids": []string{vids[0].String()}})
		if got := decode[brollclient.Collection](t, added); got.ItemCount != 2 {
			t.Fatalf("after add_to_collection: %+v", got)
		}
	})

	t.Run("list_collections and get_collection return exactly the REST bodies", func(t *testing.T) {
		// One made over REST, seen over MCP.
		viaREST := expect[brollclient.Collection](t, e.do(t, 0, "POST", "/api/v1/collections", cust.Secret,
			map[string]any{"name": "Rooftops"}), 201)
		expect[brollclient.Collection](t, e.do(t, 0, "PUT", "/api/v1/collections/"+viaREST.Id.String()+"/items", cust.Secret,
			map[string]any{"video_ids": []string{vids[3].String()}}), 200)
		e.buy(t, 0, cust.Secret, vids[0]) // an owned clip carries its download_url

		sameAsREST(t, e, cust.Secret, "list_collections", callToolOK(t, cs, "list_collections", nil), "GET", "/api/v1/collections", nil)
		sameAsREST(t, e, cust.Secret, "list_collections, a page", callToolOK(t, cs, "list_collections", map[string]any{"limit": 1}),
			"GET", "/api/v1/collections?limit=1", nil)
		got := callToolOK(t, cs, "get_collection", map[string]any{"collection_id": col})
		sameAsREST(t, e, cust.Secret, "get_collection", got, "GET", "/api/v1/collections/"+col, nil)
		items := decode[brollclient.CollectionWithItems](t, got)
		if !slices.Equal(itemIDs(items), []uuid.UUID{vids[2], vids[0]}) || items.Items[0].Owned || !items.Items[1].Owned ||
			items.Items[1].DownloadUrl == nil {
			t.Fatalf("get_collection items: %+v", items.Items)
		}
		sameAsREST(t, e, cust.Secret, "get_collection of a REST-made collection",
			callToolOK(t, cs, "get_collection", map[string]any{"collection_id": viaREST.Id.String()}),
			"GET", "/api/v1/collections/"+viaREST.Id.String(), nil)

		// Paging: one clip a page, the cursor as REST hands it out.
		first := decode[brollclient.CollectionWithItems](t, callToolOK(t, cs, "get_collection", map[string]any{"collection_id": col, "limit": 1}))
		if len(first.Items) != 1 || first.Pagination.NextCursor == nil {
			t.Fatalf("first page: %+v", first)
		}
		next := callToolOK(t, cs, "get_collection", map[string]any{"collection_id": col, "limit": 1, "cursor": *first.Pagination.NextCursor})
		sameAsREST(t, e, cust.Secret, "get_collection, next page", next, "GET",
			"/api/v1/collections/"+col+"?limit=1&cursor="+*first.Pagination.NextCursor, nil)
		if second := decode[brollclient.CollectionWithItems](t, next); !slices.Equal(itemIDs(second), []uuid.UUID{vids[0]}) {
			t.Fatalf("second page: %+v", second)
		}
	})

	t.Run("purchase_videos buys a collection as REST does: quote, then charge once, retired clips skipped", func(t *testing.T) {
		if _, err := e.pool.Exec(context.Background(), `UPDATE videos SET retired_at = now() WHERE id = $1`, vids[2]); err != nil {
			t.Fatal(err)
		}
		quote := callToolOK(t, cs, "purchase_videos", map[string]any{"collection_id": col, "dry_run": true})
		sameAsREST(t, e, cust.Secret, "a collection's quote", quote, "POST", "/api/v1/broll/purchase",
			map[string]any{"collection_id": col, "dry_run": true})
		q := decode[brollclient.PurchaseResult](t, quote)
		if q.TotalCharged != 0 || !q.DryRun || q.Skipped == nil || len(*q.Skipped) != 2 {
			t.Fatalf("quote: %s", quote.raw)
		}
		reasons := map[uuid.UUID]string{}
		for _, s := range *q.Skipped {
			reasons[s.VideoId] = string(s.Reason)
		}
		if reasons[vids[2]] != "retired" || reasons[vids[0]] != "already_owned" {
			t.Fatalf("skipped: %v", reasons)
		}
		// A clip added after the quote changes the total: price_changed,
		// nothing charged; quoted again, it buys.
		callToolOK(t, cs, "add_to_collection", map[string]any{"collection_id": col, "video_ids": []string{vids[1].String()}})
		callToolErr(t, cs, "purchase_videos", map[string]any{"collection_id": col, "expected_total": 0}, "price_changed")
		res, body := callTool(t, cs, "purchase_videos", map[string]any{"collection_id": col, "expected_total": 10})
		bought := decode[brollclient.PurchaseResult](t, body)
		if res.IsError || bought.TotalCharged != 10 || bought.Balance != 30 || len(bought.Purchases) != 1 ||
			bought.Purchases[0].VideoId != vids[1] || !strings.Contains(resultText(res, 0), "Skipped 2 clips") {
			t.Fatalf("purchase of the collection: %q %s", resultText(res, 0), body.raw)
		}
		again := decode[brollclient.PurchaseResult](t, callToolOK(t, cs, "purchase_videos", map[string]any{"collection_id": col}))
		if again.TotalCharged != 0 || len(again.Purchases) != 0 {
			t.Fatalf("buying the collection again: %+v", again)
		}
		if bal := decode[brollclient.Balance](t, e.do(t, 0, "GET", "/api/v1/balance", acct.RootKey.Secret, nil)); bal.Balance != 30 {
			t.Fatalf("balance %v, want 30 (10 for the first clip, 10 for the collection)", bal.Balance)
		}
	})
}

// TestMCPCollectionKeptBetweenCalls: an assistant makes a collection in
// one conversation, adds to it in another and reads it back in a third,
// each a connection of its own to any node: the collection is the key's,
// not the connection's.
func TestMCPCollectionKeptBetweenCalls(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	base := e.serveLoopback(t)
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 5000})
	cust := acct.CustomerKey(t, e.pool, "assistant")
	vids := billingtest.Videos(t, e.pool, 3, "easy")

	made := decode[brollclient.Collection](t, callToolOK(t, mcpMustConnect(t, base, cust.Secret), "create_collection",
		map[string]any{"name": "Morning routine shots"}))
	later := mcpMustConnect(t, base, cust.Secret)
	callToolOK(t, later, "add_to_collection", map[string]any{"collection_id": made.Id.String(),
		"video_ids": []string{vids[1].String(), vids[0].String()}})
	callToolOK(t, later, "add_to_collection", map[string]any{"collection_id": made.Id.String(),
		"video_ids": []string{vids[0].String(), vids[2].String()}})

	third := mcpMustConnect(t, base, cust.Secret)
	found := decode[brollclient.CollectionList](t, callToolOK(t, third, "list_collections", nil))
	if len(found.Collections) != 1 || found.Collections[0].Id != made.Id || found.Collections[0].ItemCount != 3 {
		t.Fatalf("list_collections in a new conversation: %+v", found)
	}
	res, body := callTool(t, third, "get_collection", map[string]any{"collection_id": made.Id.String()})
	got := decode[brollclient.CollectionWithItems](t, body)
	if res.IsError || !slices.Equal(itemIDs(got), []uuid.UUID{vids[1], vids[0], vids[2]}) {
		t.Fatalf("get_collection: %s", body.raw)
	}
	if !strings.Contains(resultText(res, 0), `"Morning routine shots": 3 clips`) {
		t.Errorf("summary %q", resultText(res, 0))
	}
}

// TestMCPCollectionVisibility: the key that made a collection changes it
// and its root reads it; a sibling customer key, another root key of the
// account and another account get not_found from every collection tool,
// purchase_videos included, and change nothing.
func TestMCPCollectionVisibility(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	base := e.serveLoopback(t)
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 5000})
	owner := acct.CustomerKey(t, e.pool, "owner")
	sibling := acct.CustomerKey(t, e.pool, "sibling")
	otherRoot := acct.AnotherRoot(t, e.pool, "second integration")
	stranger := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 5000})
	vids := billingtest.Videos(t, e.pool, 2, "easy")

	cs := mcpMustConnect(t, base, owner.Secret)
	col := decode[brollclient.Collection](t, callToolOK(t, cs, "create_collection", map[string]any{"name": "Mine"})).Id.String()
	callToolOK(t, cs, "add_to_collection", map[string]any{"collection_id": col, "video_ids": []string{vids[0].String()}})

	for name, key := range map[string]string{
		"a sibling customer key":  sibling.Secret,
		"another root key":        otherRoot.RootKey.Secret,
		"another account's root":  stranger.RootKey.Secret,
		"another account's child": stranger.CustomerKey(t, e.pool, "theirs").Secret,
	} {
		t.Run(name, func(t *testing.T) {
			other := mcpMustConnect(t, base, key)
			callToolErr(t, other, "get_collection", map[string]any{"collection_id": col}, "not_found")
			callToolErr(t, other, "add_to_collection", map[string]any{"collection_id": col, "video_ids": []string{vids[1].String()}}, "not_found")
			callToolErr(t, other, "purchase_videos", map[string]any{"collection_id": col}, "not_found")
			if l := decode[brollclient.CollectionList](t, callToolOK(t, other, "list_collections", nil)); len(l.Collections) != 0 {
				t.Fatalf("list_collections shows %+v", l.Collections)
			}
		})
	}

	t.Run("the root key reads it, narrows to its key, and may not change it", func(t *testing.T) {
		root := mcpMustConnect(t, base, acct.RootKey.Secret)
		if got := decode[brollclient.CollectionWithItems](t, callToolOK(t, root, "get_collection", map[string]any{"collection_id": col})); got.ItemCount != 1 {
			t.Fatalf("root's get_collection: %+v", got)
		}
		if l := decode[brollclient.CollectionList](t, callToolOK(t, root, "list_collections", map[string]any{"api_key_id": owner.ID.String()})); len(l.Collections) != 1 {
			t.Fatalf("root's list_collections of its customer: %+v", l)
		}
		callToolErr(t, root, "list_collections", map[string]any{"api_key_id": stranger.RootKey.ID.String()}, "not_found")
		callToolErr(t, root, "add_to_collection", map[string]any{"collection_id": col, "video_ids": []string{vids[1].String()}}, "forbidden")
	})

	got := decode[brollclient.CollectionWithItems](t, callToolOK(t, cs, "get_collection", map[string]any{"collection_id": col}))
	if !slices.Equal(itemIDs(got), []uuid.UUID{vids[0]}) {
		t.Fatalf("the collection changed: %+v", got.Items)
	}
	var n int
	if err := e.pool.QueryRow(context.Background(), `SELECT count(*) FROM purchases`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d purchases (%v)", n, err)
	}
}

// TestMCPCollectionToolErrors: bad arguments are invalid_request naming
// the argument, as REST names the member, and change nothing.
func TestMCPCollectionToolErrors(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	base := e.serveLoopback(t)
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 5000})
	cust := acct.CustomerKey(t, e.pool, "alice")
	vids := billingtest.Videos(t, e.pool, 1, "easy")
	cs := mcpMustConnect(t, base, cust.Secret)
	col := decode[brollclient.Collection](t, callToolOK(t, cs, "create_collection", map[string]any{"name": "Shortlist"})).Id.String()

	cases := []struct {
		tool  string
		args  map[string]any
		code  string
		field string
	}{
		{"create_collection", map[string]any{}, "invalid_request", "name"},
		{"create_collection", map[string]any{"name": "   "}, "invalid_request", "name"},
		{"create_collection", map[string]any{"name": strings.Repeat("x", 201)}, "invalid_request", "name"},
		{"create_collection", map[string]any{"name": "x", "description": strings.Repeat("d", 2001)}, "invalid_request", "description"},
		{"create_collection", map[string]any{"name": "x", "colour": "red"}, "invalid_request", "colour"},
		{"add_to_collection", map[string]any{"collection_id": "my shortlist", "video_ids": []string{vids[0].String()}}, "invalid_request", "collection_id"},
		{"add_to_collection", map[string]any{"collection_id": col}, "invalid_request", "video_ids"},
		{"add_to_collection", map[string]any{"collection_id": col, "video_ids": []string{"a title"}}, "invalid_request", "video_ids"},
		{"add_to_collection", map[string]any{"collection_id": col, "video_ids": []string{uuid.NewString()}}, "not_found", ""},
		{"add_to_collection", map[string]any{"collection_id": uuid.NewString(), "video_ids": []string{vids[0].String()}}, "not_found", ""},
		{"get_collection", map[string]any{"collection_id": "nope"}, "invalid_request", "collection_id"},
		{"get_collection", map[string]any{"collection_id": uuid.NewString()}, "not_found", ""},
		{"get_collection", map[string]any{"collection_id": col, "limit": 0}, "invalid_request", "limit"},
		{"get_collection", map[string]any{"collection_id": col, "cursor": "not-a-cursor"}, "invalid_request", "cursor"},
		{"list_collections", map[string]any{"api_key_id": "nope"}, "invalid_request", "api_key_id"},
		{"list_collections", map[string]any{"api_key_id": cust.ID.String()}, "forbidden", ""},
		{"purchase_videos", map[string]any{"collection_id": "nope"}, "invalid_request", "collection_id"},
		{"purchase_videos", map[string]any{"collection_id": col, "video_ids": []string{vids[0].String()}}, "invalid_request", "collection_id"},
		{"purchase_videos", map[string]any{"collection_id": uuid.NewString()}, "not_found", ""},
	}
	for _, tc := range cases {
		out := callToolErr(t, cs, tc.tool, tc.args, tc.code)
		if tc.field != "" && deref(out.Field) != tc.field {
			t.Errorf("%s(%v): field %v, want %s", tc.tool, tc.args, deref(out.Field), tc.field)
		}
		if *out.Retryable || out.RequestId == "" {
			t.Errorf("%s(%v): %+v", tc.tool, tc.args, out)
		}
	}
	if l := decode[brollclient.CollectionList](t, callToolOK(t, cs, "list_collections", nil)); len(l.Collections) != 1 || l.Collections[0].ItemCount != 0 {
		t.Fatalf("the failures changed the collections: %+v", l.Collections)
	}
}
