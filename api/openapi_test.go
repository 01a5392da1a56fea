package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"broll/api/dashboard"
	"broll/billing/billingtest"
	"broll/clients/go/brollclient"
)

// loadOpenAPI parses and validates the embedded document; the server is
// pinned to the host httptest requests carry, so that the router matches.
func loadOpenAPI(t *testing.T) (*openapi3.T, routers.Router) {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(openapiJSON)
	if err != nil {
		t.Fatalf("api/openapi.json does not load: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("api/openapi.json is not a valid OpenAPI document: %v", err)
	}
	doc.Servers = openapi3.Servers{{URL: "http://example.com"}}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatalf("router over api/openapi.json: %v", err)
	}
	return doc, router
}

var fiberParam = regexp.MustCompile(`:([A-Za-z0-9_]+)\??`)

// TestOpenAPICoversEveryRoute fails naming each route the app registers
// that the document does not describe, and each documented operation the
// app does not serve. HEAD (added by fiber to every GET) and the catch-all
// 404 are not routes of their own. A path registered for every method
// (app.All, as /api/mcp is) must be in the document with the methods it
// really serves; the others answer 405 and are not listed one by one.
func TestOpenAPICoversEveryRoute(t *testing.T) {
	t.Parallel()
	doc, _ := loadOpenAPI(t)
	e := setup(t, envOpts{})
	registered := map[string][]string{}
	for _, r := range e.nodes[0].app.GetRoutes(true) {
		if r.Method == http.MethodHead || strings.Contains(r.Path, "*") {
			continue
		}
		// The account dashboard's HTML pages and forms are not part of the
		// JSON API the document describes.
		if r.Path == dashboard.Prefix || strings.HasPrefix(r.Path, dashboard.Prefix+"/") {
			continue
		}
		p := fiberParam.ReplaceAllString(r.Path, "{$1}")
		if len(p) > 1 {
			p = strings.TrimSuffix(p, "/")
		}
		if !slices.Contains(registered[p], r.Method) {
			registered[p] = append(registered[p], r.Method)
		}
	}
	var missing, phantom []string
	for path, methods := range registered {
		item := doc.Paths.Value(path)
		if item == nil {
			for _, m := range methods {
				missing = append(missing, m+" "+path)
			}
			continue
		}
		allMethods := slices.Contains(methods, http.MethodConnect) && slices.Contains(methods, http.MethodTrace)
		if allMethods {
			if len(item.Operations()) == 0 {
				missing = append(missing, "ALL "+path)
			}
			continue
		}
		for _, m := range methods {
			if item.GetOperation(m) == nil {
				missing = append(missing, m+" "+path)
			}
		}
	}
	for path, item := range doc.Paths.Map() {
		for m := range item.Operations() {
			if !slices.Contains(registered[path], m) {
				phantom = append(phantom, m+" "+path)
			}
		}
	}
	sort.Strings(missing)
	sort.Strings(phantom)
	if len(missing) > 0 {
		t.Errorf("routes registered in the app but missing from api/openapi.json (add them):\n  %s", strings.Join(missing, "\n  "))
	}
	if len(phantom) > 0 {
		t.Errorf("operations in api/openapi.json that the app does not serve:\n  %s", strings.Join(phantom, "\n  "))
	}
}

// exchange is one real request through the app and its response.
type exchange struct {
	response
	name string
	req  *http.Request
	body []byte // request body, kept for request validation
}

func (e *testEnv) exchange(t *testing.T, n int, name, method, path string, header map[string]string, body any) exchange {
	t.Helper()
	var raw []byte
	switch b := body.(type) {
	case nil:
	case string:
		raw = []byte(b)
	default:
		raw, _ = json.Marshal(b)
	}
	build := func() *http.Request {
		req := httptest.NewRequest(method, path, bytes.NewReader(raw))
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		for k, v := range header {
			req.Header.Set(k, v)
		}
		return req
	}
	res, err := e.nodes[n].app.Test(build(), -1)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	return exchange{response{res.StatusCode, res.Header, out}, name, build(), raw}
}

// validate checks a response (and, for a success, its request) against the
// document: the status must be documented, the body and the headers the
// document declares must match their schemas.
func validate(t *testing.T, router routers.Router, x exchange, wantStatus int) {
	t.Helper()
	if x.status != wantStatus {
		t.Errorf("%s: status %d, want %d: %s", x.name, x.status, wantStatus, x.raw)
		return
	}
	route, params, err := router.FindRoute(x.req)
	if err != nil {
		t.Errorf("%s: %s %s is not in the document: %v", x.name, x.req.Method, x.req.URL.Path, err)
		return
	}
	ctx := context.Background()
	in := &openapi3filter.RequestValidationInput{Request: x.req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	if x.status < 300 {
		x.req.Body = io.NopCloser(bytes.NewReader(x.body))
		if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
			t.Errorf("%s: the request does not match the document: %v", x.name, err)
		}
	}
	ct := x.header.Get("Content-Type")
	opts := &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true,
		// Bodies that are not JSON (files, pages) are checked by media type only.
		ExcludeResponseBody: !strings.Contains(ct, "json")}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: x.status, Header: x.header, Options: opts}
	out.SetBodyBytes(x.raw)
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		t.Errorf("%s: the %d response does not match the document: %v\nbody: %s", x.name, x.status, err, x.raw)
	}
}

func TestOpenAPIResponsesValidate(t *testing.T) {
	t.Parallel()
	_, router := loadOpenAPI(t)
	e := setup(t, envOpts{})
	clock := newTestClock(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
	n := e.legacyNode(t, clock)
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 3500, Legacy: true})
	root := acct.RootKey.Secret
	cust := acct.CustomerKey(t, e.pool, "customer 42")
	readOnly := acct.CustomerKey(t, e.pool, "read only", "broll:read")
	ops, err := e.ctl.Tenancy.CreateOpsKey(context.Background(), "content team")
	if err != nil {
		t.Fatal(err)
	}
	vids := billingtest.Videos(t, e.pool, 4, "medium")
	e.putMedia(t, vids[0], []byte("full quality bytes"))
	legacy := map[string]string{"X-API-Key": testLegacySecret}
	ids := func(v ...int) map[string]any {
		out := make([]string, len(v))
		for i, j := range v {
			out[i] = vids[j].String()
		}
		return map[string]any{"video_ids": out}
	}

	check := func(wantStatus int, name, method, path string, header map[string]string, body any) response {
		t.Helper()
		x := e.exchange(t, n, name, method, path, header, body)
		validate(t, router, x, wantStatus)
		return x.response
	}

	newKey := decode[brollclient.KeyCreated](t, check(201, "create key", "POST", "/api/v1/keys", bearerHeader(root), map[string]any{"customer_label": "customer 43"}))
	check(200, "list keys", "GET", "/api/v1/keys", bearerHeader(root), nil)
	keyPage := decode[brollclient.KeyList](t, check(200, "list keys, paged and filtered", "GET", "/api/v1/keys?limit=1&status=active", bearerHeader(root), nil))
	if keyPage.Pagination.NextCursor == nil {
		t.Fatalf("key page of 1 of 3 live keys: %+v", keyPage)
	}
	check(200, "list keys after a cursor", "GET", "/api/v1/keys?limit=1&status=active&cursor="+url.QueryEscape(*keyPage.Pagination.NextCursor), bearerHeader(root), nil)
	check(400, "list keys, unknown status", "GET", "/api/v1/keys?status=paused", bearerHeader(root), nil)
	check(200, "revoke key", "DELETE", "/api/v1/keys?id="+newKey.Details.Id.String(), bearerHeader(root), nil)
	check(400, "revoke key without id", "DELETE", "/api/v1/keys", bearerHeader(root), nil)
	check(403, "customer key managing keys", "GET", "/api/v1/keys", bearerHeader(cust.Secret), nil)
	check(200, "pricing", "GET", "/api/v1/pricing", bearerHeader(cust.Secret), nil)
	check(200, "balance", "GET", "/api/v1/balance", bearerHeader(cust.Secret), nil)
	check(401, "no key", "GET", "/api/v1/balance", nil, nil)
	check(403, "missing scope", "POST", "/api/v1/broll/purchase", bearerHeader(readOnly.Secret), ids(0))

	check(200, "quote", "POST", "/api/v1/broll/purchase", bearerHeader(cust.Secret), map[string]any{"video_ids": []string{vids[0].String()}, "dry_run": true})
	bought := decode[brollclient.PurchaseResult](t, check(200, "purchase", "POST", "/api/v1/broll/purchase", bearerHeader(cust.Secret), ids(0, 1)))
	check(200, "repeat purchase", "POST", "/api/v1/broll/purchase", bearerHeader(cust.Secret), ids(0))
	check(402, "insufficient credits", "POST", "/api/v1/broll/purchase", bearerHeader(cust.Secret), ids(2, 3))
	check(404, "unknown video", "POST", "/api/v1/broll/purchase", bearerHeader(cust.Secret), map[string]any{"video_ids": []string{"6f1c2a8e-8e53-4c1a-9d55-2f7f0c1f0a11"}})
	check(409, "price changed", "POST", "/api/v1/broll/purchase", bearerHeader(cust.Secret), map[string]any{"video_ids": []string{vids[2].String()}, "expected_total": 1})
	check(400, "malformed body", "POST", "/api/v1/broll/purchase", bearerHeader(cust.Secret), `{"video_ids": [`)
	check(200, "purchases", "GET", "/api/v1/broll/purchases?start_date=2020-01-01", bearerHeader(root), nil)
	purchasePage := decode[brollclient.PurchaseList](t, check(200, "purchases, a page of one", "GET", "/api/v1/broll/purchases?limit=1", bearerHeader(root), nil))
	next := purchasePage.Pagination.NextCursor
	if next == nil {
		t.Fatalf("purchase page of 1 of 2: %+v", purchasePage)
	}
	check(200, "purchases after a cursor", "GET", "/api/v1/broll/purchases?limit=1&cursor="+url.QueryEscape(*next), bearerHeader(root), nil)
	check(400, "purchases, cursor with page", "GET", "/api/v1/broll/purchases?page=1&cursor="+url.QueryEscape(*next), bearerHeader(root), nil)
	check(400, "conflicting search", "GET", "/api/v1/broll/purchases?search=a&semantic_search=b", bearerHeader(root), nil)

	check(200, "catalog", "GET", "/api/v1/broll?limit=2", bearerHeader(cust.Secret), nil)
	check(200, "semantic search", "GET", "/api/v1/broll?semantic_search=a+happy+woman", bearerHeader(cust.Secret), nil)
	check(200, "filters", "GET", "/api/v1/broll/filters", bearerHeader(cust.Secret), nil)
	check(200, "owned video", "GET", "/api/v1/broll/"+vids[0].String(), bearerHeader(cust.Secret), nil)
	check(404, "unknown video details", "GET", "/api/v1/broll/6f1c2a8e-8e53-4c1a-9d55-2f7f0c1f0a11", bearerHeader(cust.Secret), nil)

	link := strings.TrimPrefix(downloadLink(bought.Purchases, 0), "http://api.test")
	check(200, "download", "GET", link, nil, nil)
	check(403, "tampered download", "GET", strings.Replace(link, "sig=", "sig=x", 1), nil, nil)

	clip := filepath.Join(e.cfg.ImportDir, "clip.mp4")
	if err := os.WriteFile(clip, []byte("not really a video"), 0o600); err != nil {
		t.Fatal(err)
	}
	check(200, "ops import", "POST", "/api/ops/v1/videos", bearerHeader(ops.Secret), []map[string]any{{"title": "Man shocked by a parcel",
		"emotion": "shocked", "gender": "male", "difficulty": "easy", "media_file": clip}})
	check(400, "ops import, bad clip", "POST", "/api/ops/v1/videos", bearerHeader(ops.Secret), []map[string]any{{"title": "x",
		"emotion": "grumpy", "gender": "male", "difficulty": "easy", "media_file": clip}})
	check(200, "ops retire", "DELETE", "/api/ops/v1/videos/"+vids[3].String(), bearerHeader(ops.Secret), nil)

	check(200, "mcp tools/list", "POST", "/api/mcp", map[string]string{"Authorization": "Bearer " + cust.Secret,
		"Accept": "application/json, text/event-stream"}, map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
	check(405, "mcp GET", "GET", "/api/mcp", nil, nil)

	legacyBuy := map[string]any{"source": acct.Source, "customer_email": "ann@example.com", "video_ids": []string{vids[1].String()}}
	check(200, "legacy list", "GET", "/api/external/broll?source="+acct.Source, legacy, nil)
	check(200, "legacy details", "GET", "/api/external/broll/"+vids[1].String()+"?source="+acct.Source, legacy, nil)
	check(200, "legacy purchase", "POST", "/api/external/broll/purchase", legacy, legacyBuy)
	check(200, "legacy purchases", "GET", "/api/external/broll/purchases?source="+acct.Source, legacy, nil)
	check(401, "legacy wrong secret", "GET", "/api/external/broll?source="+acct.Source, map[string]string{"X-API-Key": "no"}, nil)
	check(400, "legacy semantic search", "GET", "/api/external/broll?source="+acct.Source+"&semantic_search=x", legacy, nil)
	check(404, "legacy unknown source", "GET", "/api/external/broll/purchases?source=nobody", legacy, nil)
	check(200, "root sees legacy", "GET", "/api/v1/broll/purchases", bearerHeader(root), nil)
	clock.set(time.Date(2026, 9, 2, 0, 0, 0, 0, time.UTC))
	check(410, "legacy after sunset", "POST", "/api/external/broll/purchase", legacy, legacyBuy)

	check(200, "health", "GET", "/healthz", nil, nil)
	check(200, "readiness", "GET", "/readyz", nil, nil)
	check(200, "openapi", "GET", "/api/openapi.json", nil, nil)
	check(200, "migration guide", "GET", "/docs/migration", nil, nil)
	check(200, "guide", "GET", "/docs/api", nil, nil)
	check(404, "unknown guide", "GET", "/docs/nothing", nil, nil)
	check(200, "explorer", "GET", "/docs", nil, nil)
}
