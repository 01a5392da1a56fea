package billing_test

import (
	"net/url"
	"slices"
	"testing"

	"github.com/google/uuid"

	"broll/billing"
	"broll/internal/apperr"
	"broll/internal/database"
	"broll/internal/paging"
	"broll/tenancy"
)

// FuzzListParams drives the purchase-history parser with arbitrary values:
// it must never panic, must refuse only with a client error, and whatever it
// accepts must be safe to run (bounded page, text Postgres takes, one search
// at most, the key filter for root keys only). The seeds run with every
// `go test`; `make fuzz` explores further.
func FuzzListParams(f *testing.F) {
	for _, s := range [][9]string{
		{"", "", "", "", "", "", "", "", ""},
		{"2026-11-01", "2026-11-30", "coffee", "", "happy", uuid.NewString(), "50", "2", ""},
		{"2026-11-30", "2026-11-01", "", "", "", "", "", "", ""},
		{"2026-02-30", "11/01/2026", "", "", "", "", "", "", ""},
		{"", "", "coffee", "woman laughing", "", "", "", "", ""},
		{"", "", "laugh\xed\xa0\x80car", "", "", "", "", "", ""},
		{"", "", "", "a\x00b", "", "", "", "", ""},
		{"", "", "", "", "Happy", "", "", "", ""},
		{"", "", "", "", "", "not-a-uuid", "", "", ""},
		{"", "", "", "", "", "", "1e400", "", ""},
		{"", "", "", "", "", "", "9223372036854775808", "", ""},
		{"", "", "", "", "", "", "-1", "0", ""},
		{"", "", "", "", "", "", "500000", "1000000", ""},
		{"", "", "", "", "", "", "", "3", "100"},
		{"", "", "", "", "", "", "", "", "-9223372036854775809"},
		{"", "", "", "", "", "", " 5", "+2", "0x10"},
	} {
		f.Add(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], true)
		f.Add(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], false)
	}
	f.Fuzz(func(t *testing.T, start, end, search, semantic, emotion, keyID, limit, page, offset string, root bool) {
		// The page is read as the adapters read it, against the listing's bounds.
		pr, err := paging.Parse(url.Values{"limit": {limit}, "page": {page}, "offset": {offset}}, billing.ListBounds)
		if err != nil {
			if apperr.CodeOf(err) != apperr.Invalid {
				t.Fatalf("limit %q page %q offset %q: %v, want invalid_request", limit, page, offset, err)
			}
			return
		}
		lp := billing.ListParams{StartDate: start, EndDate: end, Search: search, SemanticSearch: semantic,
			Emotion: emotion, APIKeyID: keyID, Page: pr}
		p := tenancy.Principal{KeyID: uuid.New(), AccountID: uuid.New(), Kind: tenancy.KindCustomer}
		if root {
			p.Kind = tenancy.KindRoot
		}
		q, err := lp.Parse(p)
		if err != nil {
			ae, ok := apperr.As(err)
			if !ok {
				t.Fatalf("%+v: %v is not an application error", lp, err)
			}
			switch ae.Code {
			case apperr.Invalid, apperr.ConflictingSearch:
			case apperr.Forbidden:
				if root || keyID == "" {
					t.Fatalf("%+v: forbidden for a root key or without api_key_id", lp)
				}
			default:
				t.Fatalf("%+v: code %s, want a 400 or 403", lp, ae.Code)
			}
			return
		}
		if q.Limit < 1 || q.Limit > 500 || (limit == "" && q.Limit != 50) {
			t.Fatalf("%+v: limit %d", lp, q.Limit)
		}
		// No page ends past the first 10,000 purchases.
		if q.Offset < 0 || q.Offset+q.Limit > 10_000 {
			t.Fatalf("%+v: offset %d", lp, q.Offset)
		}
		if q.Start != nil && q.End != nil && q.Start.After(*q.End) {
			t.Fatalf("%+v: start after end", lp)
		}
		if (start == "") != (q.Start == nil) || (end == "") != (q.End == nil) {
			t.Fatalf("%+v: a date was dropped or invented", lp)
		}
		if q.Search != "" && q.SemanticSearch != "" {
			t.Fatalf("%+v: both searches accepted", lp)
		}
		for _, s := range []string{q.Search, q.SemanticSearch, q.Emotion} {
			if !database.ValidText(s) || len(s) > 1000 {
				t.Fatalf("%+v: accepted text Postgres would refuse or too long: %q", lp, s)
			}
		}
		if q.Emotion != "" && !slices.Contains([]string{"neutral", "happy", "playful", "confident", "surprised",
			"confused", "shocked", "laughing", "curious", "amazed", "excited", "sad", "angry"}, q.Emotion) {
			t.Fatalf("%+v: unknown emotion %q accepted", lp, q.Emotion)
		}
		if (keyID != "") != (q.KeyID != nil) || (q.KeyID != nil && !root) {
			t.Fatalf("%+v: key filter %v for root=%v", lp, q.KeyID, root)
		}
	})
}
