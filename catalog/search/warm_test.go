package search

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"broll/catalog"
	"broll/catalog/catalogtest"
)

// TestWarmWalksEveryGraph: a warm-up walks every HNSW graph the schema has
// (the whole catalog's and each emotion's), whatever graphs a later
// migration adds; it runs every other kind of search too, and loads the
// graphs first into shared buffers where pg_prewarm is installed.
func TestWarmWalksEveryGraph(t *testing.T) {
	t.Parallel()
	b := catalogtest.New(t, nil)
	bulkClips(t, b, 600, 3)
	// On a catalog this small the planner would scan the table instead of
	// walking a graph; a large one walks them.
	svc, pool := indexOnly(t, b)
	qe := stubEmbedder{model: "random", vec: randomUnit(rand.New(rand.NewPCG(3, 3)))}
	rep, err := svc.Warm(b.Ctx, qe, WarmOptions{Connections: 3, Prewarm: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.EmbedderErr != nil || rep.Graphs != 1+len(catalog.Emotions()) || rep.Semantic != rep.Graphs+1 || rep.Searches == 0 {
		t.Fatalf("report %+v: want a walk of each of the %d graphs, and one with two filters", rep, 1+len(catalog.Emotions()))
	}

	graphs := textColumn(t, b, `
		SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
		WHERE i.indrelid = 'videos'::regclass AND a.amname = 'hnsw' AND c.relname LIKE 'videos\_half\_hnsw%' ORDER BY c.relname`)
	if len(graphs) != 1+len(catalog.Emotions()) {
		t.Fatalf("graphs of the stored halfvecs: %v", graphs)
	}
	var installed bool
	if err := b.Pool.QueryRow(b.Ctx, sqlPrewarmInstalled).Scan(&installed); err != nil {
		t.Fatal(err)
	}
	if installed {
		if rep.PrewarmedBytes == 0 || len(rep.Relations) == 0 || rep.Relations[0] != "videos_half_hnsw" {
			t.Fatalf("pg_prewarm is installed; prewarmed %d bytes: %v, want the whole catalog's graph first", rep.PrewarmedBytes, rep.Relations)
		}
		for _, g := range graphs {
			if !slices.Contains(rep.Relations, g) {
				t.Errorf("graph %s not prewarmed: %v", g, rep.Relations)
			}
		}
	}

	// The warm-up's connections report what they scanned as they end.
	pool.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		unwalked := textColumn(t, b, `
			SELECT indexrelname FROM pg_stat_user_indexes
			WHERE indexrelname = ANY($1) AND idx_scan = 0 ORDER BY 1`, graphs)
		if len(unwalked) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("graphs the warm-up never walked: %s", strings.Join(unwalked, ", "))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestWarmWithoutEmbedderOrClips: an embedder that fails leaves semantic
// search out of the warm-up instead of failing it (a model server that is
// down must not keep nodes out of service), and an empty catalog warms
// with texts of its own.
func TestWarmWithoutEmbedderOrClips(t *testing.T) {
	t.Parallel()
	b := catalogtest.New(t, nil)
	svc := New(b.Cat)
	down := errors.New("connection refused")
	rep, err := svc.Warm(b.Ctx, stubEmbedder{model: "random", err: down}, WarmOptions{Connections: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(rep.EmbedderErr, down) || rep.Semantic != 0 || rep.Searches == 0 {
		t.Fatalf("report %+v: want the other searches, no semantic one, and the embedder's error", rep)
	}
	rep, err = svc.Warm(b.Ctx, stubEmbedder{model: "random", vec: randomUnit(rand.New(rand.NewPCG(4, 4)))}, WarmOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Graphs != 1+len(catalog.Emotions()) || rep.PrewarmedBytes != 0 {
		t.Fatalf("report %+v: want every graph walked, nothing prewarmed (not asked)", rep)
	}
}

// textColumn returns the one text column of a query's rows.
func textColumn(t *testing.T, b *catalogtest.Catalog, sql string, args ...any) []string {
	t.Helper()
	rows, err := b.Pool.Query(b.Ctx, sql, args...)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return out
}
