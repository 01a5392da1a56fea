package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestSignIn(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	tn := e.tenant(t, "Acme Video", 10000)

	// Signed out, a page sends you to sign in and back.
	b := e.browser()
	p := b.get(t, "/dashboard/keys?x=1")
	if p.status != http.StatusSeeOther || p.location() != "/dashboard/sign-in?next=%2Fdashboard%2Fkeys%3Fx%3D1" {
		t.Fatalf("signed-out page: %d %q", p.status, p.location())
	}

	cases := []struct {
		name, email, password string
		status                int
		want                  string
	}{
		{"wrong password", tn.Email, "correct horse battery stapler", 401, "wrong email or password"},
		{"unknown email", "nobody@example.com", password, 401, "wrong email or password"},
		{"empty", "", "", 401, "wrong email or password"},
		{"good, email in capitals", strings.ToUpper(tn.Email), password, 303, ""},
	}
	for _, c := range cases {
		b := e.browser()
		form := url.Values{"email": {c.email}, "password": {c.password}, "next": {"/dashboard/balance"}}
		p := b.post(t, "/dashboard/sign-in", "/dashboard/sign-in", form)
		if p.status != c.status || !strings.Contains(p.body, c.want) {
			t.Errorf("%s: %d %.400s", c.name, p.status, p.body)
		}
		if c.status != 303 {
			if _, ok := b.cookies["broll_dashboard"]; ok {
				t.Errorf("%s: a session cookie was set", c.name)
			}
			continue
		}
		if p.location() != "/dashboard/balance" {
			t.Errorf("%s: redirected to %q, want the page asked for", c.name, p.location())
		}
		setCookie := strings.Join(p.header.Values("Set-Cookie"), "\n")
		for _, want := range []string{"broll_dashboard=", "HttpOnly", "SameSite=Lax", "path=/dashboard"} {
			if !strings.Contains(setCookie, want) {
				t.Errorf("session cookie lacks %q: %s", want, setCookie)
			}
		}
		if strings.Contains(setCookie, "secure") {
			t.Errorf("Secure cookie over an http public URL: %s", setCookie)
		}
		if ov := b.get(t, "/dashboard/"); ov.status != 200 || !strings.Contains(ov.body, "Acme Video") {
			t.Errorf("overview after sign-in: %d", ov.status)
		}
	}
	// An open redirect is not a place to go after signing in.
	b = e.browser()
	p = b.post(t, "/dashboard/sign-in", "/dashboard/sign-in", url.Values{"email": {tn.Email}, "password": {password},
		"next": {"//evil.example/dashboard"}})
	if p.status != 303 || p.location() != "/dashboard/" {
		t.Fatalf("next outside the dashboard: %d %q", p.status, p.location())
	}
	if strings.Contains(e.logs.String(), password) {
		t.Fatal("a password reached the logs")
	}
}

func TestSecureCookieOverHTTPS(t *testing.T) {
	t.Parallel()
	e := setup(t, map[string]string{"BROLL_PUBLIC_URL": "https://dash.test"})
	tn := e.tenant(t, "Secure Co", 0)
	b := e.browser()
	b.origin = "https://dash.test"
	p := b.signIn(t, tn.Email, password)
	if p.status != 303 || !strings.Contains(strings.Join(p.header.Values("Set-Cookie"), "\n"), "secure") {
		t.Fatalf("https: %d %v", p.status, p.header.Values("Set-Cookie"))
	}
}

// TestSignInLockout: after five wrong passwords the email is locked, the
// right password too, with a Retry-After; other users are unaffected.
func TestSignInLockout(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	tn := e.tenant(t, "Locked Co", 0)
	other := e.tenant(t, "Other Co", 0)
	b := e.browser()
	for i := 1; i <= 5; i++ {
		p := b.signIn(t, tn.Email, "guess number "+string(rune('0'+i)))
		want := 401
		if i == 5 {
			want = 429
		}
		if p.status != want {
			t.Fatalf("attempt %d: %d %.300s", i, p.status, p.body)
		}
	}
	p := b.signIn(t, tn.Email, password)
	if p.status != 429 || !strings.Contains(p.body, "locked for 15 minute") || p.header.Get("Retry-After") == "" {
		t.Fatalf("right password while locked: %d %q %.400s", p.status, p.header.Get("Retry-After"), p.body)
	}
	if _, ok := b.cookies["broll_dashboard"]; ok {
		t.Fatal("session cookie set during a lockout")
	}
	e.signedIn(t, other)
}

// TestCSRF: every form post needs the session's token (or, before sign-in,
// the form cookie's) and must not come from another site; refused posts
// change nothing.
func TestCSRF(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	tn := e.tenant(t, "Csrf Co", 10000)
	b := e.signedIn(t, tn)
	mallory := e.signedIn(t, e.tenant(t, "Mallory Co", 0))
	token := b.csrf(t, "/dashboard/keys")
	foreign := mallory.csrf(t, "/dashboard/keys")
	customer := tn.Customer.ID.String()

	posts := []string{"/dashboard/keys", "/dashboard/keys/" + tn.RootKey.ID.String() + "/customers",
		"/dashboard/keys/" + customer + "/revoke", "/dashboard/sign-out", "/dashboard/sign-out-everywhere"}
	cases := []struct {
		name, token, origin string
	}{
		{"no token", "", "http://dash.test"},
		{"wrong token", strings.Repeat("A", len(token)), "http://dash.test"},
		{"another session's token", foreign, "http://dash.test"},
		{"right token from another site", token, "https://evil.example"},
	}
	for _, c := range cases {
		for _, path := range posts {
			b.origin = c.origin
			form := url.Values{"label": {"x"}, "customer_label": {"x"}}
			if c.token != "" {
				form.Set("csrf_token", c.token)
			}
			if p := b.do(t, "POST", path, form); p.status != http.StatusForbidden || !strings.Contains(p.body, "reload the page") {
				t.Errorf("%s, POST %s: %d", c.name, path, p.status)
			}
		}
	}
	b.origin = "http://dash.test"
	var keys int
	if err := e.pool.QueryRow(context.Background(), `SELECT count(*) FROM api_keys WHERE account_id = $1`, tn.ID).Scan(&keys); err != nil || keys != 2 {
		t.Fatalf("refused posts created keys: %d %v", keys, err)
	}
	if s := e.api(t, "GET", "/api/v1/pricing", tn.Customer.Secret, ""); s != 200 {
		t.Fatalf("a refused revoke revoked the key: %d", s)
	}
	if p := b.get(t, "/dashboard/"); p.status != 200 {
		t.Fatalf("a refused sign-out ended the session: %d", p.status)
	}
	// The referer stands in for a missing Origin.
	b.origin = ""
	req := url.Values{"csrf_token": {token}, "label": {"from referer"}}
	if p := b.do(t, "POST", "/dashboard/keys", req); p.status != http.StatusCreated {
		t.Fatalf("right token without Origin: %d", p.status)
	}

	// Before sign-in: the form token must match the form cookie.
	anon := e.browser()
	tok := anon.csrf(t, "/dashboard/sign-in")
	for name, form := range map[string]url.Values{
		"no token":    {"email": {tn.Email}, "password": {password}},
		"wrong token": {"email": {tn.Email}, "password": {password}, "csrf_token": {tok + "x"}},
	} {
		if p := anon.do(t, "POST", "/dashboard/sign-in", form); p.status != http.StatusForbidden {
			t.Errorf("sign-in, %s: %d", name, p.status)
		}
	}
	fresh := e.browser() // a token without the cookie it belongs to
	if p := fresh.do(t, "POST", "/dashboard/sign-in", url.Values{"email": {tn.Email}, "password": {password}, "csrf_token": {tok}}); p.status != http.StatusForbidden {
		t.Errorf("sign-in with a token but no form cookie: %d", p.status)
	}
}

// TestSessionExpiry: an idle session ends after BROLL_SESSION_TTL, a busy
// one at BROLL_SESSION_MAX_AGE; the page then asks to sign in again.
func TestSessionExpiry(t *testing.T) {
	t.Parallel()
	e := setup(t, map[string]string{"BROLL_SESSION_TTL": "30m", "BROLL_SESSION_MAX_AGE": "2h"})
	tn := e.tenant(t, "Expiry Co", 0)
	b := e.signedIn(t, tn)
	e.clock.Advance(29 * time.Minute)
	if p := b.get(t, "/dashboard/balance"); p.status != 200 {
		t.Fatalf("after 29 idle minutes: %d", p.status)
	}
	e.clock.Advance(31 * time.Minute)
	p := b.get(t, "/dashboard/balance")
	if p.status != http.StatusSeeOther || p.location() != "/dashboard/sign-in?next=%2Fdashboard%2Fbalance&m=expired" {
		t.Fatalf("after 31 idle minutes: %d %q", p.status, p.location())
	}
	if _, ok := b.cookies["broll_dashboard"]; ok {
		t.Fatal("the ended session's cookie was kept")
	}
	if p := b.get(t, p.location()); !strings.Contains(p.body, "Your session has ended") {
		t.Fatalf("sign-in page after expiry: %.300s", p.body)
	}

	b = e.signedIn(t, tn)
	for i := 0; i < 4; i++ {
		e.clock.Advance(29 * time.Minute)
		if p := b.get(t, "/dashboard/"); p.status != 200 {
			t.Fatalf("busy session at %d minutes: %d", 29*(i+1), p.status)
		}
	}
	e.clock.Advance(5 * time.Minute)
	if p := b.get(t, "/dashboard/"); p.status != http.StatusSeeOther {
		t.Fatalf("busy session past its maximum age: %d", p.status)
	}
	// A form posted with an ended session changes nothing.
	if p := b.do(t, "POST", "/dashboard/keys", url.Values{"csrf_token": {"whatever"}}); p.status != http.StatusSeeOther {
		t.Fatalf("post without a session: %d", p.status)
	}
}

func TestSignOutAndSignOutEverywhere(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	tn := e.tenant(t, "Signout Co", 0)
	laptop, phone, tablet := e.signedIn(t, tn), e.signedIn(t, tn), e.signedIn(t, tn)
	colleague := e.tenant(t, "Colleague Co", 0)
	theirs := e.signedIn(t, colleague)

	p := laptop.post(t, "/dashboard/", "/dashboard/sign-out", nil)
	if p.status != http.StatusSeeOther || p.location() != "/dashboard/sign-in?m=signed-out" {
		t.Fatalf("sign out: %d %q", p.status, p.location())
	}
	if p := laptop.get(t, "/dashboard/"); p.status != http.StatusSeeOther {
		t.Fatalf("signed-out browser: %d", p.status)
	}
	if p := phone.get(t, "/dashboard/"); p.status != 200 {
		t.Fatalf("signing out one browser ended another: %d", p.status)
	}
	p = phone.post(t, "/dashboard/", "/dashboard/sign-out-everywhere", nil)
	if p.status != http.StatusSeeOther || !strings.Contains(p.location(), "signed-out-all") {
		t.Fatalf("sign out everywhere: %d %q", p.status, p.location())
	}
	for name, b := range map[string]*browser{"phone": phone, "tablet": tablet} {
		if p := b.get(t, "/dashboard/"); p.status != http.StatusSeeOther {
			t.Errorf("%s after sign-out everywhere: %d", name, p.status)
		}
	}
	if p := theirs.get(t, "/dashboard/"); p.status != 200 {
		t.Fatalf("another user's session ended: %d", p.status)
	}
}

// TestSetPasswordLink: the operator's one-time link sets the password once,
// not after it expires, and ends the sessions of the old password.
func TestSetPasswordLink(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	ctx := context.Background()
	tn := e.tenant(t, "Link Co", 0)
	old := e.signedIn(t, tn)
	link, err := e.svc.ResetUser(ctx, tn.Email, e.clock.Now(), 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	path := "/dashboard/set-password?token=" + link.Token
	b := e.browser()
	p := b.get(t, path)
	if p.status != 200 || !strings.Contains(p.body, tn.Email) || p.header.Get("Referrer-Policy") != "no-referrer" {
		t.Fatalf("link form: %d %q", p.status, p.header.Get("Referrer-Policy"))
	}
	bad := []struct {
		pw, again, want string
	}{
		{"short", "short", "at least 12 characters"},
		{"a long new passphrase", "a long new passphrasE", "differ"},
	}
	for _, c := range bad {
		p := b.post(t, path, "/dashboard/set-password", url.Values{"token": {link.Token}, "password": {c.pw}, "password_again": {c.again}})
		if p.status != 400 || !strings.Contains(p.body, c.want) {
			t.Errorf("%q: %d %.300s", c.pw, p.status, p.body)
		}
	}
	newPassword := "a long new passphrase"
	p = b.post(t, path, "/dashboard/set-password", url.Values{"token": {link.Token}, "password": {newPassword}, "password_again": {newPassword}})
	if p.status != http.StatusSeeOther || !strings.Contains(p.location(), "password-set") {
		t.Fatalf("set password: %d %q %.300s", p.status, p.location(), p.body)
	}
	if p := old.get(t, "/dashboard/"); p.status != http.StatusSeeOther {
		t.Fatalf("a session of the old password survived: %d", p.status)
	}
	if p := b.get(t, path); p.status != 404 || !strings.Contains(p.body, "not valid") {
		t.Fatalf("used link: %d", p.status)
	}
	if p := e.browser().signIn(t, tn.Email, newPassword); p.status != http.StatusSeeOther {
		t.Fatalf("sign in with the new password: %d", p.status)
	}

	// Expiry, by the clock.
	link, err = e.svc.ResetUser(ctx, tn.Email, e.clock.Now(), 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(24*time.Hour + time.Second)
	if p := e.browser().get(t, "/dashboard/set-password?token="+link.Token); p.status != 404 {
		t.Fatalf("expired link: %d", p.status)
	}
	for _, tok := range []string{"", "garbage", strings.Repeat("x", 1000)} {
		if p := e.browser().get(t, "/dashboard/set-password?token="+url.QueryEscape(tok)); p.status != 404 {
			t.Fatalf("token %.20q: %d", tok, p.status)
		}
	}
}
