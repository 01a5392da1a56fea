package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"broll/billing"
	"broll/billing/billingtest"
	"broll/billing/license"
	"broll/wiring"
)

// `license prune-stamped` removes the stamped copies of purchases older
// than the period, file and record, and keeps the recent ones and those
// remade within the period.
func TestLicensePruneStamped(t *testing.T) {
	t.Parallel()
	c := newCtl(t)
	ctx := context.Background()
	g := c.graph(t, wiring.CLIParts)
	acct := billingtest.NewAccount(t, c.pool, billingtest.AccountOpts{Credits: 10_000})
	buyer := billingtest.Principal(acct, acct.CustomerKey(t, c.pool, "buyer"))
	res, err := g.Billing.Purchase(ctx, buyer, billing.PurchaseRequest{VideoIDs: billingtest.Videos(t, c.pool, 3, "medium")})
	if err != nil || len(res.Purchases) != 3 {
		t.Fatalf("purchase: %+v, %v", res, err)
	}
	// old: bought and stamped 100 days ago; remade: bought then, stamped
	// again today; recent: bought and stamped today.
	age := map[string][2]string{"old": {"100 days", "100 days"}, "remade": {"100 days", "0 days"}, "recent": {"0 days", "0 days"}}
	keys := map[string]string{}
	i := 0
	for name, a := range age {
		p := res.Purchases[i]
		i++
		key := license.StampKey(p.LicenseID, "clips/x/full.mp4")
		keys[name] = key
		path := filepath.Join(c.env["BROLL_MEDIA_DIR"], filepath.FromSlash(key))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("stamped "+name), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := c.pool.Exec(ctx, `UPDATE purchases SET purchased_at = now() - $2::interval WHERE id = $1`, p.PurchaseID, a[0]); err != nil {
			t.Fatal(err)
		}
		if _, err := c.pool.Exec(ctx, `INSERT INTO license_stamps (purchase_id, source_key, media_key, bytes, stamped_at)
			SELECT $1, v.media_key, $2, $3, now() - $4::interval FROM purchases p JOIN videos v ON v.id = p.video_id WHERE p.id = $1`,
			p.PurchaseID, key, len("stamped "+name), a[1]); err != nil {
			t.Fatal(err)
		}
	}
	c.mustFail(t, "--older-than", "license", "prune-stamped", "--older-than", "soon")
	out := c.mustRun(t, "license", "prune-stamped", "--older-than", "90d")
	if out["removed"] != 1.0 || out["bytes"] != float64(len("stamped old")) {
		t.Fatalf("prune: %v", out)
	}
	for name, key := range keys {
		_, statErr := os.Stat(filepath.Join(c.env["BROLL_MEDIA_DIR"], filepath.FromSlash(key)))
		var n int
		if err := c.pool.QueryRow(ctx, `SELECT count(*) FROM license_stamps WHERE media_key = $1`, key).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if kept := name != "old"; kept != (statErr == nil) || kept != (n == 1) {
			t.Fatalf("%s copy: file %v, %d records; kept should be %v", name, statErr, n, kept)
		}
	}
	if out := c.mustRun(t, "license", "prune-stamped"); out["removed"] != 0.0 {
		t.Fatalf("second prune: %v", out)
	}
}
