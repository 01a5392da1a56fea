package main

import (
	"context"
	"flag"
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

func (c *cli) auditDownloads(ctx context.Context, args []string) (any, error) {
	var since string
	var threshold int
	if _, err := c.flags("audit downloads", args, 0, func(fs *flag.FlagSet) {
		fs.StringVar(&since, "since", "30d", "period to audit: 30d, 12h or YYYY-MM-DD")
		fs.IntVar(&threshold, "threshold", 3, "flag purchases fetched from more distinct addresses than this")
	}); err != nil {
		return nil, err
	}
	from, err := parseSince(since, time.Now())
	if err != nil {
		return nil, err
	}
	return c.with(ctx, func(e *env) (any, error) {
		return e.billing.AuditDownloads(ctx, from, threshold)
	})
}

func (c *cli) billingStatement(ctx context.Context, args []string) (any, error) {
	var month string
	id, err := c.idFlags("billing statement", args, "account", func(fs *flag.FlagSet) {
		fs.StringVar(&month, "month", "", "YYYY-MM (UTC)")
	})
	if err != nil {
		return nil, err
	}
	if month == "" {
		return nil, usageErr("--month is required (YYYY-MM)")
	}
	return c.with(ctx, func(e *env) (any, error) {
		return e.billing.MonthlyStatement(ctx, id, month)
	})
}
