package main

import (
	"context"
	"errors"
	"net/url"
	"testing"
	"time"

	"broll/internal/testkit"
	"broll/tenancy"
	"broll/wiring"
)

// TestUserResetUnconfirmed: a reset whose commit cannot be confirmed (the
// session ended while it committed) fails, and the user's sessions are
// ended all the same: the reset may land a moment later, and a session of
// the old password (the one being reset, perhaps because it leaked) must
// not outlive it. Running it again resets the user.
func TestUserResetUnconfirmed(t *testing.T) {
	t.Parallel()
	c := newCtl(t)
	ctx := context.Background()
	acct := c.mustRun(t, "account", "create", "--name", "Leaky Co", "--source", "leaky")
	out := c.mustRun(t, "user", "create", "--account", acct["account_id"].(string), "--email", "owner@leaky.test")
	u, err := url.Parse(out["set_password_url"].(string))
	if err != nil {
		t.Fatal(err)
	}
	dash := c.graph(t, wiring.Redis)
	if _, err := dash.Tenancy.SetPassword(ctx, u.Query().Get("token"), "a long enough passphrase", time.Now()); err != nil {
		t.Fatal(err)
	}
	_, token, err := dash.Sessions.SignIn(ctx, "owner@leaky.test", "a long enough passphrase", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}

	untrap := testkit.CommitTrap(t, c.pool, "dashboard_users", testkit.CommitEndsSession)
	c.mustFail(t, "the reset could not be confirmed: the user's sessions are ended", "user", "reset", "--email", "owner@leaky.test")
	if _, err := dash.Sessions.Lookup(ctx, token); !errors.Is(err, tenancy.ErrNoSession) {
		t.Errorf("a session outlived an unconfirmed reset: %v", err)
	}

	untrap()
	out = c.mustRun(t, "user", "reset", "--email", "owner@leaky.test")
	if _, err := dash.Tenancy.CheckCredentials(ctx, "owner@leaky.test", "a long enough passphrase"); err == nil {
		t.Errorf("the old password works after the reset run again: %v", out)
	}
}
