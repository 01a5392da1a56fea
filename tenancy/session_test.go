package tenancy

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"

	"broll/internal/apperr"
)

const testPassword = "a long enough passphrase"

// user creates a dashboard user with testPassword on a new account.
func (b *bundle) user(t *testing.T, email string) User {
	t.Helper()
	ctx := context.Background()
	p := b.account(t)
	link, err := b.svc.CreateUser(ctx, p.AccountID, email, time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	u, err := b.svc.SetPassword(ctx, link.Token, testPassword, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func (b *bundle) sessions(opts SessionsOptions) *Sessions {
	opts.Now = b.clock.Now
	return NewSessions(b.rdb, b.prefix, b.svc, opts)
}

func TestSignInAndSessions(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	u := b.user(t, "owner@example.com")
	s := b.sessions(SessionsOptions{IdleTimeout: time.Hour, MaxAge: 3 * time.Hour})

	if _, _, err := s.SignIn(ctx, "owner@example.com", "wrong password!", "10.0.0.1"); apperr.CodeOf(err) != apperr.Unauthorized {
		t.Fatalf("bad password: %v", err)
	}
	sess, token, err := s.SignIn(ctx, "Owner@Example.com", testPassword, "10.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	if sess.UserID != u.ID || sess.AccountID != u.AccountID || len(sess.CSRFToken) < 40 || len(token) < 40 {
		t.Fatalf("session: %+v", sess)
	}
	// Only a hash of the token is a Redis key.
	keys, _ := b.rdb.Keys(ctx, "*").Result()
	for _, k := range keys {
		if strings.Contains(k, token) || strings.Contains(k, "owner@example.com") {
			t.Fatalf("Redis key %q holds the token or the email", k)
		}
	}
	got, err := s.Lookup(ctx, token)
	if err != nil || got.UserID != u.ID || got.CSRFToken != sess.CSRFToken {
		t.Fatalf("lookup: %+v %v", got, err)
	}
	if _, err := s.Lookup(ctx, token+"x"); !errors.Is(err, ErrNoSession) {
		t.Fatalf("unknown token: %v", err)
	}
	var last *time.Time
	_ = b.pool.QueryRow(ctx, `SELECT last_sign_in_at FROM dashboard_users WHERE id = $1`, u.ID).Scan(&last)
	if last == nil {
		t.Fatal("last_sign_in_at not recorded")
	}

	// Idle expiry: each use keeps the session alive; an hour without one ends it.
	b.clock.Advance(50 * time.Minute)
	if _, err := s.Lookup(ctx, token); err != nil {
		t.Fatalf("after 50 idle minutes: %v", err)
	}
	b.clock.Advance(50 * time.Minute)
	if _, err := s.Lookup(ctx, token); err != nil {
		t.Fatalf("50 minutes after the last use: %v", err)
	}
	b.clock.Advance(61 * time.Minute)
	if _, err := s.Lookup(ctx, token); !errors.Is(err, ErrNoSession) {
		t.Fatalf("61 idle minutes: %v", err)
	}

	// Absolute expiry: however busy, a session ends at its maximum age.
	_, busy, err := s.SignIn(ctx, "owner@example.com", testPassword, "10.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		b.clock.Advance(40 * time.Minute)
		if _, err := s.Lookup(ctx, busy); err != nil {
			t.Fatalf("busy session after %d min: %v", 40*(i+1), err)
		}
	}
	b.clock.Advance(21 * time.Minute)
	if _, err := s.Lookup(ctx, busy); !errors.Is(err, ErrNoSession) {
		t.Fatalf("busy session past its maximum age: %v", err)
	}
}

func TestSignOutAndSignOutEverywhere(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	u := b.user(t, "owner@example.com")
	v := b.user(t, "someone-else@example.com")
	s := b.sessions(SessionsOptions{})
	signIn := func(email string) string {
		t.Helper()
		_, tok, err := s.SignIn(ctx, email, testPassword, "10.0.0.2")
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	laptop, phone, tablet := signIn(u.Email), signIn(u.Email), signIn(u.Email)
	others := signIn(v.Email)

	if err := s.End(ctx, laptop); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Lookup(ctx, laptop); !errors.Is(err, ErrNoSession) {
		t.Fatalf("signed-out session: %v", err)
	}
	if _, err := s.Lookup(ctx, phone); err != nil {
		t.Fatalf("signing out one browser ended another: %v", err)
	}
	n, err := s.EndAll(ctx, u.ID)
	if err != nil || n != 2 {
		t.Fatalf("end all: %d %v", n, err)
	}
	for _, tok := range []string{phone, tablet} {
		if _, err := s.Lookup(ctx, tok); !errors.Is(err, ErrNoSession) {
			t.Fatalf("session after sign-out everywhere: %v", err)
		}
	}
	if _, err := s.Lookup(ctx, others); err != nil {
		t.Fatalf("another user's session ended: %v", err)
	}
	if err := s.End(ctx, laptop); err != nil {
		t.Fatalf("ending an ended session: %v", err)
	}
}

// TestSignInLockout: after MaxFailures wrong passwords the email is locked,
// the right password included, while other emails sign in as before.
func TestSignInLockout(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.user(t, "owner@example.com")
	b.user(t, "colleague@example.com")
	s := b.sessions(SessionsOptions{MaxFailures: 3, Lockout: time.Minute})

	for i := 1; i <= 3; i++ {
		_, _, err := s.SignIn(ctx, "owner@example.com", "not the password", "10.0.0.3")
		want := apperr.Unauthorized
		if i == 3 {
			want = apperr.RateLimited
		}
		if apperr.CodeOf(err) != want {
			t.Fatalf("failure %d: %v, want %s", i, err, want)
		}
	}
	_, _, err := s.SignIn(ctx, "owner@example.com", testPassword, "10.0.0.3")
	ae, _ := apperr.As(err)
	if ae == nil || ae.Code != apperr.RateLimited || !strings.Contains(ae.Message, "locked") || ae.Fields["retry_after_seconds"].(int) > 60 {
		t.Fatalf("right password while locked: %v", err)
	}
	if _, _, err := s.SignIn(ctx, "colleague@example.com", testPassword, "10.0.0.3"); err != nil {
		t.Fatalf("another email during the lockout: %v", err)
	}
	// The lockout ends by itself (here: made to end now).
	b.rdb.Del(ctx, s.lockKey(throttleID("owner@example.com")))
	if _, _, err := s.SignIn(ctx, "owner@example.com", testPassword, "10.0.0.3"); err != nil {
		t.Fatalf("after the lockout: %v", err)
	}
	// A success clears the failures: two more wrong ones do not lock.
	for i := 0; i < 2; i++ {
		if _, _, err := s.SignIn(ctx, "owner@example.com", "not the password", "10.0.0.3"); apperr.CodeOf(err) != apperr.Unauthorized {
			t.Fatalf("failure after success: %v", err)
		}
	}
	// Unknown emails are locked the same way: no telling them apart.
	for i := 0; i < 3; i++ {
		_, _, err = s.SignIn(ctx, "nobody@example.com", "whatever it is", "10.0.0.3")
	}
	if apperr.CodeOf(err) != apperr.RateLimited {
		t.Fatalf("unknown email after 3 failures: %v", err)
	}
}

func TestSignInThrottledPerAddressAndEmail(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.user(t, "owner@example.com")
	s := b.sessions(SessionsOptions{MaxFailures: 100,
		AddressAttempts: redis_rate.Limit{Rate: 4, Burst: 4, Period: time.Minute},
		EmailAttempts:   redis_rate.Limit{Rate: 2, Burst: 2, Period: time.Minute}})

	emails := []string{"a@example.com", "b@example.com", "c@example.com", "d@example.com"}
	for _, e := range emails {
		if _, _, err := s.SignIn(ctx, e, "whatever it is", "10.0.0.4"); apperr.CodeOf(err) != apperr.Unauthorized {
			t.Fatalf("%s: %v", e, err)
		}
	}
	_, _, err := s.SignIn(ctx, "owner@example.com", testPassword, "10.0.0.4")
	if ae, ok := apperr.As(err); !ok || ae.Code != apperr.RateLimited || !strings.Contains(ae.Message, "address") {
		t.Fatalf("fifth attempt from one address: %v", err)
	}
	// Per email, whatever the address.
	for _, addr := range []string{"10.0.1.1", "10.0.1.2"} {
		if _, _, err := s.SignIn(ctx, "owner@example.com", "wrong password!", addr); apperr.CodeOf(err) != apperr.Unauthorized {
			t.Fatalf("from %s: %v", addr, err)
		}
	}
	_, _, err = s.SignIn(ctx, "owner@example.com", testPassword, "10.0.1.3")
	if ae, ok := apperr.As(err); !ok || ae.Code != apperr.RateLimited || !strings.Contains(ae.Message, "email") {
		t.Fatalf("third attempt for one email: %v", err)
	}
}
