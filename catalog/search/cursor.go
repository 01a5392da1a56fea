package search

import (
	"encoding/json"
	"hash/fnv"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"broll/internal/apperr"
	"broll/internal/paging"
)

// position is where a keyset page starts: after the row whose sort key is
// key and id is id. key holds the type the sort's SQL key has (sortKey):
// time.Time, int64, float64, or float32 for a keyword rank.
type position struct {
	key any
	id  uuid.UUID
	// n is how many rows came before (the offset the page reports); it
	// bounds a semantic search to its window.
	n int
}

// cursorJSON is a position as it travels in a cursor, with the sort and a
// fingerprint of the filters so that a cursor of another query is refused.
type cursorJSON struct {
	Sort  string          `json:"s"`
	Order string          `json:"o"`
	Query string          `json:"q"`
	Key   json.RawMessage `json:"k"`
	ID    uuid.UUID       `json:"i"`
	N     int             `json:"n"`
}

// fingerprint identifies what a cursor's query selects (filters and search
// texts), so that its cursor cannot continue another query's order.
func (q Query) fingerprint() string {
	h := fnv.New64a()
	num := func(f *float64) string {
		if f == nil {
			return ""
		}
		return strconv.FormatFloat(*f, 'g', -1, 64)
	}
	vir, owned := "", ""
	if q.MinVirality != nil {
		vir = strconv.Itoa(*q.MinVirality)
	}
	if q.Owned != nil {
		owned = strconv.FormatBool(*q.Owned)
	}
	for _, s := range []string{q.Emotion, q.Gender, q.AgeRange, q.Location, q.MediaType, q.Orientation,
		q.Difficulty, q.ModelID, num(q.MinDuration), num(q.MaxDuration), vir, owned, q.Search, q.SemanticSearch} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	if q.SimilarTo != uuid.Nil {
		// Another clip's neighbours are another order.
		h.Write(q.SimilarTo[:])
	}
	return strconv.FormatUint(h.Sum64(), 36)
}

// encodeCursor is the next_cursor after a row with sort key key.
func (q Query) encodeCursor(key any, id uuid.UUID, n int) string {
	// Times and floats travel as text: a time keeps its microseconds, and a
	// duration key of a clip without one is +Inf, which JSON has no number for.
	switch k := key.(type) {
	case time.Time:
		key = k.UTC().Format(time.RFC3339Nano)
	case float64:
		key = strconv.FormatFloat(k, 'g', -1, 64)
	case float32:
		key = strconv.FormatFloat(float64(k), 'g', -1, 32)
	}
	k, err := json.Marshal(key)
	if err != nil {
		panic("catalog: cursor key: " + err.Error())
	}
	return paging.EncodeCursor(cursorJSON{Sort: q.SortBy, Order: q.SortOrder, Query: q.fingerprint(), Key: k, ID: id, N: n})
}

// decodeCursor reads q.Cursor, which must have been made for this query's
// filters and sort; the key is read back as the type its sort uses.
func (q Query) decodeCursor() (position, error) {
	var c cursorJSON
	if err := paging.DecodeCursor(q.Cursor, &c); err != nil {
		return position{}, err
	}
	if c.Sort != q.SortBy || c.Order != q.SortOrder || c.Query != q.fingerprint() || c.N < 0 || c.N > MaxCursorRows {
		return position{}, paging.BadCursor()
	}
	p := position{id: c.ID, n: c.N}
	var err error
	switch {
	case q.semanticRanked():
		p.key, err = cursorNumber(c.Key, 64)
		if err == nil && c.N > MaxSemanticWindow-q.Limit {
			return p, apperr.InvalidField("cursor", "%s are paged up to the %d most similar clips; "+
				"add filters to narrow the search", q.rankedResults(), MaxSemanticWindow).With("max_result_window", MaxSemanticWindow)
		}
	case q.SortBy == SortRelevance:
		var f float64
		f, err = cursorNumber(c.Key, 32)
		p.key = float32(f)
	case q.SortBy == SortCreatedAt:
		var s string
		if err = json.Unmarshal(c.Key, &s); err == nil {
			p.key, err = time.Parse(time.RFC3339Nano, s)
		}
	case q.SortBy == SortDuration:
		p.key, err = cursorNumber(c.Key, 64)
	default: // price and virality: whole numbers
		p.key, err = strconv.ParseInt(strings.TrimSpace(string(c.Key)), 10, 64)
	}
	if err != nil {
		return position{}, paging.BadCursor()
	}
	return p, nil
}

// MaxCursorRows bounds the row count a cursor carries (it only reports an
// offset); a larger one was not made here.
const MaxCursorRows = 1 << 40

func cursorNumber(raw json.RawMessage, bits int) (float64, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return 0, err
	}
	f, err := strconv.ParseFloat(s, bits)
	if err == nil && math.IsNaN(f) {
		err = strconv.ErrSyntax
	}
	return f, err
}
