package api

import (
	"context"
	"fmt"
	"testing"

	"broll/billing/billingtest"
)

// TestMCPDuplicateNames: an MCP message that names a member twice, also
// in two cases, anywhere (the tool's arguments, the call's params, the
// envelope) is 400 invalid_request naming it, before the SDK or a tool
// reads it: nothing is bought.
func TestMCPDuplicateNames(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	base := e.serveLoopback(t)
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 10_000})
	clips := billingtest.Videos(t, e.pool, 2, "easy")
	key := acct.RootKey.Secret
	for _, c := range []struct{ body, field string }{
		{fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"purchase_videos","arguments":{"video_ids":[%q],"VIDEO_IDS":[%q]}}}`,
			clips[0], clips[1]), "params.arguments.VIDEO_IDS"},
		{fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_balance","NAME":"purchase_videos","arguments":{"video_ids":[%q]}}}`,
			clips[0]), "params.NAME"},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","Method":"tools/call"}`, "Method"},
	} {
		r := mcpPost(t, base, key, nil, c.body)
		if r.status != 400 || problemOf(t, r).Code != "invalid_request" || deref(problemOf(t, r).Field) != c.field {
			t.Errorf("%s: %d %s", c.body, r.status, r.raw)
		}
	}
	var n int
	if err := e.pool.QueryRow(context.Background(), `SELECT count(*) FROM purchases WHERE account_id = $1`, acct.ID).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d purchases (%v)", n, err)
	}
}
