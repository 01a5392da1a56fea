package api

import (
	"bytes"
	"context"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"

	"github.com/google/uuid"

	"broll/billing/billingtest"
	"broll/internal/config"
)

// buyLinks buys n clips (with media) for a fresh customer and returns their
// download links.
func (e *testEnv) buyLinks(t *testing.T, n int) []string {
	t.Helper()
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 100_000})
	cust := acct.CustomerKey(t, e.pool, "downloader")
	vids := billingtest.Videos(t, e.pool, n, "easy")
	links := make([]string, n)
	for i, v := range vids {
		e.putMedia(t, v, bytes.Repeat([]byte("0123456789"), 1000))
		links[i] = downloadLink(e.buy(t, 0, cust.Secret, v).Purchases, 0)
	}
	return links
}

type loggedFetch struct {
	sent      int64
	delivered *int64
}

func (e *testEnv) downloadLog(t *testing.T, link string) []loggedFetch {
	t.Helper()
	u, _ := url.Parse(link)
	id := uuid.MustParse(u.Path[len(u.Path)-36:])
	rows, err := e.pool.Query(context.Background(),
		`SELECT bytes_sent, bytes_delivered FROM download_log WHERE purchase_id = $1 ORDER BY id`, id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []loggedFetch
	for rows.Next() {
		var f loggedFetch
		if err := rows.Scan(&f.sent, &f.delivered); err != nil {
			t.Fatal(err)
		}
		out = append(out, f)
	}
	return out
}

func TestDownloadLog(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	link := e.buyLinks(t, 1)[0]

	t.Run("HEAD is not a download", func(t *testing.T) {
		u, _ := url.Parse(link)
		res, err := e.nodes[0].app.Test(httptest.NewRequest("HEAD", u.RequestURI(), nil), -1)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 || res.Header.Get("Content-Length") != "10000" {
			t.Fatalf("HEAD: %d, length %q", res.StatusCode, res.Header.Get("Content-Length"))
		}
		if got := e.downloadLog(t, link); len(got) != 0 {
			t.Fatalf("HEAD logged %d downloads", len(got))
		}
	})

	t.Run("bytes sent are logged", func(t *testing.T) {
		if r := e.open(t, 0, link, nil); r.status != 200 || len(r.raw) != 10_000 {
			t.Fatalf("GET: %d, %d bytes", r.status, len(r.raw))
		}
		if r := e.open(t, 0, link, map[string]string{"Range": "bytes=100-199"}); r.status != 206 || len(r.raw) != 100 {
			t.Fatalf("range: %d, %d bytes", r.status, len(r.raw))
		}
		got := e.downloadLog(t, link)
		if len(got) != 2 {
			t.Fatalf("%d downloads logged, want 2", len(got))
		}
		for i, want := range []int64{10_000, 100} {
			if got[i].sent != want || got[i].delivered == nil || *got[i].delivered != want {
				t.Errorf("fetch %d: sent %d, delivered %v, want %d", i, got[i].sent, got[i].delivered, want)
			}
		}
	})
}

func TestDownloadLimits(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{configure: func(c *config.Config) {
		c.DownloadsPerPurchasePerMinute, c.DownloadsPerAddressPerMinute = 3, 5
	}})
	links := e.buyLinks(t, 2)
	wantLimited := func(t *testing.T, what, link string) {
		t.Helper()
		r := e.open(t, 0, link, nil)
		if r.status != 429 {
			t.Fatalf("%s: %d %s, want 429", what, r.status, r.raw)
		}
		if secs, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || secs < 1 {
			t.Errorf("%s: Retry-After %q", what, r.header.Get("Retry-After"))
		}
	}
	for i := range 3 {
		if r := e.open(t, 0, links[0], nil); r.status != 200 {
			t.Fatalf("fetch %d of purchase 1: %d", i, r.status)
		}
	}
	wantLimited(t, "4th fetch of one purchase", links[0])
	if r := e.open(t, 0, links[1], nil); r.status != 200 {
		t.Fatalf("another purchase from the same address: %d", r.status)
	}
	wantLimited(t, "6th fetch from one address", links[1])
	if got := len(e.downloadLog(t, links[0])) + len(e.downloadLog(t, links[1])); got != 4 {
		t.Errorf("%d downloads logged, want the 4 served", got)
	}
}
