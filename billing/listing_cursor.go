package billing

import (
	"time"

	"broll/internal/paging"
)

// fingerprint identifies what the query selects. The principal is not in
// it: a cursor only names a position, and every page is still cut to what
// the calling key may see.
func (q ListQuery) fingerprint() string {
	day := func(t *time.Time) string {
		if t == nil {
			return ""
		}
		return t.Format(time.DateOnly)
	}
	key := ""
	if q.KeyID != nil {
		key = q.KeyID.String()
	}
	return paging.Fingerprint(day(q.Start), day(q.End), q.Search, q.SemanticSearch, q.Emotion, key, string(q.LicenseStatus))
}

// order is the listing's order: newest first, ties (one batch shares its
// time) by id, both descending, so that the keyset condition on the pair
// and the (account_id | api_key_id, purchased_at, id) indexes yield it as
// they are; ranked by meaning, by similarity (the expression) first.
func (q ListQuery) order(similarity string) paging.Order {
	o := paging.Order{Keys: []string{"p.purchased_at"}, ID: "p.id", Desc: true}
	if q.SemanticSearch != "" {
		o.Keys = []string{similarity, "p.purchased_at"}
	}
	return o
}

// cursorKinds are the types of the order's keys, as a cursor reads them.
func (q ListQuery) cursorKinds() []paging.Kind {
	if q.SemanticSearch != "" {
		// The similarity travels as text that reads back as the very same
		// float64, so the keyset comparison meets the row's own value.
		return []paging.Kind{paging.KeyFloat, paging.KeyTime}
	}
	return []paging.Kind{paging.KeyTime}
}

// nextCursor is the cursor after r, the n-th row of the list.
func (q ListQuery) nextCursor(r PurchaseRecord, n int) paging.Cursor {
	c := paging.Cursor{Query: q.fingerprint(), Keys: []any{r.PurchasedAt}, ID: r.PurchaseID, N: n}
	if q.SemanticSearch != "" && r.Similarity != nil {
		c.Keys = []any{*r.Similarity, r.PurchasedAt}
	}
	return c
}
