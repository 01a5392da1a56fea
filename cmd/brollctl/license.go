package main

import (
	"context"
	"errors"
	"time"

	"broll/billing/license"
	"broll/internal/apperr"
)

// licenseShow prints a licence's signed document, as its holder gets it.
func (c *cli) licenseShow(f *flags) action {
	id := f.required("id", "the licence id (lic_...)", "--id is required")
	return c.opened(func(ctx context.Context, e *env) (any, error) {
		lic, err := e.licenseService()
		if err != nil {
			return nil, err
		}
		return lic.Show(ctx, *id)
	})
}

// licenseRevoke revokes a licence (a redistribution case found by the
// audit, say): its verify page says revoked from now on, and
// license.revoked goes to the endpoints of its key's root.
func (c *cli) licenseRevoke(f *flags) action {
	id := f.required("id", "the licence id (lic_...)", "--id and --reason are required")
	reason := f.required("reason", "why, as the holder's document will say", "--id and --reason are required")
	return c.opened(func(ctx context.Context, e *env) (any, error) {
		lic, err := e.licenseService()
		if err != nil {
			return nil, err
		}
		return lic.Revoke(ctx, *id, *reason)
	})
}

func (e *env) licenseService() (*license.Service, error) {
	if e.licenses == nil {
		return nil, errors.New("licences are signed: set BROLL_SIGNING_KEY (or BROLL_LICENSE_SIGNING_KEY) as the API nodes have it")
	}
	return e.licenses, nil
}

// licensePruneStamped removes the licence-stamped copies of purchases older
// than the period (and not remade within it): the retention rule of
// docs/operations.md. Their next download serves the original and asks the
// worker for the copy again.
func (c *cli) licensePruneStamped(f *flags) action {
	older := f.String("older-than", "90d", "remove the copies of purchases older than this: 90d, 720h or YYYY-MM-DD")
	return func(ctx context.Context) (any, error) {
		cutoff, err := parseSince(*older, time.Now())
		if err != nil {
			return nil, apperr.InvalidField("older-than", "--older-than %q is not a period (90d, 720h) or a date (YYYY-MM-DD)", *older)
		}
		return c.with(ctx, func(ctx context.Context, e *env) (any, error) {
			res, err := e.stamps.PruneStamped(ctx, cutoff)
			if err != nil {
				return nil, err
			}
			return map[string]any{"removed": res.Removed, "bytes": res.Bytes, "older_than": cutoff.UTC().Format(time.RFC3339)}, nil
		})
	}
}
