package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"

	"broll/deploy/bench/benchkit"
	"broll/embed"
	"broll/internal/database"
)

// The model name the benchmark's vectors are stored under.
const benchModel = "bench-random"

// importThroughput sends n generated clips through imports.Import, the
// path of `brollctl clips import` and the ops endpoint: parse, validate,
// copy three media files per clip, stage with COPY, upsert. The clips are
// deleted afterwards; the searched catalog is loaded by loadCatalog.
func importThroughput(ctx context.Context, pool *pgxpool.Pool, n int, seed uint64) (time.Duration, error) {
	src, err := os.MkdirTemp("", "broll-bench-src-*")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(src)
	mediaDir, err := os.MkdirTemp("", "broll-bench-media-*")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(mediaDir)
	files := map[string][]byte{"full.avi": bytes.Repeat([]byte("RIFF"), 4096),
		"preview.gif": bytes.Repeat([]byte("GIF8"), 1024), "thumb.jpg": bytes.Repeat([]byte{0xff}, 2048)}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(src, name), data, 0o644); err != nil {
			return 0, err
		}
	}
	rng := rand.New(rand.NewPCG(seed, 2))
	var lines bytes.Buffer
	enc := json.NewEncoder(&lines)
	for i := range n {
		c := benchkit.RandomClip(rng, i)
		c.MediaFile, c.PreviewFile, c.ThumbnailFile = "full.avi", "preview.gif", "thumb.jpg"
		if err := enc.Encode(c); err != nil {
			return 0, err
		}
	}
	g, err := benchkit.OpenCatalog(ctx, pool, mediaDir)
	if err != nil {
		return 0, err
	}
	defer g.Close()
	svc := g.Imports
	start := time.Now()
	res, err := svc.Import(ctx, &lines, src, nil)
	elapsed := time.Since(start)
	if err != nil {
		return 0, err
	}
	if res.Created != n {
		return 0, fmt.Errorf("created %d of %d clips", res.Created, n)
	}
	_, err = pool.Exec(ctx, `DELETE FROM videos`)
	return elapsed, err
}

// vectorSource draws the benchmark's unit vectors. "uniform" draws them
// uniformly from the sphere: every direction equally likely, so in 768
// dimensions every point is almost equally far from every other and no
// approximate index finds the true neighbours cheaply; it is the worst
// case, not a model of embeddings. "lowrank" draws them the way text
// embeddings are spread: a random linear image of a few dozen latent
// factors plus isotropic noise, so neighbours are genuinely closer than
// the rest (the intrinsic dimension of sentence embeddings is in the tens).
// "vectors:DIR" reads what a real text embedder made of the clips' and the
// queries' texts (texts.go): no distribution is assumed at all.
type vectorSource struct {
	rng    *rand.Rand
	basis  [][]float32 // latentDims rows of embed.Dimensions; nil for uniform
	latent []float64
	// rows are read vectors, handed out in order; queries are the rows
	// of the queries' stream (withSeed).
	rows, queries [][]float32
}

const (
	latentDims = 32
	// noiseShare is the share of a vector's energy that is isotropic noise.
	noiseShare = 0.15
)

func newVectorSource(kind string, seed uint64, clips, queries int) (*vectorSource, error) {
	vs := &vectorSource{rng: rand.New(rand.NewPCG(seed, 7))}
	if dir, ok := strings.CutPrefix(kind, "vectors:"); ok {
		var err error
		if vs.rows, err = readVectors(dir, "clips", clips); err != nil {
			return nil, err
		}
		vs.queries, err = readVectors(dir, "queries", queries)
		return vs, err
	}
	switch kind {
	case "uniform":
		return vs, nil
	case "lowrank":
		basisRng := rand.New(rand.NewPCG(seed, 8)) // the same basis for clips and queries
		vs.basis = make([][]float32, latentDims)
		for i := range vs.basis {
			vs.basis[i] = make([]float32, embed.Dimensions)
			for j := range vs.basis[i] {
				vs.basis[i][j] = float32(basisRng.NormFloat64())
			}
		}
		vs.latent = make([]float64, latentDims)
		return vs, nil
	}
	return nil, fmt.Errorf("-data must be lowrank, uniform or vectors:DIR, got %q", kind)
}

// withSeed returns a source of the same distribution with its own stream.
// Read vectors have one stream for the queries, whatever the seed.
func (vs *vectorSource) withSeed(seed uint64) *vectorSource {
	if vs.rows != nil {
		return &vectorSource{rows: vs.queries}
	}
	c := *vs
	c.rng = rand.New(rand.NewPCG(seed, 9))
	c.latent = make([]float64, len(vs.latent))
	return &c
}

// next draws a unit vector.
func (vs *vectorSource) next() []float32 {
	if vs.rows != nil {
		v := vs.rows[0]
		vs.rows = vs.rows[1:]
		return v
	}
	v := make([]float32, embed.Dimensions)
	if vs.basis == nil {
		for i := range v {
			v[i] = float32(vs.rng.NormFloat64())
		}
		return unit(v)
	}
	for i := range vs.latent {
		vs.latent[i] = vs.rng.NormFloat64()
	}
	// Each basis row has expected squared norm Dimensions, so the signal
	// has energy latentDims*Dimensions; noise gets noiseShare of the total.
	sigma := math.Sqrt(noiseShare / (1 - noiseShare) * latentDims)
	for j := range v {
		var x float64
		for i, z := range vs.latent {
			x += z * float64(vs.basis[i][j])
		}
		v[j] = float32(x + sigma*vs.rng.NormFloat64())
	}
	return unit(v)
}

func unit(v []float32) []float32 {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	inv := 1 / math.Sqrt(sum)
	for i := range v {
		v[i] = float32(float64(v[i]) * inv)
	}
	return v
}

var copyColumns = []string{"id", "title", "tags", "emotion", "gender", "age_range", "location",
	"orientation", "duration_seconds", "virality_score", "difficulty", "media_key", "embedding",
	"embedding_model", "embedding_status"}

// newClipRNG is the stream the catalog's clips are drawn from: clipRows
// and writeTexts draw the same clips from it.
func newClipRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 3)) }

// clipRows generates the rows COPY sends, one at a time.
type clipRows struct {
	rng  *rand.Rand
	vecs *vectorSource
	n, i int
	row  []any
}

func (r *clipRows) Next() bool {
	if r.i == r.n {
		return false
	}
	c := benchkit.RandomClip(r.rng, r.i)
	id := uuid.New()
	r.row = []any{id, c.Title, c.Tags, c.Emotion, c.Gender, c.AgeRange, c.Location, c.Orientation,
		*c.DurationSeconds, *c.ViralityScore, c.Difficulty, "clips/" + id.String() + "/full.avi",
		pgvector.NewVector(r.vecs.next()), benchModel, "ready"}
	r.i++
	return true
}

func (r *clipRows) Values() ([]any, error) { return r.row, nil }
func (r *clipRows) Err() error             { return nil }

var withClause = regexp.MustCompile(` WITH \([^)]*\)`)

// hnswIndex is one vector index of the migrations, by name and definition.
type hnswIndex struct{ name, def string }

// withParams rewrites an index definition with the -m / -ef-construction
// parameters, if any were given.
func withParams(def string, o options) string {
	if o.m == 0 && o.efConstruction == 0 {
		return def
	}
	var params []string
	if o.m > 0 {
		params = append(params, fmt.Sprintf("m = %d", o.m))
	}
	if o.efConstruction > 0 {
		params = append(params, fmt.Sprintf("ef_construction = %d", o.efConstruction))
	}
	def = withClause.ReplaceAllString(def, "")
	// The operator class closes the column list: vector_cosine_ops or,
	// for the stored halfvecs' graphs, halfvec_cosine_ops.
	return strings.Replace(def, "_cosine_ops)", "_cosine_ops) WITH ("+strings.Join(params, ", ")+")", 1)
}

// loadResult is what loading the catalog measured.
type loadResult struct {
	copied       time.Duration
	builtWhole   time.Duration // the whole-catalog index
	builtEmotion time.Duration // the per-emotion indexes (migration 00002)
	wholeDef     string
}

// loadCatalog COPYs the clips with their vectors while the HNSW indexes of
// the migrations are dropped, then builds them again from their own
// definitions (or with the -m / -ef-construction parameters): one build is
// far faster than inserting 100k vectors one by one, and is how a large
// catalog is loaded. With -emotion-indexes=false the per-emotion indexes are
// left out, to measure searches without them.
func loadCatalog(ctx context.Context, pool *pgxpool.Pool, o options, vecs *vectorSource) (loadResult, error) {
	var res loadResult
	indexes, err := database.Select(ctx, pool, func(r pgx.CollectableRow) (hnswIndex, error) {
		var ix hnswIndex
		return ix, r.Scan(&ix.name, &ix.def)
	}, `
		SELECT indexname, indexdef FROM pg_indexes
		WHERE tablename = 'videos' AND indexdef LIKE '%USING hnsw%' ORDER BY indexname`)
	if err != nil {
		return res, err
	}
	for _, ix := range indexes {
		if _, err := pool.Exec(ctx, `DROP INDEX `+pgx.Identifier{ix.name}.Sanitize()); err != nil {
			return res, err
		}
	}
	switch o.storage {
	case "":
	case "plain", "external":
		if _, err := pool.Exec(ctx, `ALTER TABLE videos ALTER COLUMN embedding SET STORAGE `+o.storage); err != nil {
			return res, err
		}
	default:
		return res, fmt.Errorf("-storage must be plain or external, got %q", o.storage)
	}
	start := time.Now()
	src := &clipRows{rng: newClipRNG(o.seed), vecs: vecs, n: o.clips}
	if _, err := pool.CopyFrom(ctx, pgx.Identifier{"videos"}, copyColumns, src); err != nil {
		return res, err
	}
	res.copied = time.Since(start)

	conn, err := pool.Acquire(ctx)
	if err != nil {
		return res, err
	}
	defer conn.Release()
	// The whole graph fits in memory: the build never spills to disk.
	if _, err := conn.Exec(ctx, `SET maintenance_work_mem = '1GB'`); err != nil {
		return res, err
	}
	for _, ix := range indexes {
		whole := ix.name == "videos_half_hnsw"
		if !whole && !o.emotionIndexes {
			continue
		}
		def := withParams(ix.def, o)
		start := time.Now()
		if _, err := conn.Exec(ctx, def); err != nil {
			return res, err
		}
		switch {
		case whole:
			res.builtWhole, res.wholeDef = time.Since(start), def
		default:
			res.builtEmotion += time.Since(start)
		}
	}
	// A catalog in service has been vacuumed (autovacuum): visibility maps
	// set, so counts can use index-only scans.
	_, err = conn.Exec(ctx, `VACUUM ANALYZE videos`)
	return res, err
}
