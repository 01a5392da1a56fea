package config

import (
	"strings"
	"testing"
)

// BROLL_TEST_BALANCE is dollars, 1000.00 by default; anything that is not
// an amount is refused at start, naming the setting.
func TestTestBalance(t *testing.T) {
	t.Parallel()
	secret := GenerateSecret()
	c, err := Load(env(map[string]string{"BROLL_SIGNING_KEY": secret}))
	if err != nil || c.TestBalance != 100000 {
		t.Fatalf("default: %d %v", c.TestBalance, err)
	}
	c, err = Load(env(map[string]string{"BROLL_SIGNING_KEY": secret, "BROLL_TEST_BALANCE": "25.50"}))
	if err != nil || c.TestBalance != 2550 {
		t.Fatalf("25.50: %d %v", c.TestBalance, err)
	}
	for _, bad := range []string{"-5", "ten", "1.234"} {
		_, err := Load(env(map[string]string{"BROLL_SIGNING_KEY": secret, "BROLL_TEST_BALANCE": bad}))
		if err == nil || !strings.Contains(err.Error(), "BROLL_TEST_BALANCE") {
			t.Errorf("%q: %v, want an error naming BROLL_TEST_BALANCE", bad, err)
		}
	}
}
