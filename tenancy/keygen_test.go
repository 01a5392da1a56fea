package tenancy

import (
	"strings"
	"testing"

	"broll/internal/apperr"
)

// Live and test keys are told apart by their prefix alone, both carry the
// same 256 random bits, and the authenticator's shape check takes both and
// nothing in between.
func TestKeyFormats(t *testing.T) {
	t.Parallel()
	live, test := newKey(false), newKey(true)
	if !strings.HasPrefix(live, "dsk_") || strings.HasPrefix(live, testKeyPrefix) || !strings.HasPrefix(test, testKeyPrefix) {
		t.Fatalf("keys %q and %q", live, test)
	}
	if p := displayedPrefix(test); p != test[:len(testKeyPrefix)+displayDigits] {
		t.Fatalf("test key shown as %q", p)
	}
	if p := displayedPrefix(live); p != live[:len(keyPrefix)+displayDigits] {
		t.Fatalf("live key shown as %q", p)
	}
	for _, k := range []string{live, test} {
		if !wellFormed(k) {
			t.Errorf("%q refused", k)
		}
	}
	for _, k := range []string{
		test[:len(test)-1], test + "A", "dsk_test" + test[len(testKeyPrefix):], "dsk_TEST_" + test[len(testKeyPrefix):],
		testKeyPrefix + live[len(keyPrefix):len(live)-1] + "!", "dsk_test_",
	} {
		if wellFormed(k) {
			t.Errorf("%q accepted", k)
		}
	}
}

func TestParseKeyMode(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]bool{"live": false, "test": true} {
		if got, err := ParseKeyMode(in); err != nil || got != want {
			t.Errorf("%q: %v %v", in, got, err)
		}
	}
	for _, in := range []string{"", "Test", "sandbox", " test"} {
		if _, err := ParseKeyMode(in); apperr.CodeOf(err) != apperr.Invalid {
			t.Errorf("%q: %v, want invalid_request", in, err)
		}
	}
}
