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
