package dashboard_test

import (
	"context"
	"encoding/csv"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestPagesAreAccountScoped: each page shows the signed-in account's rows
// only, and another account's key or purchase ids answer 404, as unknown
// ones do, changing nothing.
func TestPagesAreAccountScoped(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	ctx := context.Background()
	mine := e.tenant(t, "Mine Co", 10000)
	theirs := e.tenant(t, "Theirs Co", 20000)
	vids := e.videos(t, "easy", "Woman laughing in a car", "Secret rival clip")
	e.buy(t, mine.Customer.Secret, vids[0])
	e.buy(t, theirs.Customer.Secret, vids[1])
	if _, err := e.pool.Exec(ctx, `INSERT INTO ledger (account_id, amount_cents, kind, note) VALUES ($1, 1, 'adjustment', 'rival adjustment')`, theirs.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.pool.Exec(ctx, `UPDATE accounts SET balance_cents = balance_cents + 1 WHERE id = $1`, theirs.ID); err != nil {
		t.Fatal(err)
	}
	b := e.signedIn(t, mine)
	theirRoot, theirCustomer := theirs.RootKey.ID.String(), theirs.Customer.ID.String()
	var theirPurchase string
	if err := e.pool.QueryRow(ctx, `SELECT id FROM purchases WHERE account_id = $1`, theirs.ID).Scan(&theirPurchase); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		method, path string
		status       int
	}{
		{"GET", "/dashboard/keys/" + theirRoot, 404},
		{"GET", "/dashboard/keys/" + theirCustomer, 404},
		{"GET", "/dashboard/keys/" + mine.Customer.ID.String(), 404}, // a customer key has no page of its own
		{"GET", "/dashboard/keys/" + theirRoot + "/revoke", 404},
		{"GET", "/dashboard/keys/" + theirCustomer + "/revoke", 404},
		{"POST", "/dashboard/keys/" + theirRoot + "/revoke", 404},
		{"POST", "/dashboard/keys/" + theirCustomer + "/revoke", 404},
		{"POST", "/dashboard/keys/" + theirRoot + "/customers", 404},
		{"GET", "/dashboard/keys/" + theirPurchase, 404},
		{"GET", "/dashboard/purchases?api_key_id=" + theirCustomer, 404},
		{"GET", "/dashboard/purchases.csv?api_key_id=" + theirCustomer, 404},
		{"GET", "/dashboard/keys/not-a-uuid", 404},
		{"POST", "/dashboard/keys/not-a-uuid/revoke", 404},
		{"GET", "/dashboard/keys/00000000-0000-0000-0000-000000000000", 404},
		{"GET", "/dashboard/purchases?api_key_id=not-a-uuid", 400},
		{"GET", "/dashboard/purchases?start_date=2026-13-01", 400},
		{"GET", "/dashboard/purchases?start_date=2026-02-01&end_date=2026-01-01", 400},
		{"GET", "/dashboard/purchases.csv?end_date=yesterday", 400},
		{"GET", "/dashboard/purchases?page=0", 400},
		{"GET", "/dashboard/nowhere", 404},
	}
	for _, c := range cases {
		var p page
		if c.method == "POST" {
			p = b.post(t, "/dashboard/keys", c.path, url.Values{"customer_label": {"intruder"}})
		} else {
			p = b.get(t, c.path)
		}
		if p.status != c.status {
			t.Errorf("%s %s: %d, want %d", c.method, c.path, p.status, c.status)
		}
		if !strings.HasPrefix(p.header.Get("Content-Type"), "text/html") || !strings.Contains(p.body, "<h1>") {
			t.Errorf("%s %s: not an HTML page: %q", c.method, c.path, p.header.Get("Content-Type"))
		}
		if strings.Contains(p.body, "Theirs Co") || strings.Contains(p.body, "Secret rival") {
			t.Errorf("%s %s reveals the other account", c.method, c.path)
		}
	}
	// Nothing of theirs changed.
	if s := e.api(t, "GET", "/api/v1/pricing", theirs.Customer.Secret, ""); s != 200 {
		t.Fatalf("their customer key after the refused revoke: %d", s)
	}
	if s := e.api(t, "GET", "/api/v1/pricing", theirs.RootKey.Secret, ""); s != 200 {
		t.Fatalf("their root key after the refused revoke: %d", s)
	}
	var n int
	_ = e.pool.QueryRow(ctx, `SELECT count(*) FROM api_keys WHERE label = 'intruder'`).Scan(&n)
	if n != 0 {
		t.Fatal("a customer key was created under another account's root key")
	}

	// Lists never show the other account's rows.
	lists := map[string][]string{
		"/dashboard/":     {"$95.00", "$5.00"},
		"/dashboard/keys": {"Mine Co", "root"},
		"/dashboard/keys/" + mine.RootKey.ID.String(): {"Mine Co customer"},
		"/dashboard/purchases":                        {"Woman laughing in a car", "$5.00"},
		"/dashboard/balance":                          {"$95.00", "$100.00", "Woman laughing in a car"},
		"/dashboard/purchases.csv":                    {"Woman laughing in a car"},
	}
	for path, wants := range lists {
		p := b.get(t, path)
		if p.status != 200 {
			t.Errorf("%s: %d", path, p.status)
			continue
		}
		for _, w := range wants {
			if !strings.Contains(p.body, w) {
				t.Errorf("%s lacks %q", path, w)
			}
		}
		for _, leak := range []string{"Theirs Co", "Secret rival", "rival adjustment", "$200.00", theirCustomer, theirRoot, theirPurchase} {
			if strings.Contains(p.body, leak) {
				t.Errorf("%s shows the other account's %q", path, leak)
			}
		}
	}
}

var secretRe = regexp.MustCompile(`id="new-key" value="(dsk_[0-9A-Za-z]+)"`)

// TestKeysPages: a root key created on the page works on the API at once;
// a customer key made under it too; revoking them (after a confirmation
// that says what goes with a root key) refuses them at once.
func TestKeysPages(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	tn := e.tenant(t, "Keys Co", 10000)
	b := e.signedIn(t, tn)

	p := b.post(t, "/dashboard/keys", "/dashboard/keys", url.Values{"label": {"production servers"}})
	m := secretRe.FindStringSubmatch(p.body)
	if p.status != http.StatusCreated || m == nil || !strings.Contains(p.body, "shown only this once") ||
		p.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("create root key: %d %q %.500s", p.status, p.header.Get("Cache-Control"), p.body)
	}
	root := m[1]
	if s := e.api(t, "GET", "/api/v1/keys", root, ""); s != 200 {
		t.Fatalf("new root key on the API: %d", s)
	}
	keys := b.get(t, "/dashboard/keys")
	if !strings.Contains(keys.body, "production servers") || strings.Contains(keys.body, root) {
		t.Fatalf("keys page: lists the key %v, shows its secret %v", strings.Contains(keys.body, "production servers"), strings.Contains(keys.body, root))
	}
	var rootID string
	if err := e.pool.QueryRow(context.Background(), `SELECT id FROM api_keys WHERE label = 'production servers'`).Scan(&rootID); err != nil {
		t.Fatal(err)
	}
	// Usage shows on the page: two API calls with the new key.
	e.api(t, "GET", "/api/v1/pricing", root, "")
	rootPage := b.get(t, "/dashboard/keys/"+rootID)
	if rootPage.status != 200 || !regexp.MustCompile(`(?s)2\s+requests`).MatchString(rootPage.body) {
		t.Fatalf("root key page: %d, usage not shown: %.2000s", rootPage.status, rootPage.body)
	}

	p = b.post(t, "/dashboard/keys/"+rootID, "/dashboard/keys/"+rootID+"/customers", url.Values{"customer_label": {"customer 42"}})
	m = secretRe.FindStringSubmatch(p.body)
	if p.status != http.StatusCreated || m == nil {
		t.Fatalf("create customer key: %d %.300s", p.status, p.body)
	}
	cust := m[1]
	if s := e.api(t, "GET", "/api/v1/broll", cust, ""); s != 200 {
		t.Fatalf("new customer key on the API: %d", s)
	}
	if s := e.api(t, "GET", "/api/v1/keys", cust, ""); s != 403 {
		t.Fatalf("customer key managing keys: %d", s)
	}
	if p := b.post(t, "/dashboard/keys/"+rootID, "/dashboard/keys/"+rootID+"/customers", url.Values{"customer_label": {"  "}}); p.status != 400 {
		t.Fatalf("blank label: %d", p.status)
	}
	var custID string
	if err := e.pool.QueryRow(context.Background(), `SELECT id FROM api_keys WHERE label = 'customer 42'`).Scan(&custID); err != nil {
		t.Fatal(err)
	}

	// Revoking a customer key: only that key stops.
	confirm := b.get(t, "/dashboard/keys/"+custID+"/revoke")
	if confirm.status != 200 || !strings.Contains(confirm.body, "cannot be undone") {
		t.Fatalf("customer revoke confirmation: %d", confirm.status)
	}
	p = b.post(t, "/dashboard/keys/"+custID+"/revoke", "/dashboard/keys/"+custID+"/revoke", nil)
	if p.status != http.StatusSeeOther || p.location() != "/dashboard/keys/"+rootID+"?m=revoked" {
		t.Fatalf("revoke customer key: %d %q", p.status, p.location())
	}
	if s := e.api(t, "GET", "/api/v1/broll", cust, ""); s != 401 {
		t.Fatalf("revoked customer key: %d", s)
	}
	if s := e.api(t, "GET", "/api/v1/broll", root, ""); s != 200 {
		t.Fatalf("its root key: %d", s)
	}
	if p := b.get(t, "/dashboard/keys/"+rootID+"?m=revoked"); !strings.Contains(p.body, "The key is revoked") || !strings.Contains(p.body, "revoked 20") {
		t.Fatalf("root page after the revoke lacks the notice or the revoked badge")
	}

	// Revoking a root key says that its customer keys go too, and they do.
	second := b.post(t, "/dashboard/keys/"+rootID, "/dashboard/keys/"+rootID+"/customers", url.Values{"customer_label": {"customer 43"}})
	cust2 := secretRe.FindStringSubmatch(second.body)[1]
	confirm = b.get(t, "/dashboard/keys/"+rootID+"/revoke")
	if !strings.Contains(confirm.body, "Its customer keys go too") || !strings.Contains(confirm.body, "1 live customer key is revoked with it") {
		t.Fatalf("root revoke confirmation: %.1500s", confirm.body)
	}
	p = b.post(t, "/dashboard/keys/"+rootID+"/revoke", "/dashboard/keys/"+rootID+"/revoke", nil)
	if p.status != http.StatusSeeOther || p.location() != "/dashboard/keys?m=revoked" {
		t.Fatalf("revoke root key: %d %q", p.status, p.location())
	}
	for name, k := range map[string]string{"root": root, "its customer key": cust2} {
		if s := e.api(t, "GET", "/api/v1/pricing", k, ""); s != 401 {
			t.Errorf("%s after revoking the root: %d", name, s)
		}
	}
	if s := e.api(t, "GET", "/api/v1/pricing", tn.RootKey.Secret, ""); s != 200 {
		t.Fatalf("another root key of the account: %d", s)
	}
	// A revoked root key takes no new customer keys; revoking again is harmless.
	if p := b.post(t, "/dashboard/keys", "/dashboard/keys/"+rootID+"/customers", url.Values{"customer_label": {"late"}}); p.status != 400 {
		t.Fatalf("customer key under a revoked root: %d", p.status)
	}
	if p := b.get(t, "/dashboard/keys/"+rootID+"/revoke"); !strings.Contains(p.body, "was revoked on") {
		t.Fatalf("revoke page of a revoked key: %.300s", p.body)
	}
}

// TestPurchasesPageAndCSV: the page's total covers the whole filter like
// summary.total_amount; the CSV holds every row of the filter, and its
// prices add up to that total.
func TestPurchasesPageAndCSV(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	ctx := context.Background()
	tn := e.tenant(t, "Csv Co", 100000)
	titles := make([]string, 60)
	for i := range titles {
		titles[i] = "Clip number " + strings.Repeat("i", i%5+1)
	}
	titles[0] = "=HYPERLINK(\"http://evil.example\")"
	vids := e.videos(t, "medium", titles...)
	e.buy(t, tn.Customer.Secret, vids[:50]...) // 50 ids per purchase at most
	e.buy(t, tn.Customer.Secret, vids[50:55]...)
	e.buy(t, tn.RootKey.Secret, vids[55:]...)
	// Five of the customer's purchases were last month.
	lastMonth := time.Now().UTC().AddDate(0, -1, 0)
	if _, err := e.pool.Exec(ctx, `UPDATE purchases SET purchased_at = $2 WHERE id IN (
		SELECT id FROM purchases WHERE api_key_id = $1 ORDER BY id LIMIT 5)`, tn.Customer.ID, lastMonth); err != nil {
		t.Fatal(err)
	}
	b := e.signedIn(t, tn)

	p := b.get(t, "/dashboard/purchases")
	if p.status != 200 || !strings.Contains(p.body, "60 purchases") || !strings.Contains(p.body, `id="period-total">$600.00`) ||
		!strings.Contains(p.body, "page 1 of 2") {
		t.Fatalf("purchases page: %d %.3000s", p.status, p.body)
	}
	if n := strings.Count(p.body, "data-purchase-id="); n != 50 {
		t.Fatalf("first page shows %d rows, want 50", n)
	}
	if p2 := b.get(t, "/dashboard/purchases?page=2"); strings.Count(p2.body, "data-purchase-id=") != 10 {
		t.Fatal("second page does not hold the other 10")
	}
	today := time.Now().UTC().Format("2006-01-02")
	filter := "?api_key_id=" + tn.Customer.ID.String() + "&start_date=" + time.Now().UTC().AddDate(0, 0, -1).Format("2006-01-02") + "&end_date=" + today
	p = b.get(t, "/dashboard/purchases"+filter)
	if !strings.Contains(p.body, "50 purchases") || !strings.Contains(p.body, `id="period-total">$500.00`) {
		t.Fatalf("filtered page: %.2000s", p.body)
	}
	if !strings.Contains(p.body, `href="/dashboard/purchases.csv?`+strings.ReplaceAll(url.Values{
		"api_key_id": {tn.Customer.ID.String()}, "start_date": {time.Now().UTC().AddDate(0, 0, -1).Format("2006-01-02")}, "end_date": {today},
	}.Encode(), "&", "&amp;")) {
		t.Fatalf("the CSV link does not carry the filter: %s", regexp.MustCompile(`href="/dashboard/purchases.csv[^"]*"`).FindString(p.body))
	}

	rows := func(path string) [][]string {
		t.Helper()
		p := b.get(t, path)
		if p.status != 200 || !strings.HasPrefix(p.header.Get("Content-Type"), "text/csv") ||
			!strings.Contains(p.header.Get("Content-Disposition"), "attachment") {
			t.Fatalf("%s: %d %q", path, p.status, p.header.Get("Content-Type"))
		}
		recs, err := csv.NewReader(strings.NewReader(p.body)).ReadAll()
		if err != nil {
			t.Fatalf("%s: not CSV: %v", path, err)
		}
		return recs
	}
	all := rows("/dashboard/purchases.csv")
	if len(all) != 61 || strings.Join(all[0], ",") != "purchased_at,purchase_id,video_id,video_title,api_key_id,customer_label,legacy,customer_email,price_paid,currency" {
		t.Fatalf("CSV: %d lines, header %v", len(all), all[0])
	}
	var cents int
	for _, r := range all[1:] {
		whole, frac, _ := strings.Cut(r[8], ".")
		cents += atoi(whole)*100 + atoi(frac)
		if r[9] != "USD" {
			t.Fatalf("currency %q", r[9])
		}
		if strings.HasPrefix(r[3], "=") {
			t.Fatalf("formula left live in the CSV: %q", r[3])
		}
	}
	if cents != 60000 {
		t.Fatalf("CSV prices add up to %d cents, the page says 60000", cents)
	}
	for i := 2; i < len(all); i++ {
		if all[i][0] < all[i-1][0] {
			t.Fatal("CSV is not oldest first")
		}
	}
	if got := rows("/dashboard/purchases.csv" + filter); len(got) != 51 || got[1][5] != "Csv Co customer" {
		t.Fatalf("filtered CSV: %d lines", len(got))
	}
}

func atoi(s string) int {
	n := 0
	for _, r := range s {
		n = n*10 + int(r-'0')
	}
	return n
}

// TestOverviewAndBalance: the overview's numbers and chart, and the
// ledger's running balance.
func TestOverviewAndBalance(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	ctx := context.Background()
	tn := e.tenant(t, "Numbers Co", 50000)
	vids := e.videos(t, "hard", "Skater falls", "Chef shrugs")
	e.buy(t, tn.Customer.Secret, vids...)
	for i := 0; i < 3; i++ {
		e.api(t, "GET", "/api/v1/pricing", tn.Customer.Secret, "")
	}
	b := e.signedIn(t, tn)
	p := b.get(t, "/dashboard/")
	for _, want := range []string{`id="balance">$450.00`, `id="month-spend">$50.00`, `id="requests-24h">4<`, "<svg", "<rect class=\"bar\"",
		"$50.00, 2 purchases", "Daily spend, last 30 days"} {
		if !strings.Contains(p.body, want) {
			t.Errorf("overview lacks %q", want)
		}
	}
	if csp := p.header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || p.header.Get("X-Frame-Options") != "DENY" {
		t.Errorf("overview headers: CSP %q", csp)
	}
	if _, err := e.pool.Exec(ctx, `UPDATE accounts SET balance_cents = balance_cents + 1234 WHERE id = $1;`, tn.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.pool.Exec(ctx, `INSERT INTO ledger (account_id, amount_cents, kind, note) VALUES ($1, 1234, 'topup', 'invoice 7')`, tn.ID); err != nil {
		t.Fatal(err)
	}
	p = b.get(t, "/dashboard/balance")
	// Newest first: the top-up, then the two purchases, then the opening balance.
	amounts := regexp.MustCompile(`class="num (?:plus|minus)">([^<]+)</td>\s*<td class="num">([^<]+)</td>`).FindAllStringSubmatch(p.body, -1)
	want := [][2]string{{"+$12.34", "$462.34"}, {"-$25.00", "$450.00"}, {"-$25.00", "$475.00"}, {"+$500.00", "$500.00"}}
	if len(amounts) != len(want) {
		t.Fatalf("ledger rows: %v", amounts)
	}
	for i, w := range want {
		if html.UnescapeString(amounts[i][1]) != w[0] || amounts[i][2] != w[1] {
			t.Errorf("ledger row %d: %s -> %s, want %s -> %s", i, amounts[i][1], amounts[i][2], w[0], w[1])
		}
	}
	if !strings.Contains(p.body, "invoice 7") || !strings.Contains(p.body, tn.ID.String()) || !strings.Contains(p.body, "operator") {
		t.Error("balance page lacks the top-up note, the account id or how to ask for a top-up")
	}
	// The page speaks the API's noun (GET /api/v1/balance): the pool is the
	// balance, adding to it a top-up. "credits" is left only in the
	// operator's command, which the CLI's contract names.
	if !strings.Contains(p.body, "<h1>Balance</h1>") || !strings.Contains(p.body, `aria-current="page">Balance</a>`) ||
		!strings.Contains(p.body, "Topping up") {
		t.Error("balance page lacks its heading, its nav entry or how to top up")
	}
	for _, path := range []string{"/dashboard/", "/dashboard/balance", "/dashboard/balance?mode=test", "/dashboard/keys",
		"/dashboard/keys/" + tn.RootKey.ID.String()} {
		body := strings.ReplaceAll(b.get(t, path).body, "brollctl credits ", "")
		if i := strings.Index(strings.ToLower(body), "credit"); i >= 0 {
			t.Errorf("%s still says %q", path, body[max(0, i-40):min(len(body), i+40)])
		}
	}

	// The page's former address still leads to it, with its query.
	for old, moved := range map[string]string{"/dashboard/credits": "/dashboard/balance",
		"/dashboard/credits?mode=test&page=2": "/dashboard/balance?mode=test&page=2"} {
		if p := b.get(t, old); p.status != http.StatusMovedPermanently || p.location() != moved {
			t.Errorf("GET %s: %d to %q, want 301 to %q", old, p.status, p.location(), moved)
		}
	}
}

func TestAssetsAndUnknownPages(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	b := e.browser()
	p := b.get(t, "/dashboard/sign-in")
	refs := regexp.MustCompile(`(?:src|href)="(/dashboard/assets/[^"]+)"`).FindAllStringSubmatch(p.body, -1)
	if len(refs) != 2 {
		t.Fatalf("sign-in page assets: %v", refs)
	}
	for _, r := range refs {
		a := b.get(t, r[1])
		if a.status != 200 || !strings.Contains(a.header.Get("Cache-Control"), "immutable") || len(a.body) < 500 {
			t.Errorf("%s: %d", r[1], a.status)
		}
	}
	if strings.Contains(p.body, "http://") || strings.Contains(p.body, "https://") {
		t.Error("sign-in page references another host")
	}
	if a := b.get(t, "/dashboard/assets/000000000000/dashboard.css"); a.status != 404 {
		t.Errorf("stale asset hash: %d", a.status)
	}
	if a := b.get(t, "/dashboard/nowhere"); a.status != http.StatusNotFound {
		t.Errorf("unknown page when signed out: %d", a.status)
	}
}
