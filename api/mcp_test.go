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

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"broll/billing/billingtest"
	"broll/clients/go/brollclient"
)

func TestMCPInitializeAndListTools(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	base := e.serveLoopback(t)
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{})

	// The initialize handshake of today's assistants, and the SDK's newest.
	for name, version := range map[string]string{"protocol " + legacyProtocol: legacyProtocol, "newest protocol": ""} {
		t.Run(name+" initializes with the server's instructions", func(t *testing.T) {
			cs, err := mcpConnect(t, base, acct.RootKey.Secret, version)
			if err != nil {
				t.Fatalf("connect: %v", err)
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
			if bal := decode[brollclient.Balance](t, callToolOK(t, cs, "get_balance", nil)); bal.Key.Id != acct.RootKey.ID {
				t.Errorf("get_balance %+v", bal)
			}
		})
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
	names := []string{"search_videos", "get_video", "find_similar_videos", "purchase_videos", "list_purchases", "get_balance",
		"create_collection", "add_to_collection", "list_collections", "get_collection"}
	// The tools that change something: a purchase spends, a collection
	// tool writes the key's shortlist.
	changes := []string{"purchase_videos", "create_collection", "add_to_collection"}
	if len(tools) != len(names) {
		t.Fatalf("tools: %v", tools)
	}
	for _, name := range names {
		tool := tools[name]
		if tool == nil {
			t.Fatalf("tool %s missing", name)
		}
		in, out := schemaOf(t, tool.InputSchema), schemaOf(t, tool.OutputSchema)
		if in.Type != "object" || out.Type != "object" || len(out.AnyOf) != 2 {
			t.Errorf("%s: schemas in=%+v out=%+v", name, in, out)
		}
		if tool.Description == "" || tool.Annotations == nil {
			t.Errorf("%s: no description or annotations", name)
		}
		if readOnly := !slices.Contains(changes, name); tool.Annotations.ReadOnlyHint != readOnly {
			t.Errorf("%s: readOnlyHint %v", name, tool.Annotations.ReadOnlyHint)
		}
		// Every tool but create_collection is safe to repeat: hosts that
		// retry or skip approval only for idempotent tools read this flag,
		// not readOnlyHint. A second create_collection makes a second
		// collection.
		if idempotent := name != "create_collection"; tool.Annotations.IdempotentHint != idempotent {
			t.Errorf("%s: idempotentHint %v", name, tool.Annotations.IdempotentHint)
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

	search := schemaOf(t, tools["search_videos"].InputSchema).Properties
	if emotion := search["emotion"]; emotion.Type != "string" || !slices.Contains(emotion.Enum, any("laughing")) || emotion.Description == "" {
		t.Errorf("emotion schema: %+v", emotion)
	}
	if limit := search["limit"]; limit.Type != "integer" || *limit.Maximum != 100 || *limit.Minimum != 1 {
		t.Errorf("limit schema: %+v", limit)
	}
	ids := schemaOf(t, buy.InputSchema).Properties["video_ids"]
	if ids.Type != "array" || *ids.MaxItems != 50 || *ids.MinItems != 1 {
		t.Errorf("video_ids schema: %+v", ids)
	}
	// The shortlist tools write, but spend and lose nothing: hosts need not
	// ask the user before each add.
	for _, name := range []string{"create_collection", "add_to_collection"} {
		if d := tools[name].Annotations.DestructiveHint; d == nil || *d {
			t.Errorf("%s: destructiveHint %v, want false", name, d)
		}
	}
	adds := schemaOf(t, tools["add_to_collection"].InputSchema).Properties["video_ids"]
	if adds.Type != "array" || *adds.MaxItems != 50 || *adds.MinItems != 1 {
		t.Errorf("add_to_collection video_ids schema: %+v", adds)
	}
	if name := schemaOf(t, tools["create_collection"].InputSchema).Properties["name"]; name.Type != "string" ||
		*name.MinLength != 1 || *name.MaxLength != 200 {
		t.Errorf("create_collection name schema: %+v", name)
	}
	// purchase_videos takes video_ids or collection_id: neither is required
	// by the schema, the call refuses both or neither.
	if req := schemaOf(t, buy.InputSchema).Required; len(req) != 0 {
		t.Errorf("purchase_videos requires %v", req)
	}
	// Every id argument says it is a UUID, so that a model does not pass a
	// title or a URL where an id goes.
	for tool, schema := range map[string]*jsonschema.Schema{
		"get_video":                     schemaOf(t, tools["get_video"].InputSchema).Properties["video_id"],
		"find_similar_videos":           schemaOf(t, tools["find_similar_videos"].InputSchema).Properties["video_id"],
		"purchase_videos":               ids.Items,
		"purchase_videos collection_id": schemaOf(t, buy.InputSchema).Properties["collection_id"],
		"list_purchases":                schemaOf(t, tools["list_purchases"].InputSchema).Properties["api_key_id"],
		"add_to_collection":             schemaOf(t, tools["add_to_collection"].InputSchema).Properties["collection_id"],
		"add_to_collection video_ids":   adds.Items,
		"get_collection":                schemaOf(t, tools["get_collection"].InputSchema).Properties["collection_id"],
		"list_collections":              schemaOf(t, tools["list_collections"].InputSchema).Properties["api_key_id"],
	} {
		if schema == nil || schema.Type != "string" || schema.Format != "uuid" {
			t.Errorf("%s: id argument schema %+v, want a string of format uuid", tool, schema)
		}
	}
	// The output schema describes the REST body: money is a number, ids are strings.
	balance := schemaOf(t, tools["get_balance"].OutputSchema).AnyOf[0].Properties
	if balance["balance"].Type != "number" || balance["account_id"].Format != "uuid" {
		t.Errorf("balance output schema: %+v", balance)
	}
}

func TestMCPToolsMatchREST(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	base := e.serveLoopback(t)
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 5000})
	cust := acct.CustomerKey(t, e.pool, "alice")
	vids := billingtest.Videos(t, e.pool, 3, "medium")
	cs := mcpMustConnect(t, base, cust.Secret)

	same := func(t *testing.T, what string, mcpOut response, path string) {
		t.Helper()
		r := e.do(t, 0, "GET", path, cust.Secret, nil)
		var got, want any
		if json.Unmarshal(mcpOut.raw, &got) != nil || json.Unmarshal(r.raw, &want) != nil || r.status != 200 || !reflect.DeepEqual(withoutLinkTimes(got), withoutLinkTimes(want)) {
			t.Fatalf("%s over MCP differs from REST %d:\nmcp  %s\nrest %s", what, r.status, mcpOut.raw, r.raw)
		}
	}
	t.Run("read tools return exactly the REST bodies", func(t *testing.T) {
		same(t, "get_balance", callToolOK(t, cs, "get_balance", nil), "/api/v1/balance")
		same(t, "search_videos", callToolOK(t, cs, "search_videos", map[string]any{"emotion": "happy", "limit": 2, "page": 2}),
			"/api/v1/broll?emotion=happy&limit=2&page=2")
		same(t, "get_video", callToolOK(t, cs, "get_video", map[string]any{"video_id": vids[0].String()}), "/api/v1/broll/"+vids[0].String())
		// Semantic search goes through the same query embedder (these clips
		// have no vectors yet, so REST and MCP agree on an empty page).
		same(t, "semantic search", callToolOK(t, cs, "search_videos", map[string]any{"semantic_search": "woman laughing in a cafe"}),
			"/api/v1/broll?semantic_search=woman+laughing+in+a+cafe")
		all := decode[brollclient.VideoList](t, callToolOK(t, cs, "search_videos", map[string]any{"sort_by": "price", "sort_order": "asc"}))
		if len(all.Videos) != 3 || all.Pagination.Total != 3 {
			t.Fatalf("search: %+v", all)
		}
	})

	ids := []string{vids[0].String(), vids[1].String()}
	t.Run("purchase_videos quotes, then buys with the quoted total", func(t *testing.T) {
		res, body := callTool(t, cs, "purchase_videos", map[string]any{"video_ids": ids, "dry_run": true})
		if quote := decode[brollclient.PurchaseResult](t, body); res.IsError || quote.TotalCharged != 20 || quote.Balance != 50 || !quote.DryRun {
			t.Fatalf("quote: %s", body.raw)
		}
		if !strings.Contains(resultText(res, 0), "Nothing was charged") {
			t.Errorf("quote summary: %q", resultText(res, 0))
		}
		bought := decode[brollclient.PurchaseResult](t, callToolOK(t, cs, "purchase_videos", map[string]any{"video_ids": ids, "expected_total": 20}))
		if bought.TotalCharged != 20 || bought.Balance != 30 || len(bought.Purchases) != 2 {
			t.Fatalf("purchase: %+v", bought)
		}
		again := decode[brollclient.PurchaseResult](t, callToolOK(t, cs, "purchase_videos", map[string]any{"video_ids": ids[:1]}))
		if again.TotalCharged != 0 || !again.Purchases[0].AlreadyOwned {
			t.Fatalf("repeat purchase: %+v", again)
		}
		// Each line names its licence; buying again names the same one.
		for _, l := range bought.Purchases {
			if l.License == nil || !licenseIDPattern.MatchString(l.License.Id) || l.License.Status != "active" ||
				l.License.VerifyUrl != "http://api.test/licenses/"+l.License.Id {
				t.Fatalf("licence of an MCP purchase: %+v", l.License)
			}
		}
		if again.Purchases[0].License == nil || again.Purchases[0].License.Id != bought.Purchases[0].License.Id {
			t.Fatalf("licence of a repeat purchase: %+v", again.Purchases[0].License)
		}
	})

	t.Run("a purchase made over MCP shows over REST, and the other way round", func(t *testing.T) {
		if s := decode[brollclient.PurchaseList](t, e.do(t, 0, "GET", "/api/v1/broll/purchases", cust.Secret, nil)).Summary; s.Count != 2 || s.TotalAmount != 20 {
			t.Fatalf("REST purchases after MCP purchase: %+v", s)
		}
		if v := decode[brollclient.Video](t, e.do(t, 0, "GET", "/api/v1/broll/"+vids[0].String(), cust.Secret, nil)); !v.Owned || v.DownloadUrl == nil {
			t.Fatalf("REST video after MCP purchase: %+v", v)
		}
		listed := decode[brollclient.PurchaseList](t, callToolOK(t, cs, "list_purchases", map[string]any{"emotion": "happy", "limit": 1}))
		if s := listed.Summary; s.Count != 2 || s.TotalAmount != 20 || len(listed.Purchases) != 1 || listed.Purchases[0].License == nil {
			t.Fatalf("list_purchases: %+v", listed)
		}
		if bal := decode[brollclient.Balance](t, callToolOK(t, cs, "get_balance", nil)); bal.Balance != 30 || bal.MonthToDate.Purchases != 2 {
			t.Fatalf("balance after purchase: %+v", bal)
		}
		if owned := decode[brollclient.Video](t, callToolOK(t, cs, "get_video", map[string]any{"video_id": vids[1].String()})); !owned.Owned || owned.DownloadUrl == nil {
			t.Fatalf("owned video: %+v", owned)
		}
		// The root key sees its customer's purchase over MCP too.
		root := mcpMustConnect(t, base, acct.RootKey.Secret)
		if mine := decode[brollclient.PurchaseList](t, callToolOK(t, root, "list_purchases", map[string]any{"api_key_id": cust.ID.String()})); mine.Summary.Count != 2 {
			t.Fatalf("root's view of the customer: %+v", mine.Summary)
		}
	})
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
		if tc.field != "" && deref(out.Field) != tc.field {
			t.Errorf("%s(%v): field %v, want %s", tc.tool, tc.args, out.Field, tc.field)
		}
		if *out.Retryable || out.RequestId == "" {
			t.Errorf("%s(%v): %+v", tc.tool, tc.args, out)
		}
	}
	// Extra fields of the application error come along.
	if out := callToolErr(t, cs, "search_videos", map[string]any{"gender": "x"}, "invalid_request"); out.AllowedValues == nil {
		t.Errorf("no allowed_values: %+v", out)
	}
	out := callToolErr(t, cs, "purchase_videos", map[string]any{"video_ids": []string{vids[0].String(), vids[1].String()}}, "insufficient_credits")
	if deref(out.Required) != 20 || deref(out.Available) != 15 {
		t.Errorf("insufficient_credits extras: %+v", out)
	}
	// Nothing was charged by any of the failures.
	if bal := decode[brollclient.Balance](t, callToolOK(t, cs, "get_balance", nil)); bal.Balance != 15 {
		t.Fatalf("balance after failures: %+v", bal)
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

	col := uuid.NewString() // refused before it is looked up
	need := map[string]string{
		"purchase_videos": "broll:purchase", "list_purchases": "broll:billing", "get_balance": "broll:billing",
		"create_collection": "broll:purchase", "add_to_collection": "broll:purchase",
	}
	args := map[string]map[string]any{
		"purchase_videos":   {"video_ids": []string{vids[0].String()}},
		"get_video":         {"video_id": vids[0].String()},
		"create_collection": {"name": "not allowed"},
		"add_to_collection": {"collection_id": col, "video_ids": []string{vids[0].String()}},
		"get_collection":    {"collection_id": col},
	}
	for tool, scope := range need {
		out := callToolErr(t, reader, tool, args[tool], "insufficient_scope")
		if string(deref(out.RequiredScope)) != scope || *out.Retryable {
			t.Errorf("%s: %+v", tool, out)
		}
	}
	callToolOK(t, reader, "search_videos", nil)
	callToolOK(t, reader, "get_video", args["get_video"])
	callToolOK(t, reader, "list_collections", nil)
	callToolErr(t, reader, "get_collection", args["get_collection"], "not_found")
	for _, tool := range []string{"search_videos", "get_video", "list_collections", "get_collection"} {
		if out := callToolErr(t, billingOnly, tool, args[tool], "insufficient_scope"); deref(out.RequiredScope) != "broll:read" {
			t.Errorf("%s: %+v", tool, out)
		}
	}
	callToolOK(t, billingOnly, "get_balance", nil)
	if r := e.do(t, 0, "GET", "/api/v1/broll/purchases", acct.RootKey.Secret, nil); decode[brollclient.PurchaseList](t, r).Summary.Count != 0 {
		t.Fatalf("a refused purchase charged: %s", r.raw)
	}
	if r := e.do(t, 0, "GET", "/api/v1/collections", acct.RootKey.Secret, nil); len(decode[brollclient.CollectionList](t, r).Collections) != 0 {
		t.Fatalf("a refused create_collection made one: %s", r.raw)
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
				res, err := cs.CallTool(context.Background(), mcpCall("get_balance"))
				if err != nil {
					errs <- err
					return
				}
				// Read here, not with decode: t.Fatal must not run off the test's goroutine.
				raw, _ := json.Marshal(res.StructuredContent)
				var got brollclient.Balance
				if err := json.Unmarshal(raw, &got); err != nil || got.Key.Id != key.ID || got.Key.CustomerLabel != key.Label {
					errs <- fmt.Errorf("key %s saw %s", key.ID, raw)
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
		{[]string{"broll:read"}, []string{"search_videos", "get_video", "find_similar_videos", "list_collections", "get_collection"}},
		{[]string{"broll:billing"}, []string{"list_purchases", "get_balance"}},
		{[]string{"broll:read", "broll:purchase"}, []string{"search_videos", "get_video", "find_similar_videos", "purchase_videos",
			"list_collections", "get_collection", "create_collection", "add_to_collection"}},
		{[]string{"pricing:read"}, nil},
		{nil, []string{"search_videos", "get_video", "find_similar_videos", "purchase_videos", "list_purchases", "get_balance",
			"list_collections", "get_collection", "create_collection", "add_to_collection"}}, // a customer key's default scopes
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
			if out := callToolErr(t, cs, "get_balance", nil, "insufficient_scope"); deref(out.RequiredScope) != "broll:billing" {
				t.Errorf("scopes %v: get_balance refused with %+v", c.scopes, out)
			}
		}
	}
}

// withoutLinkTimes is a decoded JSON answer with its signed download links
// cut to their paths and their expiry times dropped: two calls a second
// apart sign the same purchase with different expiries (exp is cut to the
// second), and nothing else about the answers may differ.
func withoutLinkTimes(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			switch k {
			case "download_url_expires_at":
			case "download_url":
				if s, ok := e.(string); ok {
					e, _, _ = strings.Cut(s, "?")
				}
				out[k] = e
			default:
				out[k] = withoutLinkTimes(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = withoutLinkTimes(e)
		}
		return out
	}
	return v
}
