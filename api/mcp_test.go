package api

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"broll/billing/billingtest"
)

func TestMCPInitializeAndListTools(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	base := e.serveLoopback(t)
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{})

	for _, version := range []string{legacyProtocol, ""} { // initialize handshake, and the SDK's newest
		cs, err := mcpConnect(t, base, acct.RootKey.Secret, version)
		if err != nil {
			t.Fatalf("connect %q: %v", version, err)
		}
		init := cs.InitializeResult()
		if init.ServerInfo == nil || init.ServerInfo.Name != "broll" {
			t.Fatalf("server info: %+v", init.ServerInfo)
		}
		for _, want := range []string{"single-user license", "50,000 USD", "separate API key per end customer", "dry_run=true", "expected_total"} {
			if !strings.Contains(init.Instructions, want) {
				t.Errorf("instructions lack %q", want)
			}
		}
		// The tool list is fixed: no client should hold a listen stream open.
		if tc := init.Capabilities.Tools; tc == nil || tc.ListChanged {
			t.Errorf("tools capability: %+v", tc)
		}
		if bal := callToolOK(t, cs, "get_balance", nil); bal["key"].(map[string]any)["id"] != acct.RootKey.ID.String() {
			t.Errorf("protocol %q: get_balance %v", version, bal)
		}
	}

	cs := mcpMustConnect(t, base, acct.RootKey.Secret)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		tools[tool.Name] = tool
	}
	names := []string{"search_videos", "get_video", "purchase_videos", "list_purchases", "get_balance"}
	if len(tools) != len(names) {
		t.Fatalf("tools: %v", tools)
	}
	for _, name := range names {
		tool := tools[name]
		if tool == nil {
			t.Fatalf("tool %s missing", name)
		}
		in, out := jsonMap(t, tool.InputSchema), jsonMap(t, tool.OutputSchema)
		if in["type"] != "object" || out["type"] != "object" || len(out["anyOf"].([]any)) != 2 {
			t.Errorf("%s: schemas in=%v out=%v", name, in, out)
		}
		if tool.Description == "" || tool.Annotations == nil {
			t.Errorf("%s: no description or annotations", name)
		}
		if readOnly := name != "purchase_videos"; tool.Annotations.ReadOnlyHint != readOnly {
			t.Errorf("%s: readOnlyHint %v", name, tool.Annotations.ReadOnlyHint)
		}
		if ow := tool.Annotations.OpenWorldHint; ow == nil || *ow {
			t.Errorf("%s: openWorldHint %v, want false (the catalog and the account are its whole world)", name, ow)
		}
	}
	// The tools speak REST's noun for the pool (GET /api/v1/balance): the
	// balance; "credits" is left only in the error code insufficient_credits.
	text := []string{cs.InitializeResult().Instructions}
	for _, tool := range res.Tools {
		text = append(text, tool.Title, tool.Description)
	}
	for _, s := range text {
		if strings.Contains(strings.ToLower(strings.ReplaceAll(s, "insufficient_credits", "")), "credit") {
			t.Errorf("MCP text still says credit: %q", s)
		}
	}
	if !strings.Contains(tools["purchase_videos"].Title, "balance") || !strings.Contains(tools["get_balance"].Description, "the balance in USD") {
		t.Errorf("purchase_videos title %q, get_balance %q", tools["purchase_videos"].Title, tools["get_balance"].Description)
	}

	// The spending tool: not read-only and destructive (money spent does not
	// come back), so that hosts ask the user first; idempotent, since buying
	// owned clips again charges nothing.
	buy := tools["purchase_videos"]
	if d := buy.Annotations.DestructiveHint; d == nil || !*d {
		t.Errorf("purchase_videos: destructiveHint %v, want true", d)
	}
	if !buy.Annotations.IdempotentHint || !strings.Contains(buy.Description, "dry_run=true") ||
		!strings.Contains(buy.Description, "expected_total") {
		t.Errorf("purchase_videos: %+v %q", buy.Annotations, buy.Description)
	}

	search := jsonMap(t, tools["search_videos"].InputSchema)["properties"].(map[string]any)
	emotion := search["emotion"].(map[string]any)
	if emotion["type"] != "string" || !slices.Contains(emotion["enum"].([]any), any("laughing")) || emotion["description"] == "" {
		t.Errorf("emotion schema: %v", emotion)
	}
	if limit := search["limit"].(map[string]any); limit["type"] != "integer" || limit["maximum"] != 100.0 || limit["minimum"] != 1.0 {
		t.Errorf("limit schema: %v", limit)
	}
	ids := jsonMap(t, buy.InputSchema)["properties"].(map[string]any)["video_ids"].(map[string]any)
	if ids["type"] != "array" || ids["maxItems"] != 50.0 || ids["minItems"] != 1.0 {
		t.Errorf("video_ids schema: %v", ids)
	}
	// The output schema describes the REST body: money is a number, ids are strings.
	balance := jsonMap(t, tools["get_balance"].OutputSchema)["anyOf"].([]any)[0].(map[string]any)["properties"].(map[string]any)
	if balance["balance"].(map[string]any)["type"] != "number" || balance["account_id"].(map[string]any)["format"] != "uuid" {
		t.Errorf("balance output schema: %v", balance)
	}
}

func jsonMap(t *testing.T, s any) map[string]any {
	t.Helper()
	raw, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestMCPToolsMatchREST(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	base := e.serveLoopback(t)
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 5000})
	cust := acct.CustomerKey(t, e.pool, "alice")
	vids := billingtest.Videos(t, e.pool, 3, "medium")
	cs := mcpMustConnect(t, base, cust.Secret)

	// Read tools return exactly the REST bodies.
	same := func(what string, mcpOut map[string]any, path string) {
		t.Helper()
		r := e.do(t, 0, "GET", path, cust.Secret, nil)
		if r.status != 200 {
			t.Fatalf("REST %s: %d %s", path, r.status, r.raw)
		}
		if !reflect.DeepEqual(mcpOut, r.body) {
			got, _ := json.Marshal(mcpOut)
			t.Fatalf("%s over MCP differs from REST:\nmcp  %s\nrest %s", what, got, r.raw)
		}
	}
	same("get_balance", callToolOK(t, cs, "get_balance", nil), "/api/v1/balance")
	same("search_videos", callToolOK(t, cs, "search_videos", map[string]any{"emotion": "happy", "limit": 2, "page": 2}),
		"/api/v1/broll?emotion=happy&limit=2&page=2")
	same("get_video", callToolOK(t, cs, "get_video", map[string]any{"video_id": vids[0].String()}), "/api/v1/broll/"+vids[0].String())

	// Semantic search goes through the same query embedder (these clips have
	// no vectors yet, so REST and MCP agree on an empty page).
	same("semantic search", callToolOK(t, cs, "search_videos", map[string]any{"semantic_search": "woman laughing in a cafe"}),
		"/api/v1/broll?semantic_search=woman+laughing+in+a+cafe")

	all := callToolOK(t, cs, "search_videos", map[string]any{"sort_by": "price", "sort_order": "asc"})
	if n := len(all["videos"].([]any)); n != 3 || all["pagination"].(map[string]any)["total"] != 3.0 {
		t.Fatalf("search: %v", all)
	}

	// Quote, then buy with the quoted total.
	ids := []string{vids[0].String(), vids[1].String()}
	res, quote := callTool(t, cs, "purchase_videos", map[string]any{"video_ids": ids, "dry_run": true})
	if res.IsError || quote["total_charged"] != 20.0 || quote["balance"] != 50.0 || quote["dry_run"] != true {
		t.Fatalf("quote: %v", quote)
	}
	if !strings.Contains(resultText(res, 0), "Nothing was charged") {
		t.Errorf("quote summary: %q", resultText(res, 0))
	}
	bought := callToolOK(t, cs, "purchase_videos", map[string]any{"video_ids": ids, "expected_total": quote["total_charged"]})
	if bought["total_charged"] != 20.0 || bought["balance"] != 30.0 || len(bought["purchases"].([]any)) != 2 {
		t.Fatalf("purchase: %v", bought)
	}
	again := callToolOK(t, cs, "purchase_videos", map[string]any{"video_ids": ids[:1]})
	if again["total_charged"] != 0.0 || again["purchases"].([]any)[0].(map[string]any)["already_owned"] != true {
		t.Fatalf("repeat purchase: %v", again)
	}

	// The purchase made over MCP is visible over REST, and the other way round.
	r := e.do(t, 0, "GET", "/api/v1/broll/purchases", cust.Secret, nil)
	if r.status != 200 || r.body["summary"].(map[string]any)["count"] != 2.0 || r.body["summary"].(map[string]any)["total_amount"] != 20.0 {
		t.Fatalf("REST purchases after MCP purchase: %d %s", r.status, r.raw)
	}
	if r := e.do(t, 0, "GET", "/api/v1/broll/"+vids[0].String(), cust.Secret, nil); r.body["owned"] != true || r.str("download_url") == "" {
		t.Fatalf("REST video after MCP purchase: %s", r.raw)
	}
	listed := callToolOK(t, cs, "list_purchases", map[string]any{"emotion": "happy", "limit": 1})
	if s := listed["summary"].(map[string]any); s["count"] != 2.0 || s["total_amount"] != 20.0 || len(listed["purchases"].([]any)) != 1 {
		t.Fatalf("list_purchases: %v", listed)
	}
	if bal := callToolOK(t, cs, "get_balance", nil); bal["balance"] != 30.0 || bal["month_to_date"].(map[string]any)["purchases"] != 2.0 {
		t.Fatalf("balance after purchase: %v", bal)
	}
	owned := callToolOK(t, cs, "get_video", map[string]any{"video_id": vids[1].String()})
	if owned["owned"] != true || owned["download_url"] == nil {
		t.Fatalf("owned video: %v", owned)
	}
	// The root key sees its customer's purchase over MCP too.
	root := mcpMustConnect(t, base, acct.RootKey.Secret)
	mine := callToolOK(t, root, "list_purchases", map[string]any{"api_key_id": cust.ID.String()})
	if mine["summary"].(map[string]any)["count"] != 2.0 {
		t.Fatalf("root's view of the customer: %v", mine)
	}
}

func TestMCPToolErrors(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	base := e.serveLoopback(t)
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 1500})
	cust := acct.CustomerKey(t, e.pool, "alice")
	vids := billingtest.Videos(t, e.pool, 2, "medium")
	cs := mcpMustConnect(t, base, cust.Secret)

	cases := []struct {
		tool  string
		args  map[string]any
		code  string
		field string
	}{
		{"search_videos", map[string]any{"emotion": "furious"}, "invalid_request", "emotion"},
		{"search_videos", map[string]any{"limit": 0}, "invalid_request", "limit"},
		{"search_videos", map[string]any{"limit": "ten"}, "invalid_request", "limit"},
		{"search_videos", map[string]any{"page": 2, "offset": 5}, "invalid_request", "page"},
		{"search_videos", map[string]any{"colour": "red"}, "invalid_request", "colour"},
		{"search_videos", map[string]any{"search": "cafe", "semantic_search": "a cafe"}, "conflicting_search_params", ""},
		{"get_video", map[string]any{"video_id": "nope"}, "invalid_request", "video_id"},
		{"get_video", map[string]any{"video_id": uuid.NewString()}, "not_found", ""},
		{"purchase_videos", map[string]any{}, "invalid_request", "video_ids"},
		{"purchase_videos", map[string]any{"video_ids": []string{"nope"}}, "invalid_request", "video_ids"},
		{"purchase_videos", map[string]any{"video_ids": []string{uuid.NewString()}}, "not_found", ""},
		{"purchase_videos", map[string]any{"video_ids": []string{vids[0].String()}, "expected_total": 9.99}, "price_changed", ""},
		{"purchase_videos", map[string]any{"video_ids": []string{vids[0].String(), vids[1].String()}}, "insufficient_credits", ""},
		{"list_purchases", map[string]any{"start_date": "01/02/2026"}, "invalid_request", "start_date"},
		{"list_purchases", map[string]any{"api_key_id": cust.ID.String()}, "forbidden", ""},
	}
	for _, tc := range cases {
		out := callToolErr(t, cs, tc.tool, tc.args, tc.code)
		if tc.field != "" && out["field"] != tc.field {
			t.Errorf("%s(%v): field %v, want %s", tc.tool, tc.args, out["field"], tc.field)
		}
		if out["retryable"] != false || out["request_id"] == "" {
			t.Errorf("%s(%v): %v", tc.tool, tc.args, out)
		}
	}
	// Extra fields of the application error come along.
	out := callToolErr(t, cs, "search_videos", map[string]any{"gender": "x"}, "invalid_request")
	if _, ok := out["allowed_values"].([]any); !ok {
		t.Errorf("no allowed_values: %v", out)
	}
	out = callToolErr(t, cs, "purchase_videos", map[string]any{"video_ids": []string{vids[0].String(), vids[1].String()}}, "insufficient_credits")
	if out["required"] != 20.0 || out["available"] != 15.0 {
		t.Errorf("insufficient_credits extras: %v", out)
	}
	// Nothing was charged by any of the failures.
	if bal := callToolOK(t, cs, "get_balance", nil); bal["balance"] != 15.0 {
		t.Fatalf("balance after failures: %v", bal)
	}
}

func TestMCPScopes(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	base := e.serveLoopback(t)
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 5000})
	vids := billingtest.Videos(t, e.pool, 1, "easy")
	reader := mcpMustConnect(t, base, acct.CustomerKey(t, e.pool, "reader", "broll:read").Secret)
	billingOnly := mcpMustConnect(t, base, acct.CustomerKey(t, e.pool, "accountant", "broll:billing").Secret)

	need := map[string]string{
		"purchase_videos": "broll:purchase", "list_purchases": "broll:billing", "get_balance": "broll:billing",
	}
	args := map[string]map[string]any{
		"purchase_videos": {"video_ids": []string{vids[0].String()}},
		"get_video":       {"video_id": vids[0].String()},
	}
	for tool, scope := range need {
		out := callToolErr(t, reader, tool, args[tool], "insufficient_scope")
		if out["required_scope"] != scope || out["retryable"] != false {
			t.Errorf("%s: %v", tool, out)
		}
	}
	callToolOK(t, reader, "search_videos", nil)
	callToolOK(t, reader, "get_video", args["get_video"])
	for _, tool := range []string{"search_videos", "get_video"} {
		if out := callToolErr(t, billingOnly, tool, args[tool], "insufficient_scope"); out["required_scope"] != "broll:read" {
			t.Errorf("%s: %v", tool, out)
		}
	}
	callToolOK(t, billingOnly, "get_balance", nil)
	if r := e.do(t, 0, "GET", "/api/v1/broll/purchases", acct.RootKey.Secret, nil); r.body["summary"].(map[string]any)["count"] != 0.0 {
		t.Fatalf("a refused purchase charged: %s", r.raw)
	}
}

// TestMCPPrincipalPerRequest checks that each tool call sees the key of its
// own HTTP request, with many keys calling at once.
func TestMCPPrincipalPerRequest(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	base := e.serveLoopback(t)
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{})
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 4 {
		key := acct.CustomerKey(t, e.pool, fmt.Sprintf("customer-%d", i))
		cs := mcpMustConnect(t, base, key.Secret)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 8 {
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_balance", Arguments: map[string]any{}})
				if err != nil {
					errs <- err
					return
				}
				got := res.StructuredContent.(map[string]any)["key"].(map[string]any)
				if got["id"] != key.ID.String() || got["customer_label"] != key.Label {
					errs <- fmt.Errorf("key %s saw %v", key.ID, got)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestMCPToolsPerScope: tools/list shows a key only the tools its scopes
// allow, and a tool it was not shown is still refused when called.
func TestMCPToolsPerScope(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	base := e.serveLoopback(t)
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 5000})
	cases := []struct {
		scopes []string
		want   []string
	}{
		{[]string{"broll:read"}, []string{"search_videos", "get_video"}},
		{[]string{"broll:billing"}, []string{"list_purchases", "get_balance"}},
		{[]string{"broll:read", "broll:purchase"}, []string{"search_videos", "get_video", "purchase_videos"}},
		{[]string{"pricing:read"}, nil},
		{nil, []string{"search_videos", "get_video", "purchase_videos", "list_purchases", "get_balance"}}, // a customer key's default scopes
	}
	for _, c := range cases {
		key := acct.CustomerKey(t, e.pool, "scoped", c.scopes...)
		cs := mcpMustConnect(t, base, key.Secret)
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, tool := range res.Tools {
			got = append(got, tool.Name)
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(c.want))
		if !slices.Equal(got, want) {
			t.Errorf("scopes %v: tools %v, want %v", c.scopes, got, want)
		}
		if !slices.Contains(got, "get_balance") {
			out := callToolErr(t, cs, "get_balance", nil, "insufficient_scope")
			if out["required_scope"] != "broll:billing" {
				t.Errorf("scopes %v: get_balance refused with %v", c.scopes, out)
			}
		}
	}
}
