package api

import (
	"bytes"
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"

	"broll/billing/billingtest"
	"broll/clients/go/brollclient"
)

func (e *testEnv) putMedia(t *testing.T, videoID uuid.UUID, content []byte) {
	t.Helper()
	if _, err := e.media.Put(context.Background(), "clips/"+videoID.String()+"/full.avi", bytes.NewReader(content)); err != nil {
		t.Fatal(err)
	}
}

// open fetches a link (a download or media URL) through node n without a
// bearer key, as a browser or a download manager would.
func (e *testEnv) open(t *testing.T, n int, link string, header map[string]string) response {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	return e.sendUnchecked(t, n, "GET", u.RequestURI(), header, nil)
}

func TestPurchaseOverHTTP(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 3000})
	cust := acct.CustomerKey(t, e.pool, "alice")
	vids := billingtest.Videos(t, e.pool, 2, "medium")
	content := bytes.Repeat([]byte("0123456789"), 1000)
	e.putMedia(t, vids[0], content)

	t.Run("a bad body is 400 naming what is wrong", func(t *testing.T) {
		for body, want := range map[string]string{
			`{}`:                      "video_ids is required",
			`{"video_ids": []}`:       "1 to 50",
			`{"video_ids": ["nope"]}`: "not a UUID",
			`{"video_ids": "x"}`:      "video_ids must be of type array",
			`{"video_ids": ["` + vids[0].String() + `"], "expected_total": 1.234}`: "expected_total",
			`{"video_ids": ["` + vids[0].String() + `"], "source": "x"}`:           "unknown field",
			`{"video_ids": [`: "malformed JSON",
		} {
			if r := e.do(t, 0, "POST", "/api/v1/broll/purchase", cust.Secret, body); r.status != 400 || !strings.Contains(problemOf(t, r).Detail, want) {
				t.Errorf("%s: %d %s", body, r.status, r.raw)
			}
		}
	})

	quote := expect[brollclient.PurchaseResult](t, e.do(t, 0, "POST", "/api/v1/broll/purchase", cust.Secret, map[string]any{"video_ids": []string{vids[0].String()}, "dry_run": true}), 200)
	if quote.TotalCharged != 10 || !quote.DryRun {
		t.Fatalf("quote: %+v", quote)
	}
	bought := expect[brollclient.PurchaseResult](t, e.do(t, 0, "POST", "/api/v1/broll/purchase", cust.Secret, map[string]any{"video_ids": []string{vids[0].String()}, "expected_total": 10}), 200)
	if bought.TotalCharged != 10 || bought.Balance != 20 || bought.Currency != "USD" {
		t.Fatalf("purchase: %+v", bought)
	}
	line, link := bought.Purchases[0], downloadLink(bought.Purchases, 0)
	if line.AlreadyOwned || line.PricePaid != 10 || line.DownloadUrlExpiresAt == nil || line.PurchaseId == nil ||
		strings.Contains(link, cust.Secret) || !strings.HasPrefix(link, "http://api.test/api/v1/downloads/") {
		t.Fatalf("purchase line: %+v", line)
	}
	purchaseID := line.PurchaseId.String()

	t.Run("the link serves the file, whole and in ranges, and logs each fetch", func(t *testing.T) {
		if r := e.open(t, 0, link, map[string]string{"User-Agent": "test-agent"}); r.status != 200 || !bytes.Equal(r.raw, content) || r.header.Get("Accept-Ranges") != "bytes" {
			t.Fatalf("download: %d len %d", r.status, len(r.raw))
		}
		for _, c := range []struct {
			rng, body, contentRange string
			status                  int
		}{{"bytes=10-19", "0123456789", "bytes 10-19/10000", 206}, {"bytes=-5", "56789", "bytes 9995-9999/10000", 206}} {
			if r := e.open(t, 0, link, map[string]string{"Range": c.rng}); r.status != c.status || string(r.raw) != c.body || r.header.Get("Content-Range") != c.contentRange {
				t.Fatalf("range %s: %d %q %s", c.rng, r.status, r.raw, r.header.Get("Content-Range"))
			}
		}
		if r := e.open(t, 0, link, map[string]string{"Range": "bytes=20000-"}); r.status != 416 {
			t.Fatalf("unsatisfiable range: %d", r.status)
		}
		var logged int
		_ = e.pool.QueryRow(context.Background(), `SELECT count(*) FROM download_log WHERE user_agent = 'test-agent'`).Scan(&logged)
		if logged != 1 {
			t.Fatalf("download log rows: %d", logged)
		}
	})

	t.Run("tampering with any part of the link is 403", func(t *testing.T) {
		if !strings.Contains(link, purchaseID) {
			t.Fatalf("link %s does not name purchase %s", link, purchaseID)
		}
		for _, tampered := range []string{
			strings.Replace(link, "sig=", "sig=A", 1),
			strings.Replace(link, "exp=", "exp=9", 1),
			strings.Replace(link, purchaseID[:8], "00000000", 1),
			strings.Replace(link, "kv=", "kv=f", 1),
		} {
			if r := e.open(t, 0, tampered, nil); r.status != 403 || problemOf(t, r).Code != "forbidden" {
				t.Errorf("tampered link %s: %d %s", tampered, r.status, r.raw)
			}
		}
	})

	t.Run("a repeat purchase is free and gives a fresh link to the same purchase", func(t *testing.T) {
		again := e.buy(t, 0, cust.Secret, vids[0])
		if l := again.Purchases[0]; again.TotalCharged != 0 || !l.AlreadyOwned || l.PurchaseId == nil || l.PurchaseId.String() != purchaseID {
			t.Fatalf("repeat: %+v", again)
		}
	})

	t.Run("404 names unknown ids, 409 a wrong total, 402 the required and available", func(t *testing.T) {
		unknown := uuid.NewString()
		r := e.do(t, 0, "POST", "/api/v1/broll/purchase", cust.Secret, map[string]any{"video_ids": []string{vids[1].String(), unknown}})
		if r.status != 404 || !strings.Contains(string(r.raw), unknown) {
			t.Fatalf("unknown: %s", r.raw)
		}
		r = e.do(t, 0, "POST", "/api/v1/broll/purchase", cust.Secret, map[string]any{"video_ids": []string{vids[1].String()}, "expected_total": 9.99})
		if r.status != 409 || problemOf(t, r).Code != "price_changed" {
			t.Fatalf("price_changed: %s", r.raw)
		}
		if _, err := e.pool.Exec(context.Background(), `UPDATE tiers SET price_cents = 5000 WHERE name = 'medium'`); err != nil {
			t.Fatal(err)
		}
		r = e.do(t, 0, "POST", "/api/v1/broll/purchase", cust.Secret, map[string]any{"video_ids": []string{vids[1].String()}})
		if p := problemOf(t, r); r.status != 402 || p.Code != "insufficient_credits" || deref(p.Required) != 50 || deref(p.Available) != 20 {
			t.Fatalf("402: %s", r.raw)
		}
	})

	t.Run("the balance shows the pool and the month to date the key can see", func(t *testing.T) {
		b := expect[brollclient.Balance](t, e.do(t, 0, "GET", "/api/v1/balance", cust.Secret, nil), 200)
		if b.Balance != 20 || b.MonthToDate.Purchases != 1 || b.MonthToDate.Amount != 10 || b.Key.Kind != "customer" {
			t.Fatalf("balance: %+v", b)
		}
	})

	t.Run("revoking the key stops its links", func(t *testing.T) {
		if r := e.do(t, 0, "DELETE", "/api/v1/keys?id="+cust.ID.String(), acct.RootKey.Secret, nil); r.status != 200 {
			t.Fatal(r.status)
		}
		if r := e.open(t, 0, link, nil); r.status != 403 {
			t.Fatalf("link of a revoked key: %d", r.status)
		}
	})
}
