package search

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"broll/catalog/catalogtest"
	"broll/internal/apperr"
)

func TestSimilarToAClip(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	car := f.ByKey["carLaugh"]
	ready := f.Live(func(c fixClip) bool { return c.Ready && c.ID != car.ID })

	t.Run("the clip's neighbours, best first, the clip left out", func(t *testing.T) {
		p := f.search(t, Query{SimilarTo: car.ID, Limit: 100})
		got := f.Keys(p.Videos)
		if len(got) != len(ready) || p.Total != len(ready) || !p.TotalExact || p.HasMore || p.NextCursor != "" {
			t.Fatalf("%d neighbours (total %d), want %d", len(got), p.Total, len(ready))
		}
		if slices.Contains(got, "carLaugh") || slices.Contains(got, "retired") {
			t.Fatalf("the clip itself or a retired one: %v", got)
		}
		if unembedded := f.Clips[len(f.Clips)-1].Key; slices.Contains(got, unembedded) {
			t.Fatal("a clip without a vector is a neighbour")
		}
		checkSimilarityOrder(t, p.Videos)
		// The nearest shares most of "Woman laughing in a car".
		if got[0] != "laughCouch" && got[0] != "carSmile" {
			t.Fatalf("nearest: %v", got[:3])
		}
	})

	t.Run("is the semantic search of the clip's vector", func(t *testing.T) {
		// Asked by its vector as a query text's embedding, the index
		// gives the same neighbours, with the clip itself first.
		var vec []float32
		if err := f.Pool.QueryRow(f.Ctx, `SELECT embedding::real[] FROM videos WHERE id = $1`, car.ID).Scan(&vec); err != nil {
			t.Fatal(err)
		}
		bySearch, err := f.svc.Search(f.Ctx, Query{SemanticSearch: "the clip's vector", Limit: 100}, stubEmbedder{model: f.Model, vec: vec})
		if err != nil {
			t.Fatal(err)
		}
		bySimilar := f.search(t, Query{SimilarTo: car.ID, Limit: 100})
		if len(bySearch.Videos) == 0 || bySearch.Videos[0].ID != car.ID {
			t.Fatalf("the clip is not nearest to its own vector: %v", f.Keys(bySearch.Videos))
		}
		if len(bySimilar.Videos) != len(bySearch.Videos)-1 {
			t.Fatalf("%d neighbours, %d by search", len(bySimilar.Videos), len(bySearch.Videos))
		}
		for i, v := range bySimilar.Videos {
			w := bySearch.Videos[i+1]
			if v.Similarity == nil {
				t.Fatalf("%s has no similarity", v.Title)
			}
			if *v.Similarity-*w.Similarity > 1e-9 || *w.Similarity-*v.Similarity > 1e-9 {
				t.Fatalf("rank %d: %s %v, by search %s %v", i, v.Title, *v.Similarity, w.Title, *w.Similarity)
			}
		}
	})

	t.Run("filters on top, and pages", func(t *testing.T) {
		want := f.Live(func(c fixClip) bool { return c.Ready && c.ID != car.ID && c.In.Gender == "female" })
		p := f.search(t, Query{SimilarTo: car.ID, Gender: "female", Limit: 3})
		if len(p.Videos) != 3 || p.Total != len(want) || !p.HasMore || p.NextCursor == "" {
			t.Fatalf("%d videos, total %d of %d", len(p.Videos), p.Total, len(want))
		}
		all := f.Keys(f.search(t, Query{SimilarTo: car.ID, Gender: "female", Limit: 100}).Videos)
		walked := f.Keys(p.Videos)
		for p.NextCursor != "" {
			p = f.search(t, Query{SimilarTo: car.ID, Gender: "female", Limit: 3, Cursor: p.NextCursor})
			walked = append(walked, f.Keys(p.Videos)...)
		}
		if !slices.Equal(walked, all) || len(all) != len(want) {
			t.Fatalf("by cursor %v, in one page %v", walked, all)
		}
		for _, v := range f.search(t, Query{SimilarTo: car.ID, Gender: "female", Limit: 100}).Videos {
			if v.Gender != "female" {
				t.Fatalf("filter ignored: %s", v.Title)
			}
		}
	})

	t.Run("what has no neighbours to offer", func(t *testing.T) {
		_, err := f.svc.Search(f.Ctx, Query{SimilarTo: uuid.New()}, f.QE)
		if apperr.CodeOf(err) != apperr.NotFound {
			t.Fatalf("unknown: %v", err)
		}
		_, err = f.svc.Search(f.Ctx, Query{SimilarTo: f.ByKey["retired"].ID}, f.QE)
		if apperr.CodeOf(err) != apperr.NotFound {
			t.Fatalf("retired: %v", err)
		}
		unembedded := f.Clips[len(f.Clips)-1]
		_, err = f.svc.Search(f.Ctx, Query{SimilarTo: unembedded.ID}, f.QE)
		if ae, ok := apperr.As(err); !ok || ae.Code != apperr.NotEmbedded || ae.Fields["retry_after_seconds"] != NotEmbeddedRetryAfter {
			t.Fatalf("no vector yet: %v", err)
		}
		// A vector of another model than the one queries are embedded
		// with is not comparable with the catalog's current vectors.
		_, err = f.svc.Search(f.Ctx, Query{SimilarTo: car.ID}, stubEmbedder{model: "next-model"})
		if apperr.CodeOf(err) != apperr.NotEmbedded {
			t.Fatalf("another model: %v", err)
		}
		_, err = f.svc.Search(f.Ctx, Query{SimilarTo: car.ID}, nil)
		if apperr.CodeOf(err) != apperr.Unavailable {
			t.Fatalf("no embedder: %v", err)
		}
	})

	t.Run("no text beside the clip; a cursor is the clip's own", func(t *testing.T) {
		for field, q := range map[string]Query{
			"search":          {SimilarTo: car.ID, Search: "car"},
			"semantic_search": {SimilarTo: car.ID, SemanticSearch: "car"},
		} {
			_, err := f.svc.Search(f.Ctx, q, f.QE)
			if ae, ok := apperr.As(err); !ok || ae.Code != apperr.Invalid || ae.Field != field {
				t.Fatalf("%s: %v", field, err)
			}
		}
		p := f.search(t, Query{SimilarTo: car.ID, Limit: 2})
		_, err := f.svc.Search(f.Ctx, Query{SimilarTo: f.ByKey["carSmile"].ID, Limit: 2, Cursor: p.NextCursor}, f.QE)
		if ae, ok := apperr.As(err); !ok || ae.Field != "cursor" {
			t.Fatalf("another clip's cursor: %v", err)
		}
		_, err = f.svc.Search(f.Ctx, Query{SemanticSearch: "car", Limit: 2, Cursor: p.NextCursor}, f.QE)
		if ae, ok := apperr.As(err); !ok || ae.Field != "cursor" {
			t.Fatalf("a semantic search with a similar cursor: %v", err)
		}
	})
}

// The neighbours of a clip are found by the semantic search's own walk of
// the HNSW index, with iterative scans filling a filtered page, and every
// clip's neighbours share one count estimate.
func TestSimilarWalksTheIndex(t *testing.T) {
	t.Parallel()
	b := catalogtest.New(t, nil)
	vecs := bulkClips(t, b, 600, 13)
	svc, pool := indexOnly(t, b)
	qe := stubEmbedder{model: "random"}
	ids := slices.Collect(func(yield func(uuid.UUID) bool) {
		for id := range vecs {
			if !yield(id) {
				return
			}
		}
	})
	slices.SortFunc(ids, func(a, b uuid.UUID) int { return strings.Compare(a.String(), b.String()) })
	rng := rand.New(rand.NewPCG(3, 3))
	clip := ids[rng.IntN(len(ids))]

	q := Query{SimilarTo: clip, Gender: "male", Limit: 20}
	if err := q.Validate(); err != nil {
		t.Fatal(err)
	}
	sq := buildSearch(q, vecs[clip], "random")
	err := pgx.BeginFunc(b.Ctx, pool, func(tx pgx.Tx) error {
		hs := svc.hnsw()
		if _, err := tx.Exec(b.Ctx, sqlHNSWSettings, fmt.Sprint(hs.efSearch), fmt.Sprint(hs.maxScanTuples), "force_custom_plan", "relaxed_order"); err != nil {
			return err
		}
		plan, err := explainSQL(b, tx, sq.page)
		if err == nil && !strings.Contains(plan, "Index Scan using videos_half_hnsw on") {
			t.Errorf("the neighbours do not walk the HNSW index:\n%s", plan)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	p, err := svc.Search(b.Ctx, q, qe)
	if err != nil {
		t.Fatal(err)
	}
	male := b.Count(t, `SELECT count(*) FROM videos WHERE gender = 'male' AND id <> $1`, clip)
	if len(p.Videos) != q.Limit || !p.HasMore || p.Total != male {
		t.Fatalf("%d videos, has_more %v, total %d of %d", len(p.Videos), p.HasMore, p.Total, male)
	}
	checkSimilarityOrder(t, p.Videos)
	want := exactTop(t, b, vecs, vecs[clip], "gender = 'male' AND id <> '"+clip.String()+"'", q.Limit)
	// The graph's levels are drawn at random as it is built, so its recall
	// on 600 random vectors under a filter varies from build to build (0.85
	// was seen): the bound is the other filtered walks' (semantic_test.go).
	if r := recall(p.Videos, want); r < 0.8 {
		t.Fatalf("recall %.2f against an exact scan", r)
	}
	for _, v := range p.Videos {
		if v.Gender != "male" || v.ID == clip {
			t.Fatalf("%+v", v)
		}
	}

	// Another clip's neighbours: another count, the same estimate.
	other := Query{SimilarTo: ids[0], Gender: "male", Limit: 20}
	if err := other.Validate(); err != nil {
		t.Fatal(err)
	}
	osq := buildSearch(other, vecs[ids[0]], "random")
	if countKey(osq.estimate) != countKey(sq.estimate) || countKey(osq.count) == countKey(sq.count) {
		t.Fatalf("estimates %q / %q, counts %q / %q", osq.estimate.sql, sq.estimate.sql, osq.count.sql, sq.count.sql)
	}
}
