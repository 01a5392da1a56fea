package main

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"broll/embed"
)

// The -m rewrite must reach the stored halfvecs' graphs, whose operator
// class is halfvec_cosine_ops: a rewrite that only knew vector_cosine_ops
// dropped the migration's m and built the default instead.
func TestWithParamsRewritesHalfvecGraphs(t *testing.T) {
	def := `CREATE INDEX videos_half_hnsw ON public.videos USING hnsw (embedding_half halfvec_cosine_ops) WITH (m='8')`
	got := withParams(def, options{m: 16, efConstruction: 100})
	want := `CREATE INDEX videos_half_hnsw ON public.videos USING hnsw (embedding_half halfvec_cosine_ops) WITH (m = 16, ef_construction = 100)`
	if got != want {
		t.Fatalf("withParams:\n got %s\nwant %s", got, want)
	}
	if got := withParams(def, options{}); got != def {
		t.Fatalf("without -m the definition changed: %s", got)
	}
}

// The texts are those of the clips loadCatalog generates, in its order,
// and read vectors come back padded to 768 dimensions and of unit length.
func TestTextVectorsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	if err := writeTexts(dir, options{clips: 3, queries: 2, seed: 1}); err != nil {
		t.Fatal(err)
	}
	clips, err := os.ReadFile(filepath.Join(dir, "clips.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(clips)), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "0\t") || !strings.Contains(lines[0], "#0. Tags: ugc, ") ||
		!strings.Contains(lines[2], "#2. Tags: ") {
		t.Fatalf("clips.tsv: %q", lines)
	}
	src := &clipRows{rng: newClipRNG(1), vecs: &vectorSource{rows: make([][]float32, 3)}, n: 3}
	for i := 0; src.Next(); i++ {
		if title := src.row[1].(string); !strings.Contains(lines[i], "\t"+title+". ") {
			t.Fatalf("clip %d is %q in the catalog and %q in clips.tsv", i, title, lines[i])
		}
	}

	if err := os.WriteFile(filepath.Join(dir, "model.json"), []byte(`{"model": "m", "dims": 2}`), 0o644); err != nil {
		t.Fatal(err)
	}
	f32 := func(xs ...float32) []byte {
		b := make([]byte, 4*len(xs))
		for i, x := range xs {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
		}
		return b
	}
	if err := os.WriteFile(filepath.Join(dir, "queries.f32"), f32(3, 4, 0, 2), 0o644); err != nil {
		t.Fatal(err)
	}
	rows, err := readVectors(dir, "queries", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || len(rows[0]) != embed.Dimensions || rows[0][0] != 0.6 || rows[0][1] != 0.8 ||
		rows[1][1] != 1 || rows[0][2] != 0 || rows[1][embed.Dimensions-1] != 0 {
		t.Fatalf("rows: %v %v", rows[0][:3], rows[1][:3])
	}
	if _, err := readVectors(dir, "queries", 3); err == nil {
		t.Fatal("three rows read from a file of two")
	}
}
