package main

import (
	"context"
	"flag"
)

// creditsResetTest sets an account's test balance back to
// BROLL_TEST_BALANCE. Test purchases are kept (their keys still own the
// clips); the ledger records the difference as a test adjustment.
func (c *cli) creditsResetTest(ctx context.Context, args []string) (any, error) {
	id, err := c.idFlags("credits reset-test", args, "account", func(*flag.FlagSet) {})
	if err != nil {
		return nil, err
	}
	return c.with(ctx, func(e *env) (any, error) {
		balance, err := e.billing.ResetTestBalance(ctx, id)
		if err != nil {
			return nil, err
		}
		return map[string]any{"account_id": id, "test_balance": balance, "currency": "USD", "livemode": false}, nil
	})
}
