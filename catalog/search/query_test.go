package search

import (
	"math"
	"strings"
	"testing"

	"broll/internal/apperr"
)

// requireInvalid asserts an invalid_request naming field.
func requireInvalid(t *testing.T, err error, field string) *apperr.Error {
	t.Helper()
	ae, ok := apperr.As(err)
	if !ok || ae.Code != apperr.Invalid || ae.Field != field {
		t.Fatalf("want invalid_request on %s, got %v", field, err)
	}
	return ae
}

// TestValidateTyped: a Query filled from typed arguments (an MCP tool's) is
// held to the bounds and messages of the URL parameters.
func TestValidateTyped(t *testing.T) {
	t.Parallel()
	f, n := func(v float64) *float64 { return &v }, func(v int) *int { return &v }
	cases := []struct {
		q            Query
		field, given string
	}{
		{Query{MinDuration: f(-1)}, "min_duration", `"-1"`},
		{Query{MaxDuration: f(math.NaN())}, "max_duration", `"NaN"`},
		{Query{MaxDuration: f(math.Inf(1))}, "max_duration", `"+Inf"`},
		{Query{MinVirality: n(101)}, "min_virality", `"101"`},
		{Query{Limit: -5}, "limit", `"-5"`},
		{Query{Offset: -1}, "offset", `"-1"`},
		{Query{Offset: 9990, Limit: 20}, "offset", ""},
		{Query{Offset: 20, Cursor: "abc"}, "cursor", ""},
	}
	for _, tc := range cases {
		err := tc.q.Validate()
		ae := requireInvalid(t, err, tc.field)
		if !strings.Contains(ae.Message, tc.given) {
			t.Errorf("%+v: message %q does not quote %s", tc.q, ae.Message, tc.given)
		}
	}
	q := Query{Limit: 500}
	if err := q.Validate(); err != nil || q.Limit != MaxLimit {
		t.Fatalf("a limit above the maximum: %+v %v", q, err)
	}
}

func TestPrefixTSQuery(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"laugh":                "laugh:*",
		"Woman  laughing, car": "woman:* & laughing:* & car:*",
		"9:16 o'clock":         "9:* & 16:* & o:* & clock:*",
		"coffee -phone":        "",
		`"behind the wheel"`:   "",
		"car OR bus":           "",
		"':*|&!()<->":          "",
		"café crème":           "café:* & crème:*",
	}
	for in, want := range cases {
		if got := prefixTSQuery(in); got != want {
			t.Errorf("prefixTSQuery(%q) = %q, want %q", in, got, want)
		}
	}
	if got := strings.Count(prefixTSQuery(strings.Repeat("word ", 40)), ":*"); got != maxPrefixTerms {
		t.Errorf("%d prefix terms", got)
	}
}
