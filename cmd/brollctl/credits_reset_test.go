package main

import (
	"context"
	"testing"
)

// credits reset-test sets the test balance to BROLL_TEST_BALANCE with a test
// ledger row, so the test ledger keeps summing to the test balance, and
// leaves the live pool and live ledger alone.
func TestCreditsResetTest(t *testing.T) {
	t.Parallel()
	c := newCtl(t)
	c.env["BROLL_TEST_BALANCE"] = "250.00"
	acct := c.mustRun(t, "account", "create", "--name", "Test Co", "--source", "testco", "--credits", "40")
	id := acct["account_id"].(string)
	ctx := context.Background()
	// settled: the test balance is BROLL_TEST_BALANCE and the live one its
	// opening 40, each the sum of its own ledger.
	settled := func(t *testing.T) {
		t.Helper()
		var tb, tl, live, ll int64
		if err := c.pool.QueryRow(ctx, `SELECT
			(SELECT balance_cents FROM test_balances WHERE account_id = $1),
			(SELECT coalesce(sum(amount_cents), 0) FROM ledger WHERE account_id = $1 AND NOT livemode),
			(SELECT balance_cents FROM accounts WHERE id = $1),
			(SELECT coalesce(sum(amount_cents), 0) FROM ledger WHERE account_id = $1 AND livemode)`, id).
			Scan(&tb, &tl, &live, &ll); err != nil {
			t.Fatal(err)
		}
		if tb != 25000 || tl != tb || live != 4000 || ll != live {
			t.Fatalf("test %d (ledger %d), live %d (ledger %d)", tb, tl, live, ll)
		}
	}

	t.Run("first reset opens the test balance", func(t *testing.T) {
		code, out, stderr := c.run(t, "", "credits", "reset-test", "--account", id)
		if code != 0 || out["test_balance"].(float64) != 250 || out["livemode"] != false {
			t.Fatalf("reset-test: %d %v %s", code, out, stderr)
		}
		settled(t)
	})
	t.Run("reset after spending restores it", func(t *testing.T) {
		// What test purchases do to the row and its ledger, in short.
		if _, err := c.pool.Exec(ctx, `UPDATE test_balances SET balance_cents = balance_cents - 1234 WHERE account_id = $1`, id); err != nil {
			t.Fatal(err)
		}
		if _, err := c.pool.Exec(ctx, `INSERT INTO ledger (account_id, amount_cents, kind, livemode) VALUES ($1, -1234, 'purchase', false)`, id); err != nil {
			t.Fatal(err)
		}
		code, out, stderr := c.run(t, "", "credits", "reset-test", "--account", id)
		if code != 0 || out["test_balance"].(float64) != 250 {
			t.Fatalf("reset-test: %d %v %s", code, out, stderr)
		}
		settled(t)
	})
	t.Run("bad input", func(t *testing.T) {
		c.mustFail(t, "--account is required", "credits", "reset-test")
		c.mustFail(t, "account not found", "credits", "reset-test", "--account", "00000000-0000-0000-0000-000000000001")
	})
}
