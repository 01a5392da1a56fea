package main

import (
	"context"
	"errors"

	"broll/billing/license"
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
