package main

import (
	"context"
	"strconv"
	"strings"
	"time"

	"broll/internal/apperr"
)

// parseSince reads "30d", "12h", "90m" or a date YYYY-MM-DD.
func parseSince(v string, now time.Time) (time.Time, error) {
	if t, err := time.Parse("2006-01-02", v); err == nil {
		return t, nil
	}
	if n, ok := strings.CutSuffix(v, "d"); ok {
		days, err := strconv.Atoi(n)
		if err == nil && days > 0 && days <= 3650 {
			return now.AddDate(0, 0, -days), nil
		}
	} else if d, err := time.ParseDuration(v); err == nil && d > 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, apperr.InvalidField("since", "--since %q is not a period (30d, 12h) or a date (YYYY-MM-DD)", v)
}

func (c *cli) auditDownloads(f *flags) action {
	since := f.String("since", "30d", "period to audit: 30d, 12h or YYYY-MM-DD")
	threshold := f.Int("threshold", 3, "flag purchases fetched from more distinct addresses than this")
	return func(ctx context.Context) (any, error) {
		from, err := parseSince(*since, time.Now())
		if err != nil {
			return nil, err
		}
		return c.with(ctx, func(ctx context.Context, e *env) (any, error) {
			return e.billing.AuditDownloads(ctx, from, *threshold)
		})
	}
}

func (c *cli) billingStatement(f *flags) action {
	id := f.id("account")
	month := f.required("month", "YYYY-MM (UTC)", "--month is required (YYYY-MM)")
	return c.opened(func(ctx context.Context, e *env) (any, error) {
		return e.billing.MonthlyStatement(ctx, *id, *month)
	})
}
