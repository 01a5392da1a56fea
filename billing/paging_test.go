package billing_test

import (
	"net/url"
	"testing"

	"github.com/google/uuid"

	"broll/billing"
	"broll/internal/apperr"
	"broll/internal/paging"
	"broll/tenancy"
)

// TestListPaging: a huge limit is clamped to 500 like the catalog clamps to
// its own maximum; a bad one is 400; a page that ends past the first 10,000
// purchases is 400 with max_result_window, however it is asked for. The
// page is read as the adapters read it, against ListBounds.
func TestListPaging(t *testing.T) {
	t.Parallel()
	root := tenancy.Principal{KeyID: uuid.New(), AccountID: uuid.New(), Kind: tenancy.KindRoot}
	parse := func(query string) (billing.ListQuery, error) {
		v, err := url.ParseQuery(query)
		if err != nil {
			t.Fatal(err)
		}
		pr, err := paging.Parse(v, billing.ListBounds)
		if err != nil {
			return billing.ListQuery{}, err
		}
		return billing.ListParams{Page: pr}.Parse(root)
	}
	ok := []struct {
		query         string
		limit, offset int
	}{
		{"", 50, 0},
		{"limit=501", 500, 0},
		{"limit=99999999999999999999999", 500, 0},
		{"limit=100&page=100", 100, 9900},
		{"limit=500&offset=9500", 500, 9500},
		{"offset=9950", 50, 9950},
	}
	for _, tc := range ok {
		q, err := parse(tc.query)
		if err != nil || q.Limit != tc.limit || q.Offset != tc.offset {
			t.Errorf("%q: limit %d offset %d (%v), want %d %d", tc.query, q.Limit, q.Offset, err, tc.limit, tc.offset)
		}
	}
	bad := []struct {
		query  string
		window bool
	}{
		{"limit=0", false},
		{"limit=-99999999999999999999999", false},
		{"limit=ten", false},
		{"page=0", false},
		{"offset=-1", false},
		{"page=2&offset=3", false},
		{"limit=100&page=101", true},
		{"page=99999999999999999999999", true},
		{"limit=500&offset=9501", true},
		{"offset=10000", true},
		{"offset=99999999999999999999999", true},
	}
	for _, tc := range bad {
		_, err := parse(tc.query)
		e, isApp := apperr.As(err)
		if !isApp || e.Code != apperr.Invalid {
			t.Errorf("%q: %v, want invalid_request", tc.query, err)
			continue
		}
		if _, has := e.Fields["max_result_window"]; has != tc.window {
			t.Errorf("%q: max_result_window given: %v, want %v (%v)", tc.query, has, tc.window, err)
		}
	}
	// v0 has no cursor: the legacy bounds do not read one.
	if pr, err := paging.Parse(url.Values{"cursor": {"x"}, "page": {"2"}}, billing.LegacyListBounds); err != nil || pr.Cursor != "" || pr.Offset != 50 {
		t.Errorf("legacy page with a cursor: %+v %v", pr, err)
	}
}

// TestListEmotionAsCatalog: the emotion filter reads as the catalog's does.
func TestListEmotionAsCatalog(t *testing.T) {
	t.Parallel()
	root := tenancy.Principal{KeyID: uuid.New(), AccountID: uuid.New(), Kind: tenancy.KindRoot}
	for in, want := range map[string]string{"happy": "happy", " Happy ": "happy", "LAUGHING": "laughing", "": ""} {
		q, err := billing.ListParams{Emotion: in}.Parse(root)
		if err != nil || q.Emotion != want {
			t.Errorf("emotion %q: %q %v, want %q", in, q.Emotion, err, want)
		}
	}
	_, err := billing.ListParams{Emotion: "meh"}.Parse(root)
	if e, ok := apperr.As(err); !ok || e.Code != apperr.Invalid || e.Field != "emotion" || e.Fields["allowed_values"] == nil {
		t.Errorf("unknown emotion: %v", err)
	}
}
