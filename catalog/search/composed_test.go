package search

import (
	"fmt"
	"testing"

	"broll/catalog/catalogtest"
)

// composedCatalog is 6,000 clips whose words and filters spread evenly:
// "sunset" in half of them, "beach" in a third, every emotion, gender,
// orientation and duration in its share, and one location in twelve
// clips only. Large enough that the planner estimates from statistics and
// that common words pass CountBound; vacuumed, so that an index alone
// may answer a filter (index-only scans).
func composedCatalog(t *testing.T) (*catalogtest.Catalog, *Service) {
	t.Helper()
	b := catalogtest.New(t, nil)
	if _, err := b.Pool.Exec(b.Ctx, `
		INSERT INTO videos (id, title, description, emotion, gender, orientation, location, duration_seconds,
		                    difficulty, media_key)
		SELECT gen_random_uuid(),
		       CASE WHEN i % 2 = 0 THEN 'Sunset clip ' || i ELSE 'Evening clip ' || i END,
		       CASE WHEN i % 3 = 0 THEN 'on the beach' ELSE 'in town' END,
		       (ARRAY['happy', 'sad', 'neutral', 'excited', 'confident'])[i % 5 + 1],
		       (ARRAY['female', 'male', 'non_binary'])[i % 7 % 3 + 1],
		       (ARRAY['vertical', 'horizontal', 'square'])[i % 11 % 3 + 1],
		       CASE WHEN i % 500 = 0 THEN 'reykjavik' ELSE 'oslo' END,
		       1 + i % 60, 'easy', 'clips/composed/' || i
		FROM generate_series(1, 6000) AS i`); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Pool.Exec(b.Ctx, `VACUUM ANALYZE videos`); err != nil {
		t.Fatal(err)
	}
	return b, New(b.Cat)
}

// TestComposedTotalsAreThePlanners: a keyword search with filters composes
// its estimate from the words' and the filters' (composeParts), and it is
// the planner's own estimate of the whole count within rounding; the total
// a search reports follows from it: counted exactly when few clips match
// and counting the words' or the filters' matches is cheap, the estimate
// otherwise.
func TestComposedTotalsAreThePlanners(t *testing.T) {
	t.Parallel()
	b, svc := composedCatalog(t)
	queries := []Query{
		{Search: "sunset", Emotion: "happy"},
		{Search: "sunset beach", Emotion: "happy", Gender: "female"},
		{Search: "sunset", Gender: "male", Orientation: "square"},
		{Search: "beach", MinDuration: ptr(10.0), MaxDuration: ptr(20.0)},
		{Search: "sun", Emotion: "sad"},
		{Search: "evening clip", Orientation: "vertical"},
		{Search: "sunset", Location: "reykjavik"},
		{Search: "town", Location: "reykjavik", Emotion: "confident"},
		{Search: "sunset beach", Emotion: "excited", Gender: "non_binary", Orientation: "horizontal",
			SortBy: SortPrice},
	}
	for _, q := range queries {
		if err := q.Validate(); err != nil {
			t.Fatal(err)
		}
		sq := buildSearch(q, nil, "")
		if sq.parts == nil {
			t.Fatalf("%+v: no composed total", q)
		}
		var parts [3]estimate
		for i, st := range []statement{sq.parts.words, sq.parts.filters, sq.parts.live} {
			e, err := svc.estimate(b.Ctx, b.Pool, st)
			if err != nil {
				t.Fatal(err)
			}
			parts[i] = e
		}
		got := compose(parts[0], parts[1], parts[2])
		whole, err := svc.estimate(b.Ctx, b.Pool, sq.estimate)
		if err != nil {
			t.Fatal(err)
		}
		if d := got.rows - whole.rows; d < -1 && d*50 < -whole.rows || d > 1 && d*50 > whole.rows {
			t.Errorf("%+v: composed estimate %d, the planner's %d", q, got.rows, whole.rows)
		}

		// Counting the whole costs no more than the composed cost says
		// (a plan that reads the cheaper part and checks the rest on each
		// row, which costs the planner a little per row checked).
		if got.cost*1.15+10 < whole.scan {
			t.Errorf("%+v: composed count cost %.0f, the planner's %.0f", q, got.cost, whole.scan)
		}
		counted := checkTotal(t, b, svc, q, sq, got)
		t.Logf("%s: composed %d at %.0f (planner %d at %.0f), counted %v", q.Search, got.rows, got.cost, whole.rows, whole.scan, counted)
	}
	// The rare location is counted, though its words are common.
	p, err := svc.Search(b.Ctx, Query{Search: "sunset", Location: "reykjavik"}, nil)
	if err != nil || !p.TotalExact || p.Total != 12 {
		t.Fatalf("sunset in reykjavik: total %d exact %v (%v), want 12 counted", p.Total, p.TotalExact, err)
	}
}

// checkTotal runs q and checks its total against est, the composed
// estimate: the matches counted when est says few and cheap, est
// otherwise. It says which.
func checkTotal(t *testing.T, b *catalogtest.Catalog, svc *Service, q Query, sq searchSQL, est estimate) bool {
	t.Helper()
	var truth int
	if err := b.Pool.QueryRow(b.Ctx, "SELECT count(*) FROM videos v WHERE "+andAll(sq), sq.count.args[:len(sq.count.args)-1]...).
		Scan(&truth); err != nil {
		t.Fatal(err)
	}
	p, err := svc.Search(b.Ctx, q, nil)
	if err != nil {
		t.Fatal(err)
	}
	counted := est.rows <= CountBound && est.cost <= MaxCountCost
	switch {
	case counted && (p.Total != truth || !p.TotalExact):
		t.Errorf("%+v: total %d exact %v, want %d counted", q, p.Total, p.TotalExact, truth)
	case !counted && (p.TotalExact || p.Total != max(est.rows, len(p.Videos)+btoi(p.HasMore))):
		t.Errorf("%+v: total %d exact %v, want the estimate %d", q, p.Total, p.TotalExact, est.rows)
	}
	return counted
}

// andAll is the conditions of sq's count, for an uncapped count in a test.
func andAll(sq searchSQL) string {
	const head = "SELECT count(*) FROM (SELECT 1 FROM videos v WHERE "
	s := sq.count.sql[len(head):]
	for i := len(s) - 1; i >= 0; i-- {
		if s[i:min(len(s), i+7)] == " LIMIT " {
			return s[:i]
		}
	}
	panic(fmt.Sprintf("no LIMIT in %q", sq.count.sql))
}

// TestComposedTotalsAskOnlyForWhatIsMissing: once a node has seen the
// words in one search and the filters in another, a search with both
// asks the planner nothing, and its total is the one the planner's parts
// give.
func TestComposedTotalsAskOnlyForWhatIsMissing(t *testing.T) {
	t.Parallel()
	b, svc := composedCatalog(t)
	for _, q := range []Query{
		{Search: "sunset beach", Emotion: "happy"},
		{Search: "evening", Emotion: "sad", Gender: "female"},
	} {
		if _, err := svc.Search(b.Ctx, q, nil); err != nil {
			t.Fatal(err)
		}
	}
	q := Query{Search: "sunset beach", Emotion: "sad", Gender: "female"}
	if err := q.Validate(); err != nil {
		t.Fatal(err)
	}
	sq := buildSearch(q, nil, "")
	// No pool: a query to the planner would fail.
	kept, err := svc.composedEstimate(b.Ctx, nil, *sq.parts)()
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := New(b.Cat).composedEstimate(b.Ctx, b.Pool, *sq.parts)()
	if err != nil {
		t.Fatal(err)
	}
	if kept != fresh {
		t.Fatalf("from kept parts %+v, asked afresh %+v", kept, fresh)
	}
	checkTotal(t, b, svc, q, sq, kept)
}
