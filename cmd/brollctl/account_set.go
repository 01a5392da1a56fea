package main

import (
	"context"
	"flag"

	"broll/internal/apperr"
	"broll/internal/money"
)

// accountSet changes an account's settings: today its balance.low
// threshold ("default" goes back to BROLL_LOW_BALANCE_THRESHOLD).
func (c *cli) accountSet(ctx context.Context, args []string) (any, error) {
	var low string
	id, err := c.idFlags("account set", args, "account", func(fs *flag.FlagSet) {
		fs.StringVar(&low, "low-balance", "", `balance.low threshold in USD, or "default"`)
	})
	if err != nil {
		return nil, err
	}
	if low == "" {
		return nil, usageErr("account set needs --low-balance USD (or default)")
	}
	var threshold *money.Cents
	if low != "default" {
		cents, err := money.ParseDollars(low)
		if err != nil {
			return nil, apperr.InvalidField("low_balance", "--low-balance: %v", err)
		}
		threshold = &cents
	}
	return c.with(ctx, func(e *env) (any, error) {
		if err := e.billing.SetAccountLowBalance(ctx, id, threshold); err != nil {
			return nil, err
		}
		out := map[string]any{"account_id": id, "low_balance": "default", "currency": "USD"}
		if threshold != nil {
			out["low_balance"] = *threshold
		}
		return out, nil
	})
}
