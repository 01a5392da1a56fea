package api

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"broll/billing/billingtest"
)

// maxErrorBytes bounds every error answer below: what a client sent is
// repeated as a short prefix at most, so no error grows with its input.
const maxErrorBytes = 2048

// TestEchoedValuesAreCut sends huge values where errors name what the
// client sent (an unknown field, a bad UUID, a scope, a mode, a period,
// query values, ids in the path, an MCP argument, a legacy email): every
// answer is a small 400 (404 for a path) that repeats at most a
// 100-character prefix, and with an Idempotency-Key the stored row stays
// small as well (a body refused while it is read claims no key at all).
func TestEchoedValuesAreCut(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{perMinute: 10_000})
	ctx := context.Background()
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 10_000})
	root := acct.RootKey.Secret
	customer := acct.CustomerKey(t, e.pool, "echo").Secret
	huge := strings.Repeat("a", 1_000_000) // a 1 MB field name fits in the 1 MiB body limit
	long := strings.Repeat("b", 500_000)
	// Query strings and paths are bounded by the server's header buffer.
	longQuery := strings.Repeat("c", 3000)

	// kept: the value is refused by the key's creation, once the request
	// is read and has claimed its Idempotency-Key, so the answer is kept;
	// the others are refused while the body is read and claim nothing.
	posts := []struct {
		name, path, key, body string
		kept                  bool
	}{
		{"unknown field name", "/api/v1/keys", root, `{"customer_label":"x","` + huge + `":1}`, false},
		{"unknown field name on a purchase", "/api/v1/broll/purchase", customer, `{"video_ids":["` + acct.ID.String() + `"],"` + huge + `":1}`, false},
		{"bad UUID in video_ids", "/api/v1/broll/purchase", customer, `{"video_ids":["` + long + `"]}`, false},
		{"bad expected_total", "/api/v1/broll/purchase", customer, `{"video_ids":["` + acct.ID.String() + `"],"expected_total":"` + long + `"}`, false},
		{"long scope", "/api/v1/keys", root, `{"customer_label":"x","scopes":["` + long + `"]}`, true},
		{"long mode", "/api/v1/keys", root, `{"customer_label":"x","mode":"` + long + `"}`, false},
		{"long spend period", "/api/v1/keys", root, `{"customer_label":"x","spend_limit":{"amount":5,"period":"` + long + `"}}`, false},
		{"long spend amount", "/api/v1/keys", root, `{"customer_label":"x","spend_limit":{"amount":"` + long + `","period":"day"}}`, false},
	}
	for i, c := range posts {
		t.Run(c.name, func(t *testing.T) {
			idem := "echo-" + string(rune('a'+i))
			r := e.send(t, 0, "POST", c.path, map[string]string{"Authorization": "Bearer " + c.key, "Idempotency-Key": idem}, c.body)
			checkSmallError(t, r, 400)
			var rows, stored int
			if err := e.pool.QueryRow(ctx, `SELECT count(*), coalesce(sum(coalesce(octet_length(body), 0) + octet_length(idem_key)
				+ coalesce(octet_length(content_type), 0)), 0) FROM idempotency_keys WHERE idem_key = $1`, idem).Scan(&rows, &stored); err != nil {
				t.Fatal(err)
			}
			if wantRows := map[bool]int{true: 1, false: 0}[c.kept]; rows != wantRows || stored > 2*maxErrorBytes {
				t.Errorf("%d answers stored (want %d), taking %d bytes", rows, wantRows, stored)
			}
			again := e.send(t, 0, "POST", c.path, map[string]string{"Authorization": "Bearer " + c.key, "Idempotency-Key": idem}, c.body)
			checkSmallError(t, again, 400)
			if replayed := again.header.Get("Idempotent-Replayed") == "true"; replayed != c.kept || problemOf(t, again).Detail != problemOf(t, r).Detail {
				t.Errorf("retry (replayed %t, want %t): %d %.300s", replayed, c.kept, again.status, again.raw)
			}
		})
	}

	// Before the cut, 20 such requests grew the table by 39 MiB.
	var tableBytes int64
	if err := e.pool.QueryRow(ctx, `SELECT pg_total_relation_size('idempotency_keys')`).Scan(&tableBytes); err != nil {
		t.Fatal(err)
	}
	if tableBytes > 1<<20 {
		t.Errorf("idempotency_keys takes %d bytes after %d refused requests", tableBytes, len(posts))
	}

	gets := []struct {
		name, method, path, key string
		status                  int
	}{
		{"emotion", "GET", "/api/v1/broll?emotion=" + longQuery, customer, 400},
		{"min_virality", "GET", "/api/v1/broll?min_virality=" + longQuery, customer, 400},
		{"limit", "GET", "/api/v1/broll?limit=" + longQuery, customer, 400},
		{"owned", "GET", "/api/v1/broll?owned=" + longQuery, customer, 400},
		{"video id", "GET", "/api/v1/broll/" + longQuery, customer, 400},
		{"purchases start_date", "GET", "/api/v1/broll/purchases?start_date=" + longQuery, customer, 400},
		{"purchases api_key_id", "GET", "/api/v1/broll/purchases?api_key_id=" + longQuery, root, 400},
		{"key status", "GET", "/api/v1/keys?status=" + longQuery, root, 400},
		{"key mode", "GET", "/api/v1/keys?mode=" + longQuery, root, 400},
		{"key id", "DELETE", "/api/v1/keys?id=" + longQuery, root, 400},
		{"unknown route", "GET", "/api/v1/" + longQuery, customer, 404},
	}
	for _, c := range gets {
		t.Run(c.name, func(t *testing.T) {
			checkSmallError(t, e.do(t, 0, c.method, c.path, c.key, nil), c.status)
		})
	}

	base := e.serveLoopback(t)
	for tool, args := range map[string]map[string]any{
		"get_video":       {"video_id": long},
		"purchase_videos": {"video_ids": []string{long}},
		"search_videos":   {"emotion": long},
		"list_purchases":  {"start_date": long},
	} {
		t.Run("MCP "+tool, func(t *testing.T) {
			call, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
				"params": map[string]any{"name": tool, "arguments": args}})
			r := mcpPost(t, base, customer, nil, string(call))
			// The error result (or JSON-RPC error) carries the message
			// twice at most: text and structured.
			if r.status != 200 || len(r.raw) > 2*maxErrorBytes || strings.Contains(string(r.raw), strings.Repeat("b", 101)) {
				t.Fatalf("%d, %d bytes: %.500s", r.status, len(r.raw), r.raw)
			}
		})
	}

	t.Run("legacy customer_email", func(t *testing.T) {
		if _, err := e.pool.Exec(ctx, `UPDATE accounts SET legacy_enabled = true WHERE id = $1`, acct.ID); err != nil {
			t.Fatal(err)
		}
		var source string
		if err := e.pool.QueryRow(ctx, `SELECT source FROM accounts WHERE id = $1`, acct.ID).Scan(&source); err != nil {
			t.Fatal(err)
		}
		body, _ := json.Marshal(map[string]any{"source": source, "video_ids": []string{acct.ID.String()}, "customer_email": long})
		n := e.legacyNode(t, newTestClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
		r := e.send(t, n, "POST", "/api/external/broll/purchase", map[string]string{"Authorization": "Bearer " + testLegacySecret}, string(body))
		checkSmallError(t, r, 400)
	})
}

// checkSmallError asserts a small problem with status whose detail and
// field repeat no more than a cut prefix of any value.
func checkSmallError(t *testing.T, r response, status int) {
	t.Helper()
	if r.status != status || len(r.raw) > maxErrorBytes {
		t.Fatalf("status %d (want %d), %d bytes: %.500s", r.status, status, len(r.raw), r.raw)
	}
	p := problemOf(t, r)
	for _, run := range []string{"a", "b", "c"} {
		if strings.Contains(p.Detail+deref(p.Field), strings.Repeat(run, 101)) {
			t.Errorf("more than 100 characters of a value repeated: %s", r.raw)
		}
	}
}
