package search

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"broll/internal/paging"
)

// Listings answer a list as the page statement does: the same clips in the
// same order, the same sort keys (so the same cursors), and the same total
// wherever the statement's is exact; against Postgres as the reference, on
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
	compared, nonEmpty := 0, 0
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
		name := fmt.Sprintf("%+v", q)
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
		compared++
		if len(want) > 0 {
			nonEmpty++
		}
	}
	if nonEmpty < compared/3 {
		t.Fatalf("only %d of %d pages held clips: the comparison tests little", nonEmpty, compared)
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
	if h.at("a", t0, build) != nil || h.at("a", t0.Add(500*time.Millisecond), build) != nil {
		t.Fatal("listings before any were made")
	}
	if h.at("b", t0.Add(1500*time.Millisecond), build) != nil {
		t.Fatal("listings for a new version")
	}
	select {
	case v := <-builds:
		t.Fatalf("a build of %q before its version held for the quiet time", v)
	case <-time.After(20 * time.Millisecond):
	}
	h.at("b", t0.Add(2600*time.Millisecond), build)
	h.at("b", t0.Add(2700*time.Millisecond), build) // one build at a time
	if v := <-builds; v != "b" {
		t.Fatalf("built %q, want b", v)
	}
	select {
	case v := <-builds:
		t.Fatalf("a second build (%q) while one ran", v)
	case <-time.After(20 * time.Millisecond):
	}
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
