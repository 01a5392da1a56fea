package main

import "context"

// creditsResetTest sets an account's test balance back to
// BROLL_TEST_BALANCE. Test purchases are kept (their keys still own the
// clips); the ledger records the difference as a test adjustment.
func (c *cli) creditsResetTest(f *flags) action {
	id := f.id("account")
	return c.opened(func(ctx context.Context, e *env) (any, error) {
		balance, err := e.billing.ResetTestBalance(ctx, *id)
		if err != nil {
			return nil, err
		}
		return map[string]any{"account_id": *id, "test_balance": balance, "currency": "USD", "livemode": false}, nil
	})
}
