package billing

import (
	"hash/fnv"
	"math"
	"strconv"
	"time"

	"github.com/google/uuid"

	"broll/internal/paging"
)

// listPosition is where a keyset page of purchases starts: after the row
// with this time and id (and, ranked by meaning, this similarity). n is how
// many rows came before it, the offset the page reports.
type listPosition struct {
	at         time.Time
	id         uuid.UUID
	similarity *float64
	n          int
}

// listCursorJSON is a position as it travels in a cursor, with a
// fingerprint of the query's filters so that a cursor of another query is
// refused rather than continuing the wrong list.
type listCursorJSON struct {
	Query      string    `json:"q"`
	At         string    `json:"t"`
	ID         uuid.UUID `json:"i"`
	Similarity string    `json:"s,omitempty"`
	N          int       `json:"n"`
}

// maxCursorRows bounds the row count a cursor carries; a larger one was
// not made here.
const maxCursorRows = 1 << 40

// fingerprint identifies what the query selects. The principal is not in
// it: a cursor only names a position, and every page is still cut to what
// the calling key may see.
func (q ListQuery) fingerprint() string {
	h := fnv.New64a()
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
	for _, s := range []string{day(q.Start), day(q.End), q.Search, q.SemanticSearch, q.Emotion, key} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	// Only when set, so that the cursors of the queries without it, issued
	// before it existed, still read back.
	if q.LicenseStatus != "" {
		h.Write([]byte("license_status=" + string(q.LicenseStatus)))
	}
	return strconv.FormatUint(h.Sum64(), 36)
}

// nextCursor is the cursor after r, the n-th row of the list.
func (q ListQuery) nextCursor(r PurchaseRecord, n int) string {
	c := listCursorJSON{Query: q.fingerprint(), At: r.PurchasedAt.UTC().Format(time.RFC3339Nano), ID: r.PurchaseID, N: n}
	if q.SemanticSearch != "" && r.Similarity != nil {
		// As text: 'g' with -1 digits reads back as the very same float64,
		// so the keyset comparison meets the row's own similarity.
		c.Similarity = strconv.FormatFloat(*r.Similarity, 'g', -1, 64)
	}
	return paging.EncodeCursor(c)
}

// decodeCursor reads a cursor handed out for this query's filters.
func (q ListQuery) decodeCursor(s string) (*listPosition, error) {
	var c listCursorJSON
	if err := paging.DecodeCursor(s, &c); err != nil {
		return nil, err
	}
	if c.Query != q.fingerprint() || c.N < 0 || c.N > maxCursorRows || (c.Similarity != "") != (q.SemanticSearch != "") {
		return nil, paging.BadCursor()
	}
	at, err := time.Parse(time.RFC3339Nano, c.At)
	if err != nil {
		return nil, paging.BadCursor()
	}
	p := &listPosition{at: at, id: c.ID, n: c.N}
	if c.Similarity != "" {
		f, err := strconv.ParseFloat(c.Similarity, 64)
		if err != nil || math.IsNaN(f) {
			return nil, paging.BadCursor()
		}
		p.similarity = &f
	}
	return p, nil
}
