package paging

import (
	"errors"
	"net/url"
	"testing"

	"broll/internal/apperr"
)

func TestParse(t *testing.T) {
	b := Bounds{DefaultLimit: 20, MaxLimit: 100, Window: 1000}
	ok := []struct {
		query string
		want  Request
	}{
		{"", Request{Limit: 20}},
		{"limit=5&page=3", Request{Limit: 5, Offset: 10}},
		{"limit=500", Request{Limit: 100}},
		{"limit=99999999999999999999", Request{Limit: 100}},
		{"offset=7", Request{Limit: 20, Offset: 7}},
		{"cursor=abc&limit=3", Request{Limit: 3, Cursor: "abc"}},
	}
	for _, tc := range ok {
		v, _ := url.ParseQuery(tc.query)
		got, err := Parse(v, b)
		if err != nil || got != tc.want {
			t.Errorf("%q: %+v %v, want %+v", tc.query, got, err, tc.want)
		}
	}
	bad := map[string]string{
		"limit=0": "limit", "limit=x": "limit", "page=0": "page", "offset=-1": "offset",
		"page=1&offset=2": "page", "cursor=a&page=2": "cursor", "cursor=a&offset=0": "cursor",
		"page=51": "offset", "page=1001": "page", "offset=990&limit=20": "offset",
	}
	for query, field := range bad {
		v, _ := url.ParseQuery(query)
		_, err := Parse(v, b)
		var ae *apperr.Error
		if !errors.As(err, &ae) || ae.Code != apperr.Invalid || ae.Field != field {
			t.Errorf("%q: %v, want invalid_request on %s", query, err, field)
		}
	}
}

func TestCursorRoundTrip(t *testing.T) {
	type pos struct {
		K string `json:"k"`
		N int    `json:"n"`
	}
	c := EncodeCursor(pos{K: "x", N: 3})
	var got pos
	if err := DecodeCursor(c, &got); err != nil || got != (pos{K: "x", N: 3}) {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	for _, s := range []string{"!!", "e30x", EncodeCursor(map[string]int{"other": 1}), EncodeCursor([]int{1})} {
		if err := DecodeCursor(s, &got); err == nil {
			t.Errorf("%q decoded", s)
		}
	}
}

// Check is Parse for a request that comes typed (an MCP tool's arguments):
// the same defaults, clamp, window and fields at fault.
func TestCheck(t *testing.T) {
	b := Bounds{DefaultLimit: 20, MaxLimit: 100, Window: 1000}
	n := func(i int) *int { return &i }
	ok := []struct {
		ask  Ask
		want Request
	}{
		{Ask{}, Request{Limit: 20}},
		{Ask{Limit: n(5), Page: n(3)}, Request{Limit: 5, Offset: 10}},
		{Ask{Limit: n(500)}, Request{Limit: 100}},
		{Ask{Offset: n(7)}, Request{Limit: 20, Offset: 7}},
		{Ask{Limit: n(3), Cursor: "abc"}, Request{Limit: 3, Cursor: "abc"}},
	}
	for _, tc := range ok {
		if got, err := b.Check(tc.ask); err != nil || got != tc.want {
			t.Errorf("%+v: %+v %v, want %+v", tc.ask, got, err, tc.want)
		}
		// A checked request passes Apply unchanged.
		if got, err := b.Apply(tc.want); err != nil || got != tc.want {
			t.Errorf("Apply(%+v): %+v %v", tc.want, got, err)
		}
	}
	if got, err := b.Apply(Request{}); err != nil || got != (Request{Limit: 20}) {
		t.Errorf("Apply of the zero request: %+v %v, want the default limit", got, err)
	}
	if _, err := b.Apply(Request{Limit: 20, Offset: 990}); err == nil {
		t.Error("Apply let a request past the window through")
	}
	bad := []struct {
		ask   Ask
		field string
	}{
		{Ask{Limit: n(0)}, "limit"}, {Ask{Page: n(0)}, "page"}, {Ask{Offset: n(-1)}, "offset"},
		{Ask{Page: n(1), Offset: n(2)}, "page"}, {Ask{Cursor: "a", Offset: n(0)}, "cursor"},
		{Ask{Page: n(1001)}, "page"}, {Ask{Page: n(51)}, "offset"},
	}
	for _, tc := range bad {
		_, err := b.Check(tc.ask)
		var ae *apperr.Error
		if !errors.As(err, &ae) || ae.Code != apperr.Invalid || ae.Field != tc.field {
			t.Errorf("%+v: %v, want invalid_request on %s", tc.ask, err, tc.field)
		}
	}
}

// A list that pages one way only does not read the other way's parameters.
func TestParseReadsOnlyWhatTheListPagesBy(t *testing.T) {
	keyset := Bounds{DefaultLimit: 20, MaxLimit: 100, Window: 100, NoOffset: true}
	v := url.Values{"cursor": {"abc"}, "page": {"9"}, "offset": {"x"}}
	if got, err := Parse(v, keyset); err != nil || got != (Request{Limit: 20, Cursor: "abc"}) {
		t.Errorf("cursor-only list: %+v %v", got, err)
	}
	offsets := Bounds{DefaultLimit: 20, MaxLimit: 100, Window: 1000, NoCursor: true}
	if got, err := Parse(url.Values{"cursor": {"abc"}, "page": {"2"}}, offsets); err != nil || got != (Request{Limit: 20, Offset: 20}) {
		t.Errorf("offset-only list: %+v %v", got, err)
	}
}
