package tenancy

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"broll/internal/apperr"
)

func TestNormalizeEmail(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		" Ops@Example.COM ": "ops@example.com",
		"a@b":               "a@b",
		"no-at-sign":        "",
		"@example.com":      "",
		"a@":                "",
		"a@b@c":             "",
		"a b@example.com":   "",
		"a@.example.com":    "",
	} {
		got, err := NormalizeEmail(in)
		if got != want || (err == nil) != (want != "") {
			t.Errorf("NormalizeEmail(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// TestPasswordLinkLifecycle: a link sets the password once; it expires;
// a reset retires older links and the old password; users are listed per
// account.
func TestPasswordLinkLifecycle(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	p := b.account(t)
	now := time.Now()

	link, err := b.svc.CreateUser(ctx, p.AccountID, " Owner@Example.com", now, DefaultPasswordLinkTTL)
	if err != nil {
		t.Fatal(err)
	}
	if link.User.Email != "owner@example.com" || link.User.PasswordSet || len(link.Token) < 40 ||
		!link.ExpiresAt.After(now.Add(23*time.Hour)) {
		t.Fatalf("link: %+v", link)
	}
	var stored int
	if err := b.pool.QueryRow(ctx, `SELECT count(*) FROM dashboard_password_tokens WHERE token_hash = $1`, []byte(link.Token)).Scan(&stored); err != nil || stored != 0 {
		t.Fatalf("the token itself is stored (%d) %v", stored, err)
	}
	if _, err := b.svc.CreateUser(ctx, p.AccountID, "owner@example.com", now, time.Hour); apperr.CodeOf(err) != apperr.Invalid {
		t.Fatalf("duplicate email: %v", err)
	}
	if _, err := b.svc.CreateUser(ctx, uuid.New(), "x@example.com", now, time.Hour); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("unknown account: %v", err)
	}
	if _, err := b.svc.CheckCredentials(ctx, "owner@example.com", ""); apperr.CodeOf(err) != apperr.Unauthorized {
		t.Fatalf("sign-in before a password is set: %v", err)
	}

	if u, err := b.svc.PasswordLinkUser(ctx, link.Token, now); err != nil || u.ID != link.User.ID {
		t.Fatalf("link user: %v %v", u, err)
	}
	if _, err := b.svc.SetPassword(ctx, link.Token, "too short", now); apperr.CodeOf(err) != apperr.Invalid {
		t.Fatalf("short password: %v", err)
	}
	u, err := b.svc.SetPassword(ctx, link.Token, "a long enough passphrase", now)
	if err != nil || !u.PasswordSet {
		t.Fatalf("set password: %+v %v", u, err)
	}
	// Single use.
	if _, err := b.svc.SetPassword(ctx, link.Token, "another long passphrase", now); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("second use of a link: %v", err)
	}
	if _, err := b.svc.PasswordLinkUser(ctx, link.Token, now); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("used link still shows the form: %v", err)
	}
	if got, err := b.svc.CheckCredentials(ctx, "OWNER@example.com ", "a long enough passphrase"); err != nil || got.ID != u.ID {
		t.Fatalf("sign in: %v %v", got, err)
	}
	if _, err := b.svc.CheckCredentials(ctx, "owner@example.com", "a long enough passphrasE"); apperr.CodeOf(err) != apperr.Unauthorized {
		t.Fatalf("wrong password: %v", err)
	}

	// A reset: the old password stops working, older links too.
	first, err := b.svc.ResetUser(ctx, "owner@example.com", now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.svc.CheckCredentials(ctx, "owner@example.com", "a long enough passphrase"); apperr.CodeOf(err) != apperr.Unauthorized {
		t.Fatalf("old password after reset: %v", err)
	}
	second, err := b.svc.ResetUser(ctx, "owner@example.com", now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.svc.SetPassword(ctx, first.Token, "a brand new passphrase", now); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("older link after a newer one: %v", err)
	}
	// Expiry: the link works until its time, not after.
	if _, err := b.svc.SetPassword(ctx, second.Token, "a brand new passphrase", now.Add(time.Hour+time.Second)); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("expired link: %v", err)
	}
	if _, err := b.svc.SetPassword(ctx, second.Token, "a brand new passphrase", now.Add(59*time.Minute)); err != nil {
		t.Fatalf("link before expiry: %v", err)
	}
	if _, err := b.svc.ResetUser(ctx, "nobody@example.com", now, time.Hour); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("reset of an unknown email: %v", err)
	}

	other := b.account(t)
	if _, err := b.svc.CreateUser(ctx, other.AccountID, "other@example.com", now, time.Hour); err != nil {
		t.Fatal(err)
	}
	users, err := b.svc.ListUsers(ctx, p.AccountID)
	if err != nil || len(users) != 1 || users[0].Email != "owner@example.com" || !users[0].PasswordSet {
		t.Fatalf("list users: %+v %v", users, err)
	}
}
