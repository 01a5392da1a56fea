package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"broll/billing/billingtest"
	"broll/internal/config"
	"broll/internal/testkit"
	"broll/internal/testkit/headless"
	"broll/wiring/wiringtest"
)

// TestDashboardInChromium drives the account dashboard in headless
// Chromium against a real API node: set the password from the operator's
// link, sign in, create a root key and copy it, use it on the API, create a
// customer key, buy with it, find the purchase on the Purchases page,
// revoke the customer key and see the API refuse it. Screenshots go to
// .artifacts/screenshots/ (git-ignored); with BROLL_DASHBOARD_DOCS=1 the
// overview and keys pages are also written to docs/ for docs/dashboard.md.
//
// It is skipped only where no Chromium exists; `make test` installs it.
func TestDashboardInChromium(t *testing.T) {
	chromium := headless.Find()
	if chromium == "" {
		t.Skip("no Chromium on this machine: apt-get install chromium (make test and make test-browser install it)")
	}
	pool, dbURL := testkit.NewPool(t)
	base := startNode(t, dbURL, testkit.Redis(t))
	d := seedDashboardAccount(t, pool, base)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	tab, closeTab := headless.NewTab(ctx, chromium)
	defer closeTab()
	shots := headless.NewShots(t, "dashboard-")

	// The operator's one-time link: choose the password, then sign in.
	do(t, tab, "set password",
		chromedp.Navigate(d.link),
		chromedp.WaitVisible(chromedp.CSS(`input[name="password"]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name="password"]`), browserPassword),
		chromedp.SendKeys(chromedp.CSS(`input[name="password_again"]`), browserPassword),
		chromedp.Submit(chromedp.CSS(`input[name="password"]`)),
		chromedp.WaitVisible(chromedp.CSS(`.notice`)),
	)
	expectText(t, tab, ".notice", "Your password is set")
	do(t, tab, "sign in",
		chromedp.SendKeys(chromedp.CSS(`input[name="email"]`), d.email),
		chromedp.SendKeys(chromedp.CSS(`input[name="password"]`), browserPassword),
		chromedp.Submit(chromedp.CSS(`input[name="password"]`)),
		chromedp.WaitVisible(chromedp.ID("balance")),
	)
	expectText(t, tab, "#balance", "$2,775.00") // $2,500 + $500 - $225 of history

	// Create a root key; the copy button puts it on the clipboard.
	if _, err := cdp.Call(ctx, chromedp.FromContext(tab).Browser, browser.SetPermission, browser.SetPermissionParams{
		Permission: &browser.PermissionDescriptor{Name: "clipboard-read"}, Setting: browser.PermissionSettingGranted, Origin: base,
	}); err != nil {
		t.Logf("clipboard-read permission: %v", err)
	}
	do(t, tab, "create a root key",
		chromedp.Navigate(base+"/dashboard/keys"),
		chromedp.WaitVisible(chromedp.ID("create-root")),
		chromedp.SendKeys(chromedp.CSS(`input[name="label"]`), "Production servers"),
		chromedp.Click(chromedp.ID("create-root")),
		chromedp.WaitVisible(chromedp.ID("new-key")),
	)
	shots.Take(t, tab, "key-created")
	shown := value(t, tab, "#new-key")
	do(t, tab, "copy the key",
		chromedp.Click(chromedp.CSS(`button[data-copy="new-key"]`)),
		chromedp.Poll[chromedp.Void](`document.querySelector('button[data-copy]').textContent === 'Copied'`),
	)
	rootKey, err := chromedp.Run(tab, chromedp.Evaluate[string](`navigator.clipboard.readText()`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("read the clipboard: %v", err)
	}
	if rootKey != shown || !strings.HasPrefix(rootKey, "dsk_") {
		t.Fatalf("clipboard %q, page shows %q", rootKey, shown)
	}
	if status, _ := call(t, base, "GET", "/api/v1/broll?limit=3", rootKey, ""); status != 200 {
		t.Fatalf("the copied root key on GET /api/v1/broll: %d", status)
	}

	// A customer key under the new root key, then a purchase with it.
	do(t, tab, "open the root key",
		chromedp.Click(chromedp.ID("done")),
		chromedp.WaitVisible(chromedp.ID("create-root")),
		chromedp.Click(chromedp.Search(`//a[strong[normalize-space(.)="Production servers"]]`)),
		chromedp.WaitVisible(chromedp.ID("create-customer")),
		chromedp.SendKeys(chromedp.CSS(`input[name="customer_label"]`), "Customer 42"),
		chromedp.Click(chromedp.ID("create-customer")),
		chromedp.WaitVisible(chromedp.ID("new-key")),
	)
	customerKey := value(t, tab, "#new-key")
	status, body := call(t, base, "POST", "/api/v1/broll/purchase", customerKey,
		fmt.Sprintf(`{"video_ids": [%q]}`, d.clips[0]))
	if status != 200 {
		t.Fatalf("purchase with the customer key: %d %s", status, body)
	}
	var bought struct {
		Purchases []struct {
			PurchaseID string `json:"purchase_id"`
		} `json:"purchases"`
	}
	if err := json.Unmarshal(body, &bought); err != nil || len(bought.Purchases) != 1 {
		t.Fatalf("purchase answer: %s", body)
	}
	purchase := fmt.Sprintf(`tr[data-purchase-id=%q]`, bought.Purchases[0].PurchaseID)
	do(t, tab, "see the purchase",
		chromedp.Navigate(base+"/dashboard/purchases"),
		chromedp.WaitVisible(chromedp.CSS(purchase)),
	)
	expectText(t, tab, purchase, d.titles[0])
	expectText(t, tab, purchase, "Customer 42")
	shots.Take(t, tab, "purchases")

	// The purchase's licence: its public verify page, reached from the
	// purchases page, and its PDF certificate, read back by poppler.
	if status, body := call(t, base, "PATCH", "/api/v1/keys?id="+customerID(t, base, rootKey, "Customer 42"), rootKey,
		`{"licensee_name": "Studio Forty-Two"}`); status != 200 {
		t.Fatalf("set the licensee name: %d %s", status, body)
	}
	do(t, tab, "open the licence's verify page",
		chromedp.Click(chromedp.CSS(purchase+` a.license-page`)),
		chromedp.WaitVisible(chromedp.CSS(`.badge.valid`)),
	)
	expectText(t, tab, "h1", d.titles[0])
	expectText(t, tab, "dl", "Studio Forty-Two")
	shots.Take(t, tab, "license")
	licenseID, err := chromedp.Run(tab, chromedp.Text(chromedp.ID("license-id")))
	if err != nil || !strings.HasPrefix(licenseID, "lic_") {
		t.Fatalf("the licence id on its page: %q, %v", licenseID, err)
	}
	status, pdf := call(t, base, "GET", "/api/v1/licenses/"+licenseID+".pdf", customerKey, "")
	if status != 200 {
		t.Fatalf("the certificate: %d %s", status, pdf)
	}
	shots.PDF(t, "license-certificate", pdf)

	// Revoke the customer key; the API refuses it at once.
	do(t, tab, "revoke the customer key",
		chromedp.Navigate(base+"/dashboard/keys"),
		chromedp.Click(chromedp.Search(`//a[strong[normalize-space(.)="Production servers"]]`)),
		chromedp.WaitVisible(chromedp.ID("create-customer")),
	)
	shots.Take(t, tab, "root-key")
	do(t, tab, "confirm the revocation",
		chromedp.Click(chromedp.Search(`//tr[td/strong[normalize-space(.)="Customer 42"]]//a[contains(@href, "/revoke")]`)),
		chromedp.WaitVisible(chromedp.ID("confirm-revoke")),
		chromedp.Click(chromedp.ID("confirm-revoke")),
		chromedp.WaitVisible(chromedp.CSS(".notice")),
	)
	expectText(t, tab, ".notice", "The key is revoked")
	if status, _ := call(t, base, "GET", "/api/v1/broll?limit=1", customerKey, ""); status != 401 {
		t.Fatalf("the revoked customer key on GET /api/v1/broll: %d", status)
	}
	if status, _ := call(t, base, "GET", "/api/v1/broll?limit=1", rootKey, ""); status != 200 {
		t.Fatalf("its root key after the revocation: %d", status)
	}

	// The pages docs/dashboard.md shows, and the rest for whoever looks.
	do(t, tab, "keys page", chromedp.Navigate(base+"/dashboard/keys"), chromedp.WaitVisible(chromedp.ID("create-root")))
	shots.Take(t, tab, "keys")
	do(t, tab, "balance page", chromedp.Navigate(base+"/dashboard/balance"), chromedp.WaitVisible(chromedp.CSS("table")))
	shots.Take(t, tab, "balance")
	do(t, tab, "overview", chromedp.Navigate(base+"/dashboard/"), chromedp.WaitVisible(chromedp.CSS(".chart rect")))
	shots.Take(t, tab, "overview")
	if os.Getenv("BROLL_DASHBOARD_DOCS") == "1" {
		shots.ToDocs(t, map[string]string{"overview": "dashboard-overview.png", "keys": "dashboard-keys.png",
			"license": "license-verify-page.png", "license-certificate": "license-certificate.png"})
	}
}

const browserPassword = "north wind blows twice"

// startNode runs the real node (run, as main does) on a free port and
// returns its base URL, which is also its BROLL_PUBLIC_URL.
func startNode(t *testing.T, dbURL string, rds testkit.Keyspace) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	env := map[string]string{
		"DATABASE_URL": dbURL, "REDIS_URL": rds.URL, "BROLL_REDIS_PREFIX": rds.Prefix, "BROLL_HTTP_ADDR": addr, "BROLL_PUBLIC_URL": "http://" + addr,
		"BROLL_MEDIA_DIR": t.TempDir(), "BROLL_SIGNING_KEY": config.GenerateSecret(), "BROLL_EMBED_PROVIDER": "builtin",
		"BROLL_METRICS_ADDR": "127.0.0.1:0",
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- run(ctx, func(k string) string { return env[k] }, io.Discard, ready) }()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("run: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("node not ready")
	}
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("node shutdown: %v", err)
		}
	})
	return "http://" + addr
}

type dashboardAccount struct {
	email  string
	link   string
	clips  []uuid.UUID
	titles []string
}

var clipTitles = []string{
	"Woman laughing behind the wheel", "Barista pours latte art", "Skater lands a kickflip at dusk",
	"Friends toast at a rooftop party", "Runner stretches by the river", "Chef shrugs at a burnt pan",
	"Kid unboxes a new bike", "Couple dances in the kitchen", "Commuter checks phone on the train",
	"Grandfather laughs at a video call",
}

// seedDashboardAccount opens an account with a month of history, so that
// the overview's charts have something to show, and a dashboard user with
// a one-time link.
func seedDashboardAccount(t *testing.T, pool *pgxpool.Pool, base string) dashboardAccount {
	t.Helper()
	ctx := context.Background()
	acct := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Name: "Northwind Media"})
	d := dashboardAccount{email: "ops@northwind.example", titles: clipTitles}
	now := time.Now().UTC()
	// The opening balance, a month ago, before the history below.
	if _, err := pool.Exec(ctx, `
		WITH l AS (INSERT INTO ledger (account_id, amount_cents, kind, note, created_at)
		           VALUES ($1, 250000, 'topup', 'opening balance', $2))
		UPDATE accounts SET balance_cents = balance_cents + 250000 WHERE id = $1`, acct.ID, now.AddDate(0, 0, -31)); err != nil {
		t.Fatal(err)
	}
	d.clips = billingtest.Videos(t, pool, len(clipTitles), "medium")
	for i, id := range d.clips {
		tier := []string{"easy", "medium", "hard"}[i%3]
		if _, err := pool.Exec(ctx, `UPDATE videos SET title = $2, difficulty = $3 WHERE id = $1`, id, clipTitles[i], tier); err != nil {
			t.Fatal(err)
		}
	}
	g := wiringtest.Over(t, pool)
	svc := g.Tenancy
	for c, label := range []string{"Acme Studio", "Brightline Ads", "Kite & Co"} {
		k := acct.CustomerKey(t, pool, label)
		// Purchases on past days, booked as the purchase statement books
		// them: the purchase, its ledger charge and the pool, together.
		for i := range 4 + 2*c {
			at := now.AddDate(0, 0, -((i*7 + c*5) % 29)).Add(-time.Duration(c+1) * time.Hour)
			if _, err := pool.Exec(ctx, `
				WITH p AS (
					INSERT INTO purchases (account_id, api_key_id, video_id, price_cents, tier, purchased_at)
					SELECT $1, $2, v.id, t.price_cents, v.difficulty, $4 FROM videos v JOIN tiers t ON t.name = v.difficulty
					WHERE v.id = $3 RETURNING id, price_cents, purchased_at
				), l AS (
					INSERT INTO ledger (account_id, amount_cents, kind, purchase_id, api_key_id, created_at)
					SELECT $1, -price_cents, 'purchase', id, $2, purchased_at FROM p
				)
				UPDATE accounts SET balance_cents = balance_cents - (SELECT price_cents FROM p) WHERE id = $1`,
				acct.ID, k.ID, d.clips[(i+c*3+1)%len(d.clips)], at); err != nil {
				t.Fatal(err)
			}
		}
		// Requests over the last day, as the usage flush writes them.
		var total int64
		for h := range 24 {
			n := int64((h*37+c*11)%50 + 10*c)
			total += n
			if _, err := pool.Exec(ctx, `INSERT INTO usage_hourly (api_key_id, hour, requests) VALUES ($1, $2, $3)`,
				k.ID, now.Truncate(time.Hour).Add(-time.Duration(h)*time.Hour), n); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := pool.Exec(ctx, `UPDATE api_keys SET total_requests = $2, last_used_at = $3 WHERE id = $1`,
			k.ID, total, now.Add(-time.Duration(c*17)*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := g.Billing.TopUp(ctx, acct.ID, 500_00, "invoice 2026-114"); err != nil {
		t.Fatal(err)
	}
	link, err := svc.CreateUser(ctx, acct.ID, d.email, time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	d.link = base + "/dashboard/set-password?token=" + url.QueryEscape(link.Token)
	return d
}

func do(t *testing.T, ctx context.Context, step string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, actions...); err != nil {
		loc, _ := chromedp.Run(ctx, chromedp.Location())
		t.Fatalf("%s: %v (page %s)", step, err, loc)
	}
}

func value(t *testing.T, ctx context.Context, css string) string {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(css)))
	if err != nil {
		t.Fatalf("value of %s: %v", css, err)
	}
	return v
}

func expectText(t *testing.T, ctx context.Context, css, want string) {
	t.Helper()
	got, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(css)))
	if err != nil || !strings.Contains(got, want) {
		t.Fatalf("%s: %q (%v), want it to contain %q", css, got, err, want)
	}
}

// call sends one request to the node's JSON API.
func call(t *testing.T, base, method, path, key, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return res.StatusCode, raw
}

// pdf renders the first page of a PDF to PNG with poppler's pdftoppm, as a
// screenshot of it.
// customerID is the id of the root key's customer key labelled label.
func customerID(t *testing.T, base, rootKey, label string) string {
	t.Helper()
	status, body := call(t, base, "GET", "/api/v1/keys?customer_label="+url.QueryEscape(label), rootKey, "")
	var list struct {
		Keys []struct {
			ID string `json:"id"`
		} `json:"keys"`
	}
	if status != 200 || json.Unmarshal(body, &list) != nil || len(list.Keys) != 1 {
		t.Fatalf("find the key %q: %d %s", label, status, body)
	}
	return list.Keys[0].ID
}
