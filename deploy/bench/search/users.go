package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"

	"broll/catalog"
	"broll/catalog/search"
	"broll/deploy/bench/benchkit"
	"broll/embed"
	"broll/internal/database"
)

// userOptions are the settings of the -users run: what a client of the
// API sees, over HTTP, against a catalog loaded the way an operator loads
// one.
type userOptions struct {
	clips, vectors, clients, queries int
	// recallTarget is the API's BROLL_SEMANTIC_RECALL_TARGET (0: none).
	recallTarget float64
	duration     time.Duration
	seed         uint64
	keep         bool
	// warmup is how long each class runs unmeasured before it is measured.
	warmup time.Duration
	// efSearch is the API's HNSW candidate list (BROLL_SEMANTIC_EF_SEARCH).
	efSearch int
	// reuse is the URL of a catalog an earlier run kept: no import.
	reuse string
	// only, when set, keeps the query classes whose name contains it (the
	// id lookup is always measured, as the anchor).
	only string
	// cpuProfile, when set, is where the process's CPU profile (the node
	// and the load generator) of the measured classes is written.
	cpuProfile string
}

// runUsers imports o.clips clips through imports.Import (the path of
// `brollctl clips import`), embeds o.vectors of them with the built-in
// embedder through the worker's store path, starts the API as
// cmd/broll-api builds it and loads every query class of the catalog with
// o.clients concurrent clients, the id lookup first and last. It prints
// p50/p99 per class, each beside the id lookup's p50, and recall@10 of the
// semantic classes against an exact scan.
func runUsers(o userOptions) error {
	ctx := context.Background()
	open := func() (*benchkit.Scratch, error) { return benchkit.OpenScratch(ctx, o.clients*2, o.keep) }
	if o.reuse != "" {
		open = func() (*benchkit.Scratch, error) { return benchkit.OpenKept(ctx, o.reuse, o.clients*2) }
	}
	sc, err := open()
	if err != nil {
		return err
	}
	defer sc.Close()
	pool := sc.Pool
	builtin := embed.NewBuiltin()
	if o.reuse == "" {
		fmt.Printf("search benchmark (users): %d clips (%d with vectors), %d clients over HTTP, %s per query class after %s of warm-up, hnsw.ef_search %d\n",
			o.clips, o.vectors, o.clients, o.duration, o.warmup, o.efSearch)
		start := time.Now()
		if err := benchkit.ImportCatalog(ctx, pool, o.clips, o.seed); err != nil {
			return fmt.Errorf("import: %w", err)
		}
		imported := time.Since(start)
		fmt.Printf("import (imports.Import, JSON Lines, 3 media files per clip): %d clips in %s = %.0f clips/s\n",
			o.clips, imported.Round(time.Millisecond), float64(o.clips)/imported.Seconds())
		start = time.Now()
		if err := benchkit.EmbedCatalog(ctx, pool, builtin, o.vectors); err != nil {
			return fmt.Errorf("embed: %w", err)
		}
		fmt.Printf("embeddings (built-in embedder, StoreEmbeddings, HNSW indexes built after): %d in %s\n",
			o.vectors, time.Since(start).Round(time.Millisecond))
	} else {
		fmt.Printf("search benchmark (users): the kept catalog, %d clients over HTTP, %s per query class after %s of warm-up, hnsw.ef_search %d\n",
			o.clients, o.duration, o.warmup, o.efSearch)
	}
	// A catalog in service has been vacuumed (autovacuum), so the walk of
	// a keyword search reads video_terms' index alone: without the
	// visibility map, just after the import or migration 00015 rebuilt
	// it, every posting it passes is also read from the table.
	if _, err := pool.Exec(ctx, `VACUUM ANALYZE videos, video_terms`); err != nil {
		return err
	}
	var table string
	if err := pool.QueryRow(ctx, `SELECT pg_size_pretty(pg_relation_size('videos'))`).Scan(&table); err != nil {
		return err
	}
	fmt.Println("videos heap (main fork):", table)

	root, err := sc.Account(ctx)
	if err != nil {
		return err
	}
	sc.Config.SemanticEfSearch = o.efSearch
	sc.Config.SemanticRecallTarget = o.recallTarget
	node, g, err := sc.Node(ctx)
	if err != nil {
		return err
	}
	// What a worker does at its start (and hourly): choose the candidate
	// list on the catalog's own vectors. -recall-target 0 keeps
	// -semantic-ef for every search.
	if o.recallTarget > 0 {
		start := time.Now()
		c, err := g.Search.Calibrate(ctx, builtin.Model(), search.CalibrateOptions{Target: o.recallTarget})
		if err != nil {
			return fmt.Errorf("calibrate: %w", err)
		}
		fmt.Printf("calibration (%d clips' vectors, %s): hnsw.ef_search %d, recall@10 %.3f for a target of %.2f; tried %v\n",
			c.Queries, time.Since(start).Round(time.Millisecond), c.EfSearch, c.Recall, c.Target, c.Measured)
	}
	addr, stop, err := benchkit.Serve(node.App)
	if err != nil {
		return err
	}
	defer stop()
	base := "http://" + addr + "/api/v1/broll"

	ids, err := sampleIDs(ctx, pool, 1000)
	if err != nil {
		return err
	}
	embedded, err := sampleEmbeddedIDs(ctx, pool, 1000)
	if err != nil {
		return err
	}
	classes := queryClasses(ids, embedded)
	if o.only != "" {
		kept := classes[:1]
		for _, c := range classes[1:] {
			if strings.Contains(c.name, o.only) {
				kept = append(kept, c)
			}
		}
		classes = kept
	}
	request := func(c queryClass, seed uint64) func(w, n int) *http.Request {
		return func(w, n int) *http.Request {
			rng := rand.New(rand.NewPCG(seed+uint64(w), uint64(n)))
			req, _ := http.NewRequest("GET", base+c.path(rng), nil)
			req.Header.Set("Authorization", "Bearer "+root.Secret)
			return req
		}
	}
	// Each class is first driven for o.warmup with other random queries
	// of the same kind, not measured: a server that has run for a while
	// has its indexes' pages in memory and its connections open, and the
	// previous class (or the last run's recall scans of every vector) must
	// not decide this one's figures. The queries measured are not the ones
	// that warmed it.
	// The CPU each party spent while a class was measured, per request:
	// this process (the node, and the load generator with it), Redis and
	// Postgres, which say where a class's milliseconds go.
	meter := benchkit.CPUMeter{Pool: pool, Redis: sc.Redis}
	cpu := make([]benchkit.CPUSample, len(classes))
	drive := func(c queryClass) (benchkit.Result, benchkit.CPUSample) {
		if o.warmup > 0 {
			benchkit.Drive(o.clients, o.warmup, request(c, o.seed+1<<32))
		}
		before := meter.Sample(ctx)
		r := benchkit.Drive(o.clients, o.duration, request(c, o.seed))
		return r, meter.Sample(ctx).Sub(before)
	}
	stopProfile, err := benchkit.CPUProfile(o.cpuProfile)
	if err != nil {
		return err
	}
	idClass := classes[0]
	first, firstCPU := drive(idClass)
	results := make([]benchkit.Result, len(classes))
	results[0], cpu[0] = first, firstCPU
	for i := 1; i < len(classes); i++ {
		results[i], cpu[i] = drive(classes[i])
	}
	last, _ := drive(idClass)
	stopProfile()
	idP50 := benchkit.Millis(first.Percentile(0.5)+last.Percentile(0.5)) / 2

	fmt.Println()
	fmt.Println("| query | p50 | p99 | x the id lookup | p99/p50 | ok | failed | CPU µs/request: process, Redis, Postgres |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	perRequest := func(d time.Duration, n int64) float64 { return float64(d.Microseconds()) / float64(max(n, 1)) }
	for i, c := range classes {
		r, u := results[i], cpu[i]
		p50, p99 := benchkit.Millis(r.Percentile(0.5)), benchkit.Millis(r.Percentile(0.99))
		fmt.Printf("| %s | %.2f ms | %.2f ms | %.1f | %.1f | %d | %d | %.0f, %.0f, %.0f |\n", c.name, p50, p99, p50/idP50, p99/p50,
			r.OK, r.Failed, perRequest(u.Self, r.OK), perRequest(u.Redis, r.OK), perRequest(u.Postgres, r.OK))
	}
	fmt.Printf("| `GET /api/v1/broll/:id` again, after the others | %.2f ms | %.2f ms | | | %d | %d |\n",
		benchkit.Millis(last.Percentile(0.5)), benchkit.Millis(last.Percentile(0.99)), last.OK, last.Failed)

	for _, c := range classes {
		if c.similar != nil {
			rec, err := similarRecall(ctx, pool, base, root.Secret, builtin.Model(), c, o)
			if err != nil {
				return fmt.Errorf("recall: %w", err)
			}
			fmt.Printf("recall@10 of %s over %d clips: %.3f\n", c.name, o.queries, rec)
		}
		if c.semantic == nil {
			continue
		}
		rec, err := semanticRecall(ctx, pool, base, root.Secret, builtin, c, o)
		if err != nil {
			return fmt.Errorf("recall: %w", err)
		}
		fmt.Printf("recall@10 of %s over %d queries: %.3f\n", c.name, o.queries, rec)
	}
	return nil
}

func sampleIDs(ctx context.Context, pool *pgxpool.Pool, n int) ([]uuid.UUID, error) {
	return database.Select(ctx, pool, pgx.RowTo[uuid.UUID], `SELECT id FROM videos TABLESAMPLE SYSTEM (5) LIMIT $1`, n)
}

// sampleEmbeddedIDs are clips with a vector: the ones "more like this" can
// be asked of (with -vectors below -clips the others are 409).
func sampleEmbeddedIDs(ctx context.Context, pool *pgxpool.Pool, n int) ([]uuid.UUID, error) {
	return database.Select(ctx, pool, pgx.RowTo[uuid.UUID],
		`SELECT id FROM videos TABLESAMPLE SYSTEM (5) WHERE embedding_status = 'ready' LIMIT $1`, n)
}

// queryClass is one row of the table: how to make its n-th request path.
type queryClass struct {
	name string
	path func(rng *rand.Rand) string
	// semantic returns the query parameters of a semantic class (for its
	// recall); nil for the others.
	semantic func(rng *rand.Rand) url.Values
	// similar returns the clip and the query parameters of a "more like
	// this" class (for its recall); nil for the others.
	similar func(rng *rand.Rand) (uuid.UUID, url.Values)
}

// The keyword classes draw their words from the catalog's own (seed.go),
// many queries of each kind, so that no answer is found in a cache the
// way a handful of repeated queries would be: a "what" word (of the clip's
// action) and a "where" word (its place, person or tag), 210 pairs; and a
// prefix of 3 to 5 letters of any of them.
var (
	keywordWhat = []string{"laughing", "phone", "coffee", "drinking", "driving", "car", "unboxing", "package",
		"waving", "camera", "cooking", "dinner", "walking", "dog", "laptop"}
	keywordWhere    = []string{"home", "kitchen", "office", "street", "cafe", "park", "gym", "beach", "bedroom", "woman", "man", "teenager", "couple", "ugc"}
	keywordPrefixOf = append(append([]string{}, keywordWhat...), keywordWhere[:9]...)
)

// queryClasses are the query classes of issue 14's table, the id lookup
// first, and "more like this" of issue 42 beside semantic search: the
// same walk of the index, from a clip's stored vector (embedded, clips
// with one).
func queryClasses(ids, embedded []uuid.UUID) []queryClass {
	emotions, genders, orients := catalog.Emotions(), catalog.Genders(), catalog.Orientations()
	pick := func(rng *rand.Rand, xs []string) string { return xs[rng.IntN(len(xs))] }
	q := func(v url.Values) string { return "?" + v.Encode() }
	semantic := func(rng *rand.Rand) url.Values {
		return url.Values{"semantic_search": {benchkit.SemanticQuery(rng)}, "limit": {"10"}}
	}
	semanticFiltered := func(rng *rand.Rand) url.Values {
		v := semantic(rng)
		v.Set("emotion", pick(rng, emotions))
		v.Set("gender", pick(rng, genders))
		return v
	}
	similar := func(rng *rand.Rand) (uuid.UUID, url.Values) {
		return embedded[rng.IntN(len(embedded))], url.Values{"limit": {"10"}}
	}
	similarFiltered := func(rng *rand.Rand) (uuid.UUID, url.Values) {
		id, v := similar(rng)
		v.Set("emotion", pick(rng, emotions))
		v.Set("gender", pick(rng, genders))
		return id, v
	}
	return []queryClass{
		{name: "`GET /api/v1/broll/:id`", path: func(rng *rand.Rand) string { return "/" + ids[rng.IntN(len(ids))].String() }},
		{name: "`?limit=20` (the default list)", path: func(*rand.Rand) string { return "?limit=20" }},
		{name: "two equality filters", path: func(rng *rand.Rand) string {
			return q(url.Values{"emotion": {pick(rng, emotions)}, "gender": {pick(rng, genders)}})
		}},
		{name: "three filters + sort by virality", path: func(rng *rand.Rand) string {
			return q(url.Values{"emotion": {pick(rng, emotions)}, "gender": {pick(rng, genders)},
				"orientation": {pick(rng, orients)}, "sort_by": {"virality_score"}})
		}},
		{name: "sort by price, page 50", path: func(rng *rand.Rand) string {
			return q(url.Values{"sort_by": {"price"}, "sort_order": {pick(rng, []string{"asc", "desc"})}, "page": {"50"}})
		}},
		{name: "emotion, limit 100, offset 5,000", path: func(rng *rand.Rand) string {
			return q(url.Values{"emotion": {pick(rng, emotions)}, "limit": {"100"}, "offset": {"5000"}})
		}},
		{name: "keyword search, two words", path: func(rng *rand.Rand) string {
			return q(url.Values{"search": {pick(rng, keywordWhat) + " " + pick(rng, keywordWhere)}})
		}},
		{name: "keyword search + a filter", path: func(rng *rand.Rand) string {
			return q(url.Values{"search": {pick(rng, keywordWhat) + " " + pick(rng, keywordWhere)}, "gender": {pick(rng, genders)}})
		}},
		{name: "keyword search + two filters", path: func(rng *rand.Rand) string {
			return q(url.Values{"search": {pick(rng, keywordWhat) + " " + pick(rng, keywordWhere)},
				"emotion": {pick(rng, emotions)}, "gender": {pick(rng, genders)}})
		}},
		{name: "keyword prefix", path: func(rng *rand.Rand) string {
			w := pick(rng, keywordPrefixOf)
			return q(url.Values{"search": {w[:3+rng.IntN(min(3, len(w)-2))]}})
		}},
		{name: "semantic search", path: func(rng *rand.Rand) string { return q(semantic(rng)) }, semantic: semantic},
		{name: "semantic search + two filters", path: func(rng *rand.Rand) string { return q(semanticFiltered(rng)) },
			semantic: semanticFiltered},
		{name: "similar (`/:id/similar`)", path: func(rng *rand.Rand) string { return similarPath(similar(rng)) }, similar: similar},
		{name: "similar + two filters", path: func(rng *rand.Rand) string { return similarPath(similarFiltered(rng)) },
			similar: similarFiltered},
		{name: "filter values (`/filters`)", path: func(*rand.Rand) string { return "/filters" }},
	}
}

func similarPath(id uuid.UUID, v url.Values) string {
	return "/" + id.String() + "/similar?" + v.Encode()
}

// similarRecall asks the API o.queries "more like this" pages of class c
// and compares each with the clip's exact nearest (a sequential scan
// sorted by distance to its stored vector, the clip left out, the same
// filters), as semanticRecall does.
func similarRecall(ctx context.Context, pool *pgxpool.Pool, base, key, model string, c queryClass, o userOptions) (float64, error) {
	rng := rand.New(rand.NewPCG(o.seed, 98))
	var found, wanted int
	for range o.queries {
		id, v := c.similar(rng)
		req, _ := http.NewRequestWithContext(ctx, "GET", base+similarPath(id, v), nil)
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		var page struct {
			Videos []struct {
				Similarity float64 `json:"similarity"`
			} `json:"videos"`
		}
		err = json.NewDecoder(res.Body).Decode(&page)
		res.Body.Close()
		if err != nil {
			return 0, fmt.Errorf("similar: status %d: %w", res.StatusCode, err)
		}
		if res.StatusCode != http.StatusOK {
			return 0, fmt.Errorf("similar: status %d", res.StatusCode)
		}
		var vec pgvector.Vector
		if err := pool.QueryRow(ctx, `SELECT embedding_half::vector(768) FROM videos WHERE id = $1`, id).Scan(&vec); err != nil {
			return 0, err
		}
		exact, err := exactSimilarities(ctx, pool, vec.Slice(), model, v.Get("emotion"), v.Get("gender"), id, 10)
		if err != nil {
			return 0, err
		}
		wanted += len(exact)
		if len(exact) == 0 {
			continue
		}
		floor := exact[len(exact)-1] - 1e-6
		for i, got := range page.Videos {
			if i < len(exact) && got.Similarity >= floor {
				found++
			}
		}
	}
	if wanted == 0 {
		return 1, nil
	}
	return float64(found) / float64(wanted), nil
}

// semanticRecall asks the API o.queries semantic searches of class c and
// compares each page with the exact nearest clips (a sequential scan
// sorted by distance, the same filters). A returned clip counts when it is
// no farther than the exact 10th (ties are equally good answers).
func semanticRecall(ctx context.Context, pool *pgxpool.Pool, base, key string, e embed.Embedder, c queryClass, o userOptions) (float64, error) {
	rng := rand.New(rand.NewPCG(o.seed, 99))
	var found, wanted int
	for range o.queries {
		v := c.semantic(rng)
		req, _ := http.NewRequestWithContext(ctx, "GET", base+"?"+v.Encode(), nil)
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		var page struct {
			Videos []struct {
				Similarity float64 `json:"similarity"`
			} `json:"videos"`
		}
		err = json.NewDecoder(res.Body).Decode(&page)
		res.Body.Close()
		if err != nil {
			return 0, fmt.Errorf("semantic search: status %d: %w", res.StatusCode, err)
		}
		if res.StatusCode != http.StatusOK {
			return 0, fmt.Errorf("semantic search: status %d", res.StatusCode)
		}
		vecs, err := e.Embed(ctx, embed.Query, []string{embed.NormalizeQuery(v.Get("semantic_search"))})
		if err != nil {
			return 0, err
		}
		exact, err := exactSimilarities(ctx, pool, vecs[0], e.Model(), v.Get("emotion"), v.Get("gender"), uuid.Nil, 10)
		if err != nil {
			return 0, err
		}
		wanted += len(exact)
		if len(exact) == 0 {
			continue
		}
		floor := exact[len(exact)-1] - 1e-6
		for i, got := range page.Videos {
			if i < len(exact) && got.Similarity >= floor {
				found++
			}
		}
	}
	if wanted == 0 {
		return 1, nil
	}
	return float64(found) / float64(wanted), nil
}

// exactSimilarities returns the k highest similarities by exact scan,
// clip exclude left out, by the distance the service ranks by: of the
// stored halfvecs (migration 00031), so recall measures what the graph
// walk misses. The full vectors' similarities are within about 1e-4 of
// them (docs/api.md).
func exactSimilarities(ctx context.Context, pool *pgxpool.Pool, vec []float32, model, emotion, gender string, exclude uuid.UUID, k int) ([]float64, error) {
	var out []float64
	err := pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET LOCAL enable_indexscan = off`); err != nil {
			return err
		}
		var err error
		out, err = database.Select(ctx, tx, pgx.RowTo[float64], `
			SELECT 1 - (embedding_half <=> $1::halfvec(768)) FROM videos
			WHERE retired_at IS NULL AND embedding_status = 'ready' AND embedding_model = $2
			  AND ($3 = '' OR emotion = $3) AND ($4 = '' OR gender = $4) AND id <> $5
			ORDER BY 1 DESC LIMIT `+strconv.Itoa(k), pgvector.NewHalfVector(vec), model, emotion, gender, exclude)
		return err
	})
	return out, err
}
