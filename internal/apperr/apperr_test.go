package apperr

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestClip: the one cut of every echoed value.
func TestClip(t *testing.T) {
	t.Parallel()
	if got := Clip("short"); got != "short" {
		t.Errorf("short: %q", got)
	}
	exact := strings.Repeat("é", MaxEcho)
	if got := Clip(exact); got != exact {
		t.Errorf("exactly %d characters were cut", MaxEcho)
	}
	got := Clip(exact + "x")
	if utf8.RuneCountInString(got) != MaxEcho+1 || !strings.HasSuffix(got, "…") || !utf8.ValidString(got) {
		t.Errorf("cut: %q", got)
	}
	if got := InvalidField(strings.Repeat("f", 5000), "m"); utf8.RuneCountInString(got.Field) != MaxEcho+1 {
		t.Errorf("field name not cut: %d", len(got.Field))
	}
	if got := New(Invalid, "%s", strings.Repeat("m", 100_000)); len(got.Message) > 4*MaxDetail {
		t.Errorf("message not bounded: %d", len(got.Message))
	}
}
