package main

import (
	"context"
	"testing"
)

// account set --low-balance stores the account's balance.low threshold,
// and "default" clears it back to BROLL_LOW_BALANCE_THRESHOLD.
func TestAccountSetLowBalance(t *testing.T) {
	t.Parallel()
	c := newCtl(t)
	acct := c.mustRun(t, "account", "create", "--name", "Low Co", "--source", "lowco")
	id := acct["account_id"].(string)
	threshold := func() *int64 {
		var v *int64
		if err := c.pool.QueryRow(context.Background(), `SELECT low_balance_cents FROM accounts WHERE id = $1`, id).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	code, out, stderr := c.run(t, "", "account", "set", "--account", id, "--low-balance", "25.50")
	if code != 0 || out["low_balance"].(float64) != 25.5 {
		t.Fatalf("account set: %d %v %s", code, out, stderr)
	}
	if v := threshold(); v == nil || *v != 2550 {
		t.Fatalf("stored threshold %v, want 2550", v)
	}
	c.mustFail(t, "--low-balance", "account", "set", "--account", id, "--low-balance", "-1")
	if code, out, _ := c.run(t, "", "account", "set", "--account", id, "--low-balance", "default"); code != 0 || out["low_balance"] != "default" {
		t.Fatalf("account set default: %d %v", code, out)
	}
	if v := threshold(); v != nil {
		t.Fatalf("stored threshold %v after default, want none", *v)
	}
}
