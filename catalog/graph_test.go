package catalog

import (
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestGraphs: the schema has its fourteen HNSW graphs (the whole catalog and
// one per emotion) under the names the planner tests look for, each valid
// and built with 8 links per element (migration 00014), and no half-swapped
// graph of that migration is left beside them.
func TestGraphs(t *testing.T) {
	t.Parallel()
	b := setup(t)
	type graph struct {
		Name    string
		Valid   bool
		Options []string
	}
	rows, err := b.pool.Query(b.ctx, `
		SELECT c.relname, i.indisvalid, coalesce(c.reloptions, '{}')
		FROM pg_index i
		JOIN pg_class c ON c.oid = i.indexrelid
		JOIN pg_am a ON a.oid = c.relam
		WHERE i.indrelid = 'videos'::regclass AND a.amname = 'hnsw'
		ORDER BY c.relname`)
	if err != nil {
		t.Fatal(err)
	}
	graphs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[graph])
	if err != nil {
		t.Fatal(err)
	}
	// The graphs of the stored halfvecs (migration 00031); the expression
	// graphs of the releases before it are gone (00032).
	want := map[string]bool{"videos_half_hnsw": true}
	for _, e := range Emotions() {
		want["videos_half_hnsw_"+e] = true
	}
	for _, g := range graphs {
		if !want[g.Name] {
			t.Errorf("unexpected HNSW index %s", g.Name)
		}
		delete(want, g.Name)
		if !g.Valid || len(g.Options) != 1 || g.Options[0] != "m=8" {
			t.Errorf("%s: valid %v, options %v; want a valid graph with m=8", g.Name, g.Valid, g.Options)
		}
	}
	for name := range want {
		t.Errorf("HNSW index %s is missing", name)
	}
}
