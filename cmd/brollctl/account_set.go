package main

import (
	"context"

	"broll/internal/apperr"
	"broll/internal/money"
)

// accountSet changes an account's settings: today its balance.low
// threshold ("default" goes back to BROLL_LOW_BALANCE_THRESHOLD).
func (c *cli) accountSet(f *flags) action {
	id := f.id("account")
	low := f.required("low-balance", `balance.low threshold in USD, or "default"`,
		"account set needs --low-balance USD (or default)")
	return func(ctx context.Context) (any, error) {
		var threshold *money.Cents
		if *low != "default" {
			cents, err := money.ParseDollars(*low)
			if err != nil {
				return nil, apperr.InvalidField("low_balance", "--low-balance: %v", err)
			}
			threshold = &cents
		}
		return c.with(ctx, func(ctx context.Context, e *env) (any, error) {
			if err := e.billing.SetAccountLowBalance(ctx, *id, threshold); err != nil {
				return nil, err
			}
			out := map[string]any{"account_id": *id, "low_balance": "default", "currency": "USD"}
			if threshold != nil {
				out["low_balance"] = *threshold
			}
			return out, nil
		})
	}
}
