package search

import (
	"math"
	"strconv"

	"github.com/google/uuid"

	"broll/internal/apperr"
	"broll/internal/paging"
)

// fingerprint identifies what a cursor's query selects and in which order
// (filters, search texts, sort), so that its cursor cannot continue another
// query's order.
func (q Query) fingerprint() string {
	num := func(f *float64) string {
		if f == nil {
			return ""
		}
		return strconv.FormatFloat(*f, 'g', -1, 64)
	}
	vir, owned, similar := "", "", ""
	if q.MinVirality != nil {
		vir = strconv.Itoa(*q.MinVirality)
	}
	if q.Owned != nil {
		owned = strconv.FormatBool(*q.Owned)
	}
	if q.SimilarTo != uuid.Nil {
		// Another clip's neighbours are another order.
		similar = q.SimilarTo.String()
	}
	return paging.Fingerprint(q.SortBy, q.SortOrder, q.Emotion, q.Gender, q.AgeRange, q.Location, q.MediaType, q.Orientation,
		q.Difficulty, q.ModelID, num(q.MinDuration), num(q.MaxDuration), vir, owned, q.Search, q.SemanticSearch, similar)
}

// cursor is the next_cursor after a row with sort key key (as its sort's
// SQL gives it), the n-th row of the list.
func (q Query) cursor(key any, id uuid.UUID, n int) paging.Cursor {
	return paging.Cursor{Query: q.fingerprint(), Keys: []any{key}, ID: id, N: n}
}

// keyKind is the type of the sort's SQL key (sortKey), as a cursor reads
// it back: the vector distance (float8) of a semantic ranking, ts_rank's
// real, a time, a duration, or a whole number (price and virality).
func (q Query) keyKind() paging.Kind {
	switch {
	case q.semanticRanked(), q.SortBy == SortDuration:
		return paging.KeyFloat
	case q.SortBy == SortRelevance:
		return paging.KeyFloat32
	case q.SortBy == SortCreatedAt:
		return paging.KeyTime
	}
	return paging.KeyInt
}

// readCursor reads q.Cursor, which must have been made for this query's
// filters and sort. A semantic ranking's cursor stays within its window.
func (q Query) readCursor() (paging.Cursor, error) {
	c, err := paging.ReadCursor(q.Cursor, q.fingerprint(), q.keyKind())
	if err != nil {
		return c, err
	}
	if k, ok := c.Keys[0].(int64); ok && q.SortBy == SortVirality && (k < math.MinInt32 || k > math.MaxInt32) {
		// The virality key is an int4 in SQL: no row's is out of its
		// range, and Postgres would refuse the argument.
		return paging.Cursor{}, paging.BadCursor()
	}
	if q.semanticRanked() && c.N > MaxSemanticWindow-q.Limit {
		return c, apperr.InvalidField("cursor", "%s are paged up to the %d most similar clips; "+
			"add filters to narrow the search", q.rankedResults(), MaxSemanticWindow).With("max_result_window", MaxSemanticWindow)
	}
	return c, nil
}
