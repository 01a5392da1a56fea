package main

import (
	"context"
	"testing"

	"broll/billing/billingtest"
)

// TestKeyLimit: an operator sets and clears a customer key's spend limit
// and rate limit; root keys and bad values are refused with nothing changed.
func TestKeyLimit(t *testing.T) {
	t.Parallel()
	c := newCtl(t)
	acct := billingtest.NewAccount(t, c.pool, billingtest.AccountOpts{})
	id := acct.CustomerKey(t, c.pool, "operated").ID.String()
	out := c.mustRun(t, "key", "limit", "--id", id, "--spend", "50", "--period", "day", "--rate", "120")
	lim, _ := out["spend_limit"].(map[string]any)
	if lim["amount"] != 50.0 || lim["period"] != "day" || out["rate_limit_per_minute"] != 120.0 {
		t.Fatalf("set: %v", out)
	}
	if code, out, stderr := c.run(t, "", "key", "limit", "--id", id, "--no-spend-limit", "--default-rate"); code != 0 ||
		out["spend_limit"] != nil || out["rate_limit_per_minute"] != nil {
		t.Fatalf("clear: %v %s", out, stderr)
	}
	for _, args := range [][]string{
		{"--id", id},
		{"--id", id, "--spend", "5", "--period", "week"},
		{"--id", id, "--rate", "5", "--default-rate"},
		{"--id", id, "--rate", "-1"},
		{"--id", id, "--rate", "100001"},
		{"--id", acct.RootKey.ID.String(), "--rate", "5"},
	} {
		c.mustFail(t, "", append([]string{"key", "limit"}, args...)...)
	}
	var limited int
	if err := c.pool.QueryRow(context.Background(), `SELECT count(*) FROM api_keys
		WHERE spend_limit_cents IS NOT NULL OR rate_limit_per_minute IS NOT NULL`).Scan(&limited); err != nil || limited != 0 {
		t.Fatalf("%d keys left limited (%v)", limited, err)
	}
}
