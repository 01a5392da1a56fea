package search

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"broll/catalog/catalogtest"
	"broll/catalog/imports"
	"broll/internal/apperr"
	"broll/internal/paging"
)

// walk pages through q with cursors of limit rows and returns the keys of
// every page in order.
func (f *fixture) walk(t *testing.T, q Query, limit int) []string {
	t.Helper()
	var seen []string
	q.Limit = limit
	for range 100 {
		p := f.search(t, q)
		seen = append(seen, f.Keys(p.Videos)...)
		if p.NextCursor == "" {
			if p.HasMore {
				t.Fatalf("%+v: has_more without a next cursor", q)
			}
			return seen
		}
		q.Cursor = p.NextCursor
	}
	t.Fatalf("%+v: no last page after 100 pages", q)
	return nil
}

func TestCursorPagesEverySort(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	queries := []Query{{}}
	for _, by := range []string{SortCreatedAt, SortPrice, SortDuration, SortVirality} {
		for _, order := range []string{SortAsc, SortDesc} {
			queries = append(queries, Query{SortBy: by, SortOrder: order}, Query{SortBy: by, SortOrder: order, Gender: "female"})
		}
	}
	queries = append(queries, Query{Search: "laugh"}, Query{Search: "coffee or car"},
		Query{SemanticSearch: "someone laughing"}, Query{SemanticSearch: "someone laughing", Gender: "male"},
		Query{SemanticSearch: "someone laughing", SortBy: SortDuration, SortOrder: SortAsc})
	for _, q := range queries {
		whole := q
		whole.Limit = 100
		want := f.Keys(f.search(t, whole).Videos)
		if got := f.walk(t, q, 3); !slices.Equal(got, want) {
			t.Errorf("%+v by cursor:\ngot  %v\nwant %v", q, got, want)
		}
	}
}

// TestCursorStableWhileImporting pages the newest-first list while other
// clips are imported: the new clips are newer than the cursor, so the
// pages continue exactly where they were, with nothing skipped or repeated.
func TestCursorStableWhileImporting(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	want := catalogtest.ClipKeys(f.Live(nil))
	full := f.WriteFile(t, "media/new.avi", []byte("RIFF0000AVI "))

	// The first page is taken before the imports start: clips imported
	// before it would rightly be on it, as the newest.
	first := f.search(t, Query{Limit: 4})
	if first.NextCursor == "" {
		t.Fatal("the first page has no next cursor")
	}
	var wg sync.WaitGroup
	errs := make(chan error, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 10 {
			in := []imports.VideoInput{{Title: fmt.Sprintf("New clip %d", i), Emotion: "happy", Gender: "female",
				Difficulty: "easy", MediaFile: full}}
			if _, err := f.Imports.ImportVideos(f.Ctx, in, f.Src, nil); err != nil {
				errs <- err
				return
			}
		}
	}()
	got := append(f.Keys(first.Videos), f.walk(t, Query{Cursor: first.NextCursor}, 4)...)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("pages while importing:\ngot  %v\nwant %v", got, want)
	}
	// The pages an offset would give are shifted by the new clips; a cursor
	// taken now still continues after its row.
	catalogtest.MediaPassed(t, f.Pool)
	p := f.search(t, Query{Limit: 4})
	if f.Keys(p.Videos)[0] == want[0] {
		t.Fatal("the imported clips are not the newest")
	}
}

func TestCursorRefusesAnotherQuery(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	p := f.search(t, Query{SortBy: SortPrice, Emotion: "happy", Limit: 1})
	if p.NextCursor == "" {
		t.Fatal("no next cursor")
	}
	bad := []Query{
		{SortBy: SortPrice, Emotion: "sad", Cursor: p.NextCursor},                        // other filters
		{SortBy: SortCreatedAt, Emotion: "happy", Cursor: p.NextCursor},                  // other sort
		{SortBy: SortPrice, SortOrder: SortAsc, Emotion: "happy", Cursor: p.NextCursor},  // other order
		{SortBy: SortPrice, Emotion: "happy", Cursor: p.NextCursor + "x"},                // tampered
		{SortBy: SortPrice, Emotion: "happy", Cursor: "bm90IGEgY3Vyc29y"},                // not one of ours
		{SortBy: SortPrice, Emotion: "happy", Cursor: p.NextCursor, Offset: 1},           // with an offset
		{SortBy: SortPrice, Emotion: "happy", Cursor: "eyJzIjoicHJpY2UiLCJrIjoiYSJ9"},    // wrong key type
		{Search: "laugh", Cursor: "eyJzIjoicmVsZXZhbmNlIiwibyI6ImRlc2MiLCJrIjoiTmFOIn0"}, // NaN rank
	}
	for _, q := range bad {
		_, err := f.svc.Search(f.Ctx, q, f.QE)
		var ae *apperr.Error
		if !errors.As(err, &ae) || ae.Code != apperr.Invalid || ae.Field != "cursor" {
			t.Errorf("%+v: %v, want invalid_request on cursor", q, err)
		}
	}
	if q := (Query{Cursor: p.NextCursor, Offset: 20}); q.Validate() == nil {
		t.Error("cursor with page accepted")
	}
}

// TestTotalsEstimatePastTheBound checks that a search counts exactly up to
// CountBound and reports the planner's estimate past it.
func TestTotalsEstimatePastTheBound(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	live := len(f.Live(nil))
	p := f.search(t, Query{})
	if p.Total != live || !p.TotalExact {
		t.Fatalf("small catalog: total %d exact %v, want %d exact", p.Total, p.TotalExact, live)
	}
	if _, err := f.Pool.Exec(f.Ctx, `
		INSERT INTO videos (id, title, emotion, gender, difficulty, media_key)
		SELECT gen_random_uuid(), 'bulk clip ' || i, 'neutral', 'male', 'easy', 'clips/bulk/' || i
		FROM generate_series(1, $1) AS i`, CountBound+500); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Pool.Exec(f.Ctx, `ANALYZE videos`); err != nil {
		t.Fatal(err)
	}
	p = f.search(t, Query{})
	if p.TotalExact || p.Total <= CountBound || !p.HasMore || p.NextCursor == "" {
		t.Fatalf("large catalog: total %d exact %v has_more %v", p.Total, p.TotalExact, p.HasMore)
	}
	// The planner's estimate is near the truth after ANALYZE.
	if want := live + CountBound + 500; p.Total < want*8/10 || p.Total > want*12/10 {
		t.Errorf("estimate %d, want about %d", p.Total, want)
	}
	// Two words, each also a prefix: the estimate is the total, near the
	// truth.
	if p := f.search(t, Query{Search: "bulk clip"}); p.TotalExact || p.Total < (CountBound+500)*8/10 || p.Total > (CountBound+500)*12/10 {
		t.Errorf("bulk clip: total %d exact %v, want about %d, estimated", p.Total, p.TotalExact, CountBound+500)
	}
	// The estimate is kept for countCacheTTL: more clips and a fresh
	// ANALYZE do not move it until then, and a page further on reports
	// the same total without asking the planner again.
	est := p.Total
	if _, err := f.Pool.Exec(f.Ctx, `
		INSERT INTO videos (id, title, emotion, gender, difficulty, media_key)
		SELECT gen_random_uuid(), 'more clip ' || i, 'neutral', 'male', 'easy', 'clips/more/' || i
		FROM generate_series(1, 3000) AS i`); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Pool.Exec(f.Ctx, `ANALYZE videos`); err != nil {
		t.Fatal(err)
	}
	if p := f.search(t, Query{Cursor: p.NextCursor}); p.Total != est || p.TotalExact {
		t.Fatalf("within the TTL: total %d exact %v, want the kept estimate %d", p.Total, p.TotalExact, est)
	}
	later := time.Now().Add(countCacheTTL)
	f.svc.counts.now = func() time.Time { return later }
	if p := f.search(t, Query{}); p.Total < est+3000*8/10 || p.TotalExact {
		t.Fatalf("after the TTL: total %d exact %v, want about %d", p.Total, p.TotalExact, est+3000)
	}
	// A filter the bulk clips do not pass is still counted exactly.
	happy := len(f.Live(func(c fixClip) bool { return c.In.Emotion == "happy" }))
	if p := f.search(t, Query{Emotion: "happy"}); p.Total != happy || !p.TotalExact {
		t.Fatalf("happy: total %d exact %v, want %d exact", p.Total, p.TotalExact, happy)
	}
	// The bulk clips took their tier's price from the row's trigger.
	var unpriced int
	if err := f.Pool.QueryRow(f.Ctx, `SELECT count(*) FROM videos WHERE price_cents IS NULL`).Scan(&unpriced); err != nil || unpriced != 0 {
		t.Fatalf("clips without a price: %d (%v)", unpriced, err)
	}
	_ = uuid.Nil
}

// A cursor a client made with a virality key past int4's range, which no
// clip has and Postgres refuses as an argument, is a bad cursor (400), not
// a failed statement: found comparing the node's listings with the page
// statement on cursors at the ends of each key's range.
func TestViralityCursorBeyondInt4IsBad(t *testing.T) {
	t.Parallel()
	for _, k := range []int64{1 << 31, -1<<31 - 1, 1<<63 - 1} {
		q := Query{SortBy: SortVirality, Limit: 5}
		if err := q.Validate(); err != nil {
			t.Fatal(err)
		}
		q.Cursor = paging.Cursor{Query: q.fingerprint(), Keys: []any{k}, ID: uuid.New(), N: 5}.Encode()
		err := q.Validate()
		var ae *apperr.Error
		if !errors.As(err, &ae) || ae.Code != apperr.Invalid || ae.Field != "cursor" {
			t.Fatalf("virality key %d: %v, want an invalid cursor", k, err)
		}
	}
	q := Query{SortBy: SortVirality, Limit: 5}
	_ = q.Validate()
	q.Cursor = paging.Cursor{Query: q.fingerprint(), Keys: []any{int64(1<<31 - 1)}, ID: uuid.New(), N: 5}.Encode()
	if err := q.Validate(); err != nil {
		t.Fatalf("virality key at int4's end: %v", err)
	}
}
