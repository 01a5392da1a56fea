package billing_test

import (
	"testing"

	"github.com/google/uuid"

	"broll/billing"
	"broll/internal/apperr"
	"broll/tenancy"
)

// TestListPaging: a huge limit is clamped to 500 like the catalog clamps to
// its own maximum; a bad one is 400; a page that ends past the first 10,000
// purchases is 400 with max_result_window, however it is asked for.
func TestListPaging(t *testing.T) {
	t.Parallel()
	root := tenancy.Principal{KeyID: uuid.New(), AccountID: uuid.New(), Kind: tenancy.KindRoot}
	ok := []struct {
		lp            billing.ListParams
		limit, offset int
	}{
		{billing.ListParams{}, 50, 0},
		{billing.ListParams{Limit: "501"}, 500, 0},
		{billing.ListParams{Limit: "99999999999999999999999"}, 500, 0},
		{billing.ListParams{Limit: "100", Page: "100"}, 100, 9900},
		{billing.ListParams{Limit: "500", Offset: "9500"}, 500, 9500},
		{billing.ListParams{Offset: "9950"}, 50, 9950},
	}
	for _, tc := range ok {
		q, err := tc.lp.Parse(root)
		if err != nil || q.Limit != tc.limit || q.Offset != tc.offset {
			t.Errorf("%+v: limit %d offset %d (%v), want %d %d", tc.lp, q.Limit, q.Offset, err, tc.limit, tc.offset)
		}
	}
	bad := []struct {
		lp     billing.ListParams
		window bool
	}{
		{billing.ListParams{Limit: "0"}, false},
		{billing.ListParams{Limit: "-99999999999999999999999"}, false},
		{billing.ListParams{Limit: "ten"}, false},
		{billing.ListParams{Page: "0"}, false},
		{billing.ListParams{Offset: "-1"}, false},
		{billing.ListParams{Page: "2", Offset: "3"}, false},
		{billing.ListParams{Limit: "100", Page: "101"}, true},
		{billing.ListParams{Page: "99999999999999999999999"}, true},
		{billing.ListParams{Limit: "500", Offset: "9501"}, true},
		{billing.ListParams{Offset: "10000"}, true},
		{billing.ListParams{Offset: "99999999999999999999999"}, true},
	}
	for _, tc := range bad {
		_, err := tc.lp.Parse(root)
		e, isApp := apperr.As(err)
		if !isApp || e.Code != apperr.Invalid {
			t.Errorf("%+v: %v, want invalid_request", tc.lp, err)
			continue
		}
		if _, has := e.Fields["max_result_window"]; has != tc.window {
			t.Errorf("%+v: max_result_window given: %v, want %v (%v)", tc.lp, has, tc.window, err)
		}
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
