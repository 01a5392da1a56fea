package main

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"

	"broll/billing"
	"broll/billing/billingtest"
)

func TestLegacyMigrateCustomers(t *testing.T) {
	t.Parallel()
	c := newCtl(t)
	ctx := context.Background()
	acct := c.mustRun(t, "account", "create", "--name", "Legacy Platform", "--source", "oldplat", "--credits", "100")
	id := acct["account_id"].(string)
	accountID := uuid.MustParse(id)
	vids := billingtest.Videos(t, c.pool, 2, "easy")
	svc := c.graph(t, 0).Billing
	buy := func(email string, video uuid.UUID) {
		t.Helper()
		b := billing.LegacyBuyer{AccountID: accountID, Source: "oldplat", CustomerEmail: email}
		if _, err := svc.LegacyPurchase(ctx, b, []uuid.UUID{video}); err != nil {
			t.Fatalf("legacy purchase for %q: %v", email, err)
		}
	}
	buy("ann@example.com", vids[0])
	buy("ann@example.com", vids[1])
	buy("bob@example.com", vids[0])
	buy("", vids[1]) // no email: nobody to make a key for

	first := c.mustRun(t, "legacy", "migrate-customers", "--account", id)
	if first["created"].(float64) != 2 || first["existing"].(float64) != 0 || first["root_key_id"] != acct["root_key_id"] {
		t.Fatalf("first run: %v", first)
	}
	customers := first["customers"].(map[string]any)
	if len(customers) != 2 {
		t.Fatalf("customers: %v", customers)
	}
	for _, email := range []string{"ann@example.com", "bob@example.com"} {
		k, ok := customers[email].(map[string]any)
		if !ok || !strings.HasPrefix(k["api_key"].(string), "dsk_") || k["created"] != true {
			t.Fatalf("%s: %v", email, customers[email])
		}
		var label, kind string
		var parent uuid.UUID
		if err := c.pool.QueryRow(ctx, `SELECT label, kind, parent_id FROM api_keys WHERE id = $1 AND account_id = $2`,
			k["key_id"], id).Scan(&label, &kind, &parent); err != nil {
			t.Fatal(err)
		}
		if label != email || kind != "customer" || parent.String() != acct["root_key_id"] {
			t.Fatalf("key of %s: label %q kind %q parent %s", email, label, kind, parent)
		}
	}

	// Idempotent: the same keys again, no secrets, nothing created.
	keys := c.count(t, "api_keys")
	code, again, stderr := c.run(t, "", "legacy", "migrate-customers", "--account", id)
	if code != 0 || again["created"].(float64) != 0 || again["existing"].(float64) != 2 {
		t.Fatalf("second run: %d %v %s", code, again, stderr)
	}
	for email, v := range again["customers"].(map[string]any) {
		k := v.(map[string]any)
		if _, shown := k["api_key"]; shown || k["key_id"] != customers[email].(map[string]any)["key_id"] {
			t.Fatalf("second run, %s: %v", email, k)
		}
	}
	if c.count(t, "api_keys") != keys {
		t.Fatal("a second run created keys")
	}

	// A late customer gets a key; a revoked one is not replaced.
	buy("cy@example.com", vids[0])
	bobKey := customers["bob@example.com"].(map[string]any)["key_id"].(string)
	if code, _, stderr := c.run(t, "", "key", "revoke", "--id", bobKey); code != 0 {
		t.Fatalf("revoke: %s", stderr)
	}
	code, third, _ := c.run(t, "", "legacy", "migrate-customers", "--account", id)
	got := third["customers"].(map[string]any)
	if code != 0 || third["created"].(float64) != 1 || got["cy@example.com"].(map[string]any)["created"] != true ||
		got["bob@example.com"].(map[string]any)["revoked"] != true {
		t.Fatalf("third run: %v", third)
	}

	for _, bad := range [][]string{
		{"legacy", "migrate-customers"},
		{"legacy", "migrate-customers", "--account", "nope"},
		{"legacy", "migrate-customers", "--account", "6f1c2a8e-8e53-4c1a-9d55-2f7f0c1f0a11"},
		{"legacy", "frob"},
	} {
		c.mustFail(t, "", bad...)
	}
}

// TestLegacyEnableDisable: the switch is per source, idempotent, printed as
// JSON, and an unknown source fails with a message.
func TestLegacyEnableDisable(t *testing.T) {
	t.Parallel()
	c := newCtl(t)
	acct := c.mustRun(t, "account", "create", "--name", "Old Platform", "--source", "v0plat")
	enabled := func() bool {
		var on bool
		if err := c.pool.QueryRow(context.Background(), `SELECT legacy_enabled FROM accounts WHERE source = 'v0plat'`).Scan(&on); err != nil {
			t.Fatal(err)
		}
		return on
	}
	if enabled() {
		t.Fatal("a new account is a v0 customer")
	}
	for _, step := range []struct {
		cmd  string
		want bool
	}{{"enable", true}, {"enable", true}, {"disable", false}, {"disable", false}} {
		code, out, stderr := c.run(t, "", "legacy", step.cmd, "--source", "v0plat")
		if code != 0 || out["legacy_enabled"] != step.want || out["source"] != "v0plat" || out["account_id"] != acct["account_id"] {
			t.Fatalf("legacy %s: %d %v %s", step.cmd, code, out, stderr)
		}
		if enabled() != step.want {
			t.Fatalf("legacy %s: stored %v", step.cmd, !step.want)
		}
	}
	c.mustFail(t, "unknown source", "legacy", "enable", "--source", "nobody")
	c.mustFail(t, "--source", "legacy", "enable")
}
