package main

import "testing"

// An account's name is the platform's on its licences: brollctl refuses
// one that reads other than it is stored, shows nothing, or could not be
// printed on a certificate, and makes no account; a name in another
// script is stored in NFC.
func TestAccountName(t *testing.T) {
	c := newCtl(t)
	for i, bad := range []string{"Acme\u202egnp.exe", "\u2066Acme\u2069", "\u200b\u200b", " \u3000 ", "Acme \U0001F600"} {
		c.mustFail(t, "name", "account", "create", "--name", bad, "--source", "bad"+string(rune('a'+i)))
	}
	if n := c.count(t, "accounts"); n != 0 {
		t.Errorf("refused names made %d accounts", n)
	}
	acct := c.mustRun(t, "account", "create", "--name", " Zoe\u0308 منصة ", "--source", "zoe")
	var name string
	if err := c.pool.QueryRow(t.Context(), "SELECT name FROM accounts WHERE id = $1", acct["account_id"]).Scan(&name); err != nil {
		t.Fatal(err)
	}
	if name != "Zo\u00eb منصة" {
		t.Errorf("stored name %q", name)
	}
}
