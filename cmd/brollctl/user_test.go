package main

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"broll/tenancy"
	"broll/wiring"
)

// TestUserCommands: user create prints a one-time link on BROLL_PUBLIC_URL
// that sets the password; user reset clears it, ends the user's sessions
// and prints a new link; user list shows the account's users.
func TestUserCommands(t *testing.T) {
	t.Parallel()
	c := newCtl(t)
	c.env["BROLL_PUBLIC_URL"] = "https://broll.example.com/"
	ctx := context.Background()
	_, acct, _ := c.run(t, "", "account", "create", "--name", "Acme Video", "--source", "acme")
	id := acct["account_id"].(string)

	out := c.mustRun(t, "user", "create", "--account", id, "--email", "Owner@Acme.test")
	link := out["set_password_url"].(string)
	if out["email"] != "owner@acme.test" || out["account_id"] != id || !strings.HasPrefix(link, "https://broll.example.com/dashboard/set-password?token=") {
		t.Fatalf("user create output: %v", out)
	}
	if exp, err := time.Parse(time.RFC3339, out["expires_at"].(string)); err != nil || exp.Before(time.Now().Add(23*time.Hour)) {
		t.Fatalf("expires_at %v %v", out["expires_at"], err)
	}
	u, _ := url.Parse(link)
	// The dashboard's side: its users and sessions.
	dash := c.graph(t, wiring.Redis)
	svc := dash.Tenancy
	if _, err := svc.SetPassword(ctx, u.Query().Get("token"), "a long enough passphrase", time.Now()); err != nil {
		t.Fatalf("the printed link does not set a password: %v", err)
	}

	// A live session, ended by the reset.
	sessions := dash.Sessions
	_, token, err := sessions.SignIn(ctx, "owner@acme.test", "a long enough passphrase", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	out = c.mustRun(t, "user", "reset", "--email", "OWNER@acme.test")
	if out["sessions_ended"].(float64) != 1 || out["set_password_url"] == link {
		t.Fatalf("user reset: %v", out)
	}
	if _, err := sessions.Lookup(ctx, token); !errors.Is(err, tenancy.ErrNoSession) {
		t.Fatalf("session after reset: %v", err)
	}
	if _, err := svc.CheckCredentials(ctx, "owner@acme.test", "a long enough passphrase"); err == nil {
		t.Fatal("the old password works after a reset")
	}

	out = c.mustRun(t, "user", "list", "--account", id)
	users, _ := out["users"].([]any)
	if len(users) != 1 || users[0].(map[string]any)["password_set"] != false {
		t.Fatalf("user list: %v", out)
	}

	users0 := c.count(t, "dashboard_users")
	for _, b := range []struct {
		args []string
		want string
	}{
		{[]string{"user", "create", "--account", id, "--email", "owner@acme.test"}, "exists already"},
		{[]string{"user", "create", "--account", id, "--email", "not an email"}, "not an email address"},
		{[]string{"user", "create", "--account", id}, "--email is required"},
		{[]string{"user", "create", "--account", "6f1c2a8e-8e53-4c1a-9d55-2f7f0c1f0a11", "--email", "x@acme.test"}, "account not found"},
		{[]string{"user", "reset", "--email", "nobody@acme.test"}, "no dashboard user"},
		{[]string{"user", "list", "--account", "nope"}, "not a UUID"},
		{[]string{"user", "list", "--account", "6f1c2a8e-8e53-4c1a-9d55-2f7f0c1f0a11"}, "account not found"},
		{[]string{"user", "delete"}, "unknown command"},
	} {
		c.mustFail(t, b.want, b.args...)
	}
	if c.count(t, "dashboard_users") != users0 {
		t.Fatal("a failed command changed the users")
	}
}
