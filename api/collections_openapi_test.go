package api

import (
	"net/url"
	"testing"

	"github.com/google/uuid"

	"broll/billing/billingtest"
	"broll/clients/go/brollclient"
)

// TestOpenAPICollectionsValidate runs every collection route, and a
// purchase by collection_id, through its successes and refusals, and
// validates each request and response against api/openapi.json.
func TestOpenAPICollectionsValidate(t *testing.T) {
	t.Parallel()
	_, router := loadOpenAPI(t)
	e := setup(t, envOpts{perMinute: 1_000_000})
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 10_000})
	root := bearerHeader(acct.RootKey.Secret)
	cust := bearerHeader(acct.CustomerKey(t, e.pool, "customer 7").Secret)
	readOnly := bearerHeader(acct.CustomerKey(t, e.pool, "reader", "broll:read").Secret)
	vids := billingtest.Videos(t, e.pool, 3, "easy")
	check := func(wantStatus int, name, method, path string, header map[string]string, body any) response {
		t.Helper()
		x := e.exchange(t, 0, name, method, path, header, body)
		validate(t, router, x, wantStatus)
		return x.response
	}
	col := decode[brollclient.Collection](t, check(201, "create collection", "POST", "/api/v1/collections", cust,
		map[string]any{"name": "Beach reactions", "description": "for July"}))
	path := "/api/v1/collections/" + col.Id.String()
	check(400, "create collection, blank name", "POST", "/api/v1/collections", cust, map[string]any{"name": "  "})
	check(403, "create collection, read-only key", "POST", "/api/v1/collections", readOnly, map[string]any{"name": "x"})
	check(401, "collections, no key", "GET", "/api/v1/collections", nil, nil)
	check(200, "add clips", "PUT", path+"/items", cust, map[string]any{"video_ids": vids})
	check(200, "add clips again", "PUT", path+"/items", cust, map[string]any{"video_ids": vids[:1]})
	check(404, "add an unknown clip", "PUT", path+"/items", cust, map[string]any{"video_ids": []uuid.UUID{uuid.New()}})
	check(400, "add no clips", "PUT", path+"/items", cust, map[string]any{"video_ids": []string{}})
	page := decode[brollclient.CollectionWithItems](t, check(200, "collection with items", "GET", path+"?limit=2", cust, nil))
	check(200, "collection items after a cursor", "GET", path+"?limit=2&cursor="+url.QueryEscape(deref(page.Pagination.NextCursor)), cust, nil)
	check(400, "collection items, bad cursor", "GET", path+"?cursor=nope", cust, nil)
	check(400, "collection, bad id", "GET", "/api/v1/collections/nope", cust, nil)
	check(404, "collection, unknown id", "GET", "/api/v1/collections/"+uuid.NewString(), cust, nil)
	check(200, "root reads its customer's collection", "GET", path, root, nil)
	check(403, "root changes its customer's collection", "PATCH", path, root, map[string]any{"name": "mine"})
	check(200, "collections", "GET", "/api/v1/collections?limit=1", cust, nil)
	check(200, "collections of a customer", "GET", "/api/v1/collections?api_key_id="+col.ApiKeyId.String(), root, nil)
	check(403, "customer filters by key", "GET", "/api/v1/collections?api_key_id="+col.ApiKeyId.String(), cust, nil)
	check(200, "rename", "PATCH", path, cust, map[string]any{"name": "Beach", "description": nil})
	check(400, "rename to nothing", "PATCH", path, cust, map[string]any{})
	check(200, "quote a collection", "POST", "/api/v1/broll/purchase", cust, map[string]any{"collection_id": col.Id, "dry_run": true})
	check(200, "buy a collection", "POST", "/api/v1/broll/purchase", cust, map[string]any{"collection_id": col.Id, "expected_total": 15})
	check(400, "buy by both", "POST", "/api/v1/broll/purchase", cust, map[string]any{"collection_id": col.Id, "video_ids": vids})
	check(404, "buy an unknown collection", "POST", "/api/v1/broll/purchase", cust, map[string]any{"collection_id": uuid.New()})
	check(200, "remove a clip", "DELETE", path+"/items?video_id="+vids[1].String(), cust, nil)
	check(400, "remove without video_id", "DELETE", path+"/items", cust, nil)
	check(200, "delete collection", "DELETE", path, cust, nil)
	check(404, "delete it again", "DELETE", path, cust, nil)

	// The cap: a key with 1,000 collections gets 409 limit_reached.
	full := acct.CustomerKey(t, e.pool, "collector")
	for range 1000 {
		expect[brollclient.Collection](t, e.do(t, 0, "POST", "/api/v1/collections", full.Secret, map[string]any{"name": "c"}), 201)
	}
	check(409, "create past the cap", "POST", "/api/v1/collections", bearerHeader(full.Secret), map[string]any{"name": "one too many"})
}
