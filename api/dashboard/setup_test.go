package dashboard_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"broll/api"
	"broll/billing/billingtest"
	"broll/collections"
	"broll/internal/config"
	"broll/internal/money"
	"broll/internal/testkit"
	"broll/tenancy"
	"broll/webhook"
	"broll/wiring"
	"broll/wiring/wiringtest"
)

// env is one API node (JSON API and dashboard, the real router) over a
// database and a Redis database of the test's own, with a settable clock.
type env struct {
	app  *fiber.App
	pool *pgxpool.Pool
	rdb  *redis.Client
	cfg  config.Config
	svc  *tenancy.Service
	// webhooks is the node's endpoint service.
	webhooks *webhook.Service
	// collections is the node's collections service.
	collections *collections.Service
	clock       *testkit.Clock
	logs        *testkit.SyncBuffer
}

func setup(t *testing.T, extra map[string]string) *env {
	t.Helper()
	pool, dbURL := testkit.NewPool(t)
	rds := testkit.Redis(t)
	rdb := rds.Client
	vars := map[string]string{"DATABASE_URL": dbURL, "REDIS_URL": rds.URL, "BROLL_REDIS_PREFIX": rds.Prefix, "BROLL_MEDIA_DIR": t.TempDir(),
		"BROLL_SIGNING_KEY": config.GenerateSecret(), "BROLL_PUBLIC_URL": "http://dash.test",
		"BROLL_LOG_LEVEL": "debug", "BROLL_EMBED_PROVIDER": "builtin"}
	for k, v := range extra {
		vars[k] = v
	}
	cfg, err := config.Load(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	logs := &testkit.SyncBuffer{}
	clk := testkit.NewClock(time.Now())
	g, err := wiring.Open(context.Background(), cfg, wiring.Options{Parts: wiring.APIParts, Pool: pool, Redis: rdb, Logs: logs, Now: clk.Now,
		Fonts: wiringtest.Fonts(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	n, err := api.NewNode(g)
	if err != nil {
		t.Fatal(err)
	}
	return &env{app: n.App, pool: pool, rdb: rdb, cfg: cfg, svc: g.Tenancy, webhooks: g.Webhooks, collections: g.Collections,
		clock: clk, logs: logs}
}

const password = "correct horse battery staple"

// user adds a dashboard user with `password` to an account.
func (e *env) user(t *testing.T, accountID uuid.UUID, email string) tenancy.User {
	t.Helper()
	ctx := context.Background()
	link, err := e.svc.CreateUser(ctx, accountID, email, time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	u, err := e.svc.SetPassword(ctx, link.Token, password, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// tenant is an account with credit, a dashboard user and a customer key.
type tenant struct {
	billingtest.Account
	Email    string
	Customer tenancy.IssuedKey
}

func (e *env) tenant(t *testing.T, name string, credits money.Cents) tenant {
	t.Helper()
	a := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Name: name, Credits: credits})
	email := strings.ToLower(strings.ReplaceAll(name, " ", "-")) + "@example.com"
	e.user(t, a.ID, email)
	return tenant{Account: a, Email: email, Customer: a.CustomerKey(t, e.pool, name+" customer")}
}

// browser is a client with a cookie jar, as a browser would send them.
type browser struct {
	e       *env
	cookies map[string]string
	origin  string // sent as Origin on POSTs; "" sends none
}

func (e *env) browser() *browser {
	return &browser{e: e, cookies: map[string]string{}, origin: "http://dash.test"}
}

type page struct {
	status int
	header http.Header
	body   string
}

func (p page) location() string { return p.header.Get("Location") }

func (b *browser) do(t *testing.T, method, path string, form url.Values) page {
	t.Helper()
	p := b.send(t, method, path, form)
	if p.status >= 500 {
		t.Errorf("%s %s: %d\n%s\nlogs: %s", method, path, p.status, p.body, b.e.logs.String())
	}
	return p
}

// send is do for a test that expects a 5xx page.
func (b *browser) send(t *testing.T, method, path string, form url.Values) page {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	// Origin form and a Host header, as a browser sends (an HTTP/1.1
	// request without Host is refused by the server's parser).
	req := httptest.NewRequest(method, path, body)
	req.Host = "dash.test"
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if b.origin != "" {
			req.Header.Set("Origin", b.origin)
		}
	}
	for k, v := range b.cookies {
		req.AddCookie(&http.Cookie{Name: k, Value: v})
	}
	res, err := b.e.app.Test(req, -1)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	for _, c := range res.Cookies() {
		if c.MaxAge < 0 || c.Value == "" {
			delete(b.cookies, c.Name)
		} else {
			b.cookies[c.Name] = c.Value
		}
	}
	return page{status: res.StatusCode, header: res.Header, body: string(raw)}
}

func (b *browser) get(t *testing.T, path string) page {
	t.Helper()
	return b.do(t, "GET", path, nil)
}

var csrfRe = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// csrf is the form token of the page at path.
func (b *browser) csrf(t *testing.T, path string) string {
	t.Helper()
	p := b.get(t, path)
	m := csrfRe.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no CSRF token on %s (%d): %.300s", path, p.status, p.body)
	}
	return m[1]
}

// post submits a form of the page at from, with its CSRF token.
func (b *browser) post(t *testing.T, from, action string, form url.Values) page {
	t.Helper()
	if form == nil {
		form = url.Values{}
	}
	form.Set("csrf_token", b.csrf(t, from))
	return b.do(t, "POST", action, form)
}

func (b *browser) signIn(t *testing.T, email, pw string) page {
	t.Helper()
	return b.post(t, "/dashboard/sign-in", "/dashboard/sign-in", url.Values{"email": {email}, "password": {pw}})
}

// signedIn is a browser signed in as the tenant's user.
func (e *env) signedIn(t *testing.T, tn tenant) *browser {
	t.Helper()
	b := e.browser()
	if p := b.signIn(t, tn.Email, password); p.status != http.StatusSeeOther || p.location() != "/dashboard/" {
		t.Fatalf("sign in as %s: %d %s %.300s", tn.Email, p.status, p.location(), p.body)
	}
	return b
}

// api calls the JSON API with a bearer key.
func (e *env) api(t *testing.T, method, path, key, body string) int {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := e.app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// buy purchases clips with a key through the JSON API.
func (e *env) buy(t *testing.T, key string, ids ...uuid.UUID) {
	t.Helper()
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = `"` + id.String() + `"`
	}
	if s := e.api(t, "POST", "/api/v1/broll/purchase", key, `{"video_ids": [`+strings.Join(parts, ",")+`]}`); s != 200 {
		t.Fatalf("purchase: %d", s)
	}
}

// videos inserts clips with readable titles.
func (e *env) videos(t *testing.T, tier string, titles ...string) []uuid.UUID {
	t.Helper()
	ids := billingtest.Videos(t, e.pool, len(titles), tier)
	for i, id := range ids {
		if _, err := e.pool.Exec(context.Background(), `UPDATE videos SET title = $2 WHERE id = $1`, id, titles[i]); err != nil {
			t.Fatal(err)
		}
	}
	return ids
}
