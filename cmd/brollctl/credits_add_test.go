package main

import (
	"testing"

	"broll/internal/testkit"
)

// TestCreditsAddUnconfirmed: a top-up whose commit's outcome is unknown
// (its session ended while it committed) fails with a message that says
// it may have been applied, so that an operator reads the ledger before
// adding it again rather than crediting the account twice.
func TestCreditsAddUnconfirmed(t *testing.T) {
	t.Parallel()
	c := newCtl(t)
	acct := c.mustRun(t, "account", "create", "--name", "Unsure Co", "--source", "unsure", "--credits", "10")
	id := acct["account_id"].(string)
	testkit.CommitTrap(t, c.pool, "ledger", testkit.CommitEndsSession)
	c.mustFail(t, "it may have been applied; read the account's ledger before adding it again",
		"credits", "add", "--account", id, "--amount", "5")
}
