package api

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"

	"broll/billing/billingtest"
)

func (e *testEnv) putMedia(t *testing.T, videoID uuid.UUID, content []byte) {
	t.Helper()
	if _, err := e.media.Put(context.Background(), "clips/"+videoID.String()+"/full.avi", bytes.NewReader(content)); err != nil {
		t.Fatal(err)
	}
}

// get fetches a URL (a download link) through node n without a bearer key.
func (e *testEnv) get(t *testing.T, n int, link string, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest("GET", u.RequestURI(), nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := e.nodes[n].app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res, body
}

func TestPurchaseOverHTTP(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 3000})
	cust := acct.CustomerKey(t, e.pool, "alice")
	vids := billingtest.Videos(t, e.pool, 2, "medium")
	content := bytes.Repeat([]byte("0123456789"), 1000)
	e.putMedia(t, vids[0], content)

	bad := []struct {
		body any
		want string
	}{
		{map[string]any{}, "video_ids is required"},
		{map[string]any{"video_ids": []string{}}, "1 to 50"},
		{map[string]any{"video_ids": []string{"nope"}}, "not a UUID"},
		{map[string]any{"video_ids": "x"}, "video_ids must be of type array"},
		{map[string]any{"video_ids": []string{vids[0].String()}, "expected_total": 1.234}, "expected_total"},
		{map[string]any{"video_ids": []string{vids[0].String()}, "source": "x"}, "unknown field"},
		{`{"video_ids": [`, "malformed JSON"},
	}
	for _, b := range bad {
		r := e.do(t, 0, "POST", "/api/v1/broll/purchase", cust.Secret, b.body)
		if r.status != 400 || !strings.Contains(r.str("detail"), b.want) {
			t.Errorf("%v: %d %s", b.body, r.status, r.raw)
		}
	}

	quote := e.do(t, 0, "POST", "/api/v1/broll/purchase", cust.Secret, map[string]any{"video_ids": []string{vids[0].String()}, "dry_run": true})
	if quote.status != 200 || quote.body["total_charged"].(float64) != 10 || quote.body["dry_run"] != true {
		t.Fatalf("quote: %s", quote.raw)
	}
	r := e.do(t, 0, "POST", "/api/v1/broll/purchase", cust.Secret, map[string]any{"video_ids": []string{vids[0].String()}, "expected_total": 10})
	if r.status != 200 || r.body["total_charged"].(float64) != 10 || r.body["balance"].(float64) != 20 || r.body["currency"] != "USD" {
		t.Fatalf("purchase: %s", r.raw)
	}
	line := r.body["purchases"].([]any)[0].(map[string]any)
	link := line["download_url"].(string)
	if line["already_owned"] != false || line["price_paid"].(float64) != 10 || line["download_url_expires_at"] == nil ||
		strings.Contains(link, cust.Secret) || !strings.HasPrefix(link, "http://api.test/api/v1/downloads/") {
		t.Fatalf("purchase line: %v", line)
	}

	// The link serves the file, whole and in ranges, and logs each fetch.
	res, body := e.get(t, 0, link, map[string]string{"User-Agent": "test-agent"})
	if res.StatusCode != 200 || !bytes.Equal(body, content) || res.Header.Get("Accept-Ranges") != "bytes" {
		t.Fatalf("download: %d len %d", res.StatusCode, len(body))
	}
	res, body = e.get(t, 0, link, map[string]string{"Range": "bytes=10-19"})
	if res.StatusCode != 206 || string(body) != "0123456789" || res.Header.Get("Content-Range") != "bytes 10-19/10000" {
		t.Fatalf("range: %d %q %s", res.StatusCode, body, res.Header.Get("Content-Range"))
	}
	res, body = e.get(t, 0, link, map[string]string{"Range": "bytes=-5"})
	if res.StatusCode != 206 || string(body) != "56789" {
		t.Fatalf("suffix range: %d %q", res.StatusCode, body)
	}
	if res, _ := e.get(t, 0, link, map[string]string{"Range": "bytes=20000-"}); res.StatusCode != 416 {
		t.Fatalf("unsatisfiable range: %d", res.StatusCode)
	}
	var logged int
	_ = e.pool.QueryRow(context.Background(), `SELECT count(*) FROM download_log WHERE user_agent = 'test-agent'`).Scan(&logged)
	if logged != 1 {
		t.Fatalf("download log rows: %d", logged)
	}

	// Tampering with any part is 403.
	if !strings.Contains(link, line["purchase_id"].(string)) {
		t.Fatalf("link %s does not name purchase %s", link, line["purchase_id"])
	}
	for _, tampered := range []string{
		strings.Replace(link, "sig=", "sig=A", 1),
		strings.Replace(link, "exp=", "exp=9", 1),
		strings.Replace(link, line["purchase_id"].(string)[:8], "00000000", 1),
		strings.Replace(link, "kv=", "kv=f", 1),
	} {
		if res, body := e.get(t, 0, tampered, nil); res.StatusCode != 403 || !strings.Contains(string(body), `"code":"forbidden"`) {
			t.Errorf("tampered link %s: %d %s", tampered, res.StatusCode, body)
		}
	}

	// A repeat purchase is free and gives a fresh link to the same purchase.
	again := e.do(t, 0, "POST", "/api/v1/broll/purchase", cust.Secret, map[string]any{"video_ids": []string{vids[0].String()}})
	againLine := again.body["purchases"].([]any)[0].(map[string]any)
	if again.body["total_charged"].(float64) != 0 || againLine["already_owned"] != true || againLine["purchase_id"] != line["purchase_id"] {
		t.Fatalf("repeat: %s", again.raw)
	}

	// 404 naming unknown ids, 402 with required/available, 409 on a wrong total.
	unknown := uuid.NewString()
	r = e.do(t, 0, "POST", "/api/v1/broll/purchase", cust.Secret, map[string]any{"video_ids": []string{vids[1].String(), unknown}})
	if r.status != 404 || !strings.Contains(string(r.raw), unknown) {
		t.Fatalf("unknown: %s", r.raw)
	}
	r = e.do(t, 0, "POST", "/api/v1/broll/purchase", cust.Secret, map[string]any{"video_ids": []string{vids[1].String()}, "expected_total": 9.99})
	if r.status != 409 || r.str("code") != "price_changed" {
		t.Fatalf("price_changed: %s", r.raw)
	}
	if _, err := e.pool.Exec(context.Background(), `UPDATE tiers SET price_cents = 5000 WHERE name = 'medium'`); err != nil {
		t.Fatal(err)
	}
	r = e.do(t, 0, "POST", "/api/v1/broll/purchase", cust.Secret, map[string]any{"video_ids": []string{vids[1].String()}})
	if r.status != 402 || r.str("code") != "insufficient_credits" || r.body["required"].(float64) != 50 || r.body["available"].(float64) != 20 {
		t.Fatalf("402: %s", r.raw)
	}

	// Balance: the pool and the month-to-date spend the key can see.
	b := e.do(t, 0, "GET", "/api/v1/balance", cust.Secret, nil)
	mtd := b.body["month_to_date"].(map[string]any)
	if b.status != 200 || b.body["balance"].(float64) != 20 || mtd["purchases"].(float64) != 1 || mtd["amount"].(float64) != 10 ||
		b.body["key"].(map[string]any)["kind"] != "customer" {
		t.Fatalf("balance: %s", b.raw)
	}

	// Revoking the key stops its links.
	if r := e.do(t, 0, "DELETE", "/api/v1/keys?id="+cust.ID.String(), acct.RootKey.Secret, nil); r.status != 200 {
		t.Fatal(r.status)
	}
	if res, _ := e.get(t, 0, link, nil); res.StatusCode != 403 {
		t.Fatalf("link of a revoked key: %d", res.StatusCode)
	}
}
