package main

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"broll/billing"

	"broll/billing/billingtest"
	"broll/internal/config"
	"broll/wiring/wiringtest"
)

// license show prints the signed licence; license revoke revokes it once,
// writes license.revoked, and refuses a second time; both need the signing
// secret the API nodes have.
func TestLicenseCommands(t *testing.T) {
	t.Parallel()
	c := newCtl(t)
	ctx := context.Background()
	acct := billingtest.NewAccount(t, c.pool, billingtest.AccountOpts{Credits: 10_000})
	cust := acct.CustomerKey(t, c.pool, "buyer")
	vid := billingtest.Videos(t, c.pool, 1, "easy")[0]
	res, err := wiringtest.Over(t, c.pool).Billing.Purchase(ctx, billingtest.Principal(acct, cust), billing.PurchaseRequest{VideoIDs: []uuid.UUID{vid}})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Purchases[0].LicenseID

	c.mustFail(t, "set BROLL_SIGNING_KEY", "license", "show", "--id", id)
	c.env["BROLL_SIGNING_KEY"] = config.GenerateSecret()
	shown := c.mustRun(t, "license", "show", "--id", id)
	lic := shown["license"].(map[string]any)
	if lic["license_id"] != id || lic["status"] != "active" || shown["jws"] == "" {
		t.Fatalf("license show: %v", shown)
	}
	c.mustFail(t, "--id and --reason are required", "license", "revoke", "--id", id)
	revoked := c.mustRun(t, "license", "revoke", "--id", id, "--reason", "found on a stock site")
	if lic := revoked["license"].(map[string]any); lic["status"] != "revoked" || lic["revoked_reason"] != "found on a stock site" || revoked["valid"] != false {
		t.Fatalf("license revoke: %v", revoked)
	}
	c.mustFail(t, "revoked before", "license", "revoke", "--id", id, "--reason", "again")
	c.mustFail(t, "licence not found", "license", "show", "--id", "lic_00000000000000000000000000000000")
	c.mustFail(t, "licence not found", "license", "revoke", "--id", "nope", "--reason", "x")
	var events int
	if err := c.pool.QueryRow(ctx, `SELECT count(*) FROM webhook_events WHERE type = 'license.revoked'
		AND data->'license'->>'id' = $1 AND data->'key'->>'id' = $2`, id, cust.ID.String()).Scan(&events); err != nil || events != 1 {
		t.Fatalf("license.revoked events: %d (%v)", events, err)
	}
}
