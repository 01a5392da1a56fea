package catalog_test

import (
	"math/rand/v2"
	"testing"

	"broll/catalog"
	"broll/catalog/catalogtest"
	"broll/internal/testkit"
)

// TestHalfVectorsFollowEmbeddings: every write of a clip's vector leaves
// the halfvec the graphs and searches read (migration 00031) equal to it,
// whoever writes it: the service, a bare UPDATE (the release before
// writes only embedding), or a write of the halfvec alone.
func TestHalfVectorsFollowEmbeddings(t *testing.T) {
	t.Parallel()
	queue := &testkit.EmbedQueue{}
	b := catalogtest.New(t, queue)
	ids := importN(t, b, queue, 3)
	rng := rand.New(rand.NewPCG(31, 1))
	vec := func() []float32 {
		v := make([]float32, 768)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	same := func(when string) {
		t.Helper()
		var unequal, unembedded, halved int
		if err := b.Pool.QueryRow(b.Ctx, `
			SELECT count(*) FILTER (WHERE embedding_half IS DISTINCT FROM embedding::halfvec(768)),
			       count(*) FILTER (WHERE embedding IS NULL),
			       count(*) FILTER (WHERE embedding_half IS NOT NULL)
			FROM videos WHERE id = ANY($1)`, ids).Scan(&unequal, &unembedded, &halved); err != nil {
			t.Fatal(err)
		}
		if unequal != 0 || unembedded+halved != len(ids) {
			t.Fatalf("%s: %d halfvecs differ from their vectors (%d clips without a vector, %d with a halfvec)",
				when, unequal, unembedded, halved)
		}
	}
	same("imported")
	if err := b.Cat.StoreEmbeddings(b.Ctx, "m", []catalog.Embedding{{ID: ids[0], Vector: vec()}, {ID: ids[1], Vector: vec()}}); err != nil {
		t.Fatal(err)
	}
	same("stored")
	var n int
	if err := b.Pool.QueryRow(b.Ctx, `SELECT count(*) FROM videos WHERE id = ANY($1) AND embedding_half IS NOT NULL`, ids).Scan(&n); err != nil || n != 2 {
		t.Fatalf("%d halfvecs after two clips got vectors (%v)", n, err)
	}
	if _, err := b.Pool.Exec(b.Ctx, `UPDATE videos SET embedding = (SELECT embedding FROM videos WHERE id = $2) WHERE id = $1`, ids[0], ids[1]); err != nil {
		t.Fatal(err)
	}
	same("written by a bare UPDATE")
	if _, err := b.Pool.Exec(b.Ctx, `UPDATE videos SET embedding_half = (SELECT embedding_half FROM videos WHERE id = $2) WHERE id = $1`, ids[1], ids[2]); err != nil {
		t.Fatal(err)
	}
	same("halfvec written alone")
	if _, err := b.Pool.Exec(b.Ctx, `UPDATE videos SET embedding = NULL, embedding_model = NULL WHERE id = $1`, ids[0]); err != nil {
		t.Fatal(err)
	}
	same("vector cleared")
}
