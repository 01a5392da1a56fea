package search

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"broll/internal/paging"
)

// Listings answer a list as the page statement does, by offset and by
// cursor: the same clips in the same order, the same sort keys (so the same
// cursors), and the same total wherever the statement's is exact; against Postgres as the reference, on
// the fixture's catalog with ties on created_at, clips without a duration,
// a virality score, an age range or a model, over random filters, sorts and
// pages.
func TestListingsListAsThePageStatementsDo(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	// Ties: a third of the clips share one created_at, to be ordered by id.
	if _, err := f.Pool.Exec(f.Ctx, `
		UPDATE videos SET created_at = (SELECT min(created_at) FROM videos)
		WHERE title LIKE 'Person number %' AND right(title, 6) = 'office'`); err != nil {
		t.Fatal(err)
	}
	l, err := f.svc.buildListings(f.Ctx, "v1")
	if err != nil || l == nil {
		t.Fatalf("listings: %v, %v", l, err)
	}
	if want := f.Count(t, `SELECT count(*) FROM videos WHERE retired_at IS NULL`); len(l.clips) != want {
		t.Fatalf("listings hold %d clips, the catalog %d", len(l.clips), want)
	}

	rng := rand.New(rand.NewPCG(7, 11))
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	maybe := func(v float64) *float64 {
		if rng.IntN(6) == 0 {
			return &v
		}
		return nil
	}
	compared, nonEmpty, cursors := 0, 0, 0
	for range 600 {
		rare := func(v string) string {
			if rng.IntN(6) == 0 {
				return v
			}
			return ""
		}
		q := Query{
			Emotion:     pick("", "", "", "laughing", "happy", "neutral"),
			Gender:      pick("", "", "", "female", "male"),
			AgeRange:    rare("25-34"),
			Location:    rare(pick("home", "park", "nowhere")),
			Orientation: rare("vertical"),
			MediaType:   rare("image"),
			Difficulty:  rare(pick("easy", "hard")),
			ModelID:     rare("m-ava"),
			MinDuration: maybe(10),
			MaxDuration: maybe(20),
			SortBy:      pick(SortCreatedAt, SortPrice, SortDuration, SortVirality),
			SortOrder:   pick(SortAsc, SortDesc),
			Limit:       []int{1, 3, 5, 20}[rng.IntN(4)],
			Offset:      []int{0, 0, 2, 7, 20}[rng.IntN(5)],
		}
		if rng.IntN(6) == 0 {
			q.MinVirality = ptr(50)
		}
		if err := q.Validate(); err != nil {
			t.Fatal(err)
		}
		want, wTotal, wExact, err := f.svc.readPage(f.Ctx, q, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, gTotal, gExact, ok, err := f.svc.fromListings(f.Ctx, q, l)
		if err != nil || !ok {
			t.Fatalf("%+v: listings answered %v, %v", q, ok, err)
		}
		compare(t, fmt.Sprintf("%+v", q), got, want, gTotal, wTotal, gExact, wExact)
		compared++
		if len(want) > 0 {
			nonEmpty++
		}
		if len(want) < 2 {
			continue
		}
		// The page after a row of this one, by cursor, as a client
		// following next_cursor asks for it.
		last := want[rng.IntN(min(len(want), q.Limit))]
		next := q
		next.Offset, next.after = 0, nil
		next.Cursor = q.cursor(last.key, last.video.ID, q.Offset+q.Limit).Encode()
		if err := next.Validate(); err != nil {
			t.Fatal(err)
		}
		want, wTotal, wExact, err = f.svc.readPage(f.Ctx, next, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, gTotal, gExact, ok, err = f.svc.fromListings(f.Ctx, next, l)
		if err != nil || !ok {
			t.Fatalf("%+v: listings answered %v, %v", next, ok, err)
		}
		compare(t, fmt.Sprintf("%+v after %s", q, last.video.Title), got, want, gTotal, wTotal, gExact, wExact)
		cursors++
	}
	// Cursors a client made itself, with keys at the ends of each sort's
	// range (the cursor is a query's fingerprint and its keys, which
	// ReadCursor checks but does not bound).
	extremes := map[string][]any{
		SortDuration:  {math.Inf(1), math.Inf(-1), 1e308, math.Copysign(0, -1), -1.0, 12.5},
		SortVirality:  {int64(math.MaxInt32), int64(math.MinInt32), int64(-1), int64(101), int64(50)},
		SortPrice:     {int64(math.MaxInt64), int64(-1), int64(1000)},
		SortCreatedAt: {time.Unix(0, 0), time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), time.Now().Add(-90 * time.Minute)},
	}
	for by, keys := range extremes {
		for _, order := range []string{SortAsc, SortDesc} {
			for _, k := range keys {
				for _, id := range []string{"00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff"} {
					q := Query{SortBy: by, SortOrder: order, Limit: 5}
					if err := q.Validate(); err != nil {
						t.Fatal(err)
					}
					q.Cursor = paging.Cursor{Query: q.fingerprint(), Keys: []any{k}, ID: uuid.MustParse(id), N: 5}.Encode()
					if err := q.Validate(); err != nil {
						t.Fatalf("%s %s after %v: %v", by, order, k, err)
					}
					want, wTotal, wExact, err := f.svc.readPage(f.Ctx, q, nil)
					if err != nil {
						t.Fatal(err)
					}
					got, gTotal, gExact, ok, err := f.svc.fromListings(f.Ctx, q, l)
					if err != nil || !ok {
						t.Fatalf("%s %s after %v: listings answered %v, %v", by, order, k, ok, err)
					}
					compare(t, fmt.Sprintf("%s %s after %v, %s", by, order, k, id), got, want, gTotal, wTotal, gExact, wExact)
				}
			}
		}
	}
	if cursors < compared/4 {
		t.Fatalf("only %d of %d lists were followed by cursor", cursors, compared)
	}
	if nonEmpty < compared/3 {
		t.Fatalf("only %d of %d pages held clips: the comparison tests little", nonEmpty, compared)
	}
}

// compare fails t unless the listings' page (got) is the statement's (want),
// and their totals agree wherever the statement's is exact.
func compare(t *testing.T, name string, got, want []row, gTotal, wTotal int, gExact, wExact bool) {
	t.Helper()
	if !slices.EqualFunc(got, want, func(a, b row) bool {
		return a.video.ID == b.video.ID && keyText(a.key) == keyText(b.key) && sameClip(a.video, b.video)
	}) {
		t.Fatalf("%s:\nlistings  %v\nstatement %v", name, rowsText(got), rowsText(want))
	}
	if wExact && (!gExact || gTotal != wTotal) {
		t.Fatalf("%s: total %d (exact %v), the statement's %d (exact)", name, gTotal, gExact, wTotal)
	}
	if !gExact && (wExact || gTotal != wTotal) {
		t.Fatalf("%s: total %d (estimate), the statement's %d (exact %v)", name, gTotal, wTotal, wExact)
	}
}

func keyText(k any) string { return paging.Cursor{Keys: []any{k}}.Encode() }

func rowsText(rows []row) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = fmt.Sprintf("%s@%s", r.video.Title, keyText(r.key))
	}
	return out
}

// A node makes listings only for a version that has held for the quiet
// time, one build at a time, and uses them only under that version.
func TestListingsAreMadeUnderAQuietVersion(t *testing.T) {
	t.Parallel()
	h := newListingsHolder(time.Second)
	t0 := time.Unix(1000, 0)
	builds := make(chan string, 4)
	build := func(v string) { builds <- v }
	none := func(t *testing.T, when string) {
		t.Helper()
		select {
		case v := <-builds:
			t.Fatalf("%s: a build of %q", when, v)
		case <-time.After(20 * time.Millisecond):
		}
	}
	// A node that never had listings makes them at once.
	if h.at("a", t0, build) != nil {
		t.Fatal("listings before any were made")
	}
	if v := <-builds; v != "a" {
		t.Fatalf("built %q, want a", v)
	}
	h.at("a", t0.Add(100*time.Millisecond), build) // one build at a time
	none(t, "while one ran")
	first := &listings{version: "a", expires: t0.Add(time.Hour)}
	h.done(first, nil)
	if h.at("a", t0.Add(200*time.Millisecond), build) != first {
		t.Fatal("the listings made under a are not used under a")
	}
	// Out of date, they are made again once the version held quiet.
	if h.at("b", t0.Add(500*time.Millisecond), build) != nil || h.at("b", t0.Add(1400*time.Millisecond), build) != nil {
		t.Fatal("the listings made under a are used under b")
	}
	none(t, "before b held for the quiet time")
	h.at("b", t0.Add(1600*time.Millisecond), build)
	if v := <-builds; v != "b" {
		t.Fatalf("built %q, want b", v)
	}
	h.at("b", t0.Add(1700*time.Millisecond), build)
	none(t, "while one ran")
	// A catalog listings cannot hold is not read again under its version.
	h.done(nil, nil)
	h.at("b", t0.Add(5*time.Second), build)
	none(t, "under the version whose catalog they cannot hold")
	l := &listings{version: "b", expires: t0.Add(time.Hour)}
	h.done(l, nil)
	if h.at("b", t0.Add(3*time.Second), build) != l {
		t.Fatal("the listings made under b are not used under b")
	}
	if h.at("c", t0.Add(3*time.Second), build) != nil {
		t.Fatal("the listings made under b are used under c")
	}
	if h.at("b", t0.Add(2*time.Hour), build) != nil {
		t.Fatal("listings used past their life")
	}
}

// radixSort orders as a stable sort by key does.
func TestRadixSortIsAStableSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for _, n := range []int{0, 1, 2, 17, 1000, 5000} {
		for _, spread := range []uint64{1, 3, 1 << 20, 1<<64 - 1} {
			keys, pos := make([]uint64, n), make([]int32, n)
			for i := range keys {
				keys[i], pos[i] = rng.Uint64()%spread, int32(i)
				if spread == 1<<64-1 {
					keys[i] = rng.Uint64()
				}
			}
			want := slices.Clone(pos)
			slices.SortStableFunc(want, func(a, b int32) int { return cmp.Compare(keys[a], keys[b]) })
			sorted := slices.Clone(keys)
			radixSort(sorted, pos)
			if !slices.Equal(pos, want) {
				t.Fatalf("n %d spread %d: radix order differs from a stable sort", n, spread)
			}
			for i, p := range pos {
				if sorted[i] != keys[p] {
					t.Fatalf("n %d spread %d: key %d does not follow its clip", n, spread, i)
				}
			}
		}
	}
}
