// Command search measures the catalog at scale in one run: import
// throughput (the real import path, and raw COPY), the HNSW index builds,
// and semantic search latency and recall@k against an exact scan, for
// unfiltered queries and for filters that keep about 7.7% (one emotion) and
// 2.6% (emotion and gender) of the clips, with and without pgvector's
// iterative index scans, and the catalog's own Search end to end.
//
//	make bench-search   (or: go run ./deploy/bench/search -clips 100000 -queries 200)
//
// With -users it measures what API clients get instead (runUsers):
//
//	make bench-search-users      (100,000 clips)
//	make bench-search-users-1m   (1,000,000 clips, 100,000 of them with vectors)
//
// The vectors are random unit vectors, by default of a low intrinsic
// dimension like text embeddings (-data lowrank), or uniform on the sphere
// (-data uniform), the worst case for any approximate index (see
// vectorSource). -emotion-indexes=false measures without the per-emotion
// indexes of migration 00002. It needs the local stack (DATABASE_URL) and
// works in a database of its own, created and dropped here. Output lines
// starting with "Benchmark" are benchstat input.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"broll/catalog/search"
	"broll/deploy/bench/benchkit"
	"broll/internal/config"
	"broll/wiring"
)

type options struct {
	clips, importVideos, queries, k int
	efSearch                        []int
	m, efConstruction               int
	seed                            uint64
	data                            string
	storage                         string
	keep                            bool
	emotionIndexes                  bool
	// recallTarget is the calibration's target (-recall-target).
	recallTarget float64
}

func main() {
	var o options
	var ef string
	flag.IntVar(&o.clips, "clips", 100_000, "clips with vectors in the searched catalog")
	flag.IntVar(&o.importVideos, "import", 10_000, "clips sent through the real import path")
	flag.IntVar(&o.queries, "queries", 200, "queries per scenario")
	flag.IntVar(&o.k, "k", 10, "results per query (recall@k)")
	flag.StringVar(&ef, "ef-search", "100,120,150", "hnsw.ef_search values to measure the raw index query and the catalog's search (its BROLL_SEMANTIC_EF_SEARCH) at")
	flag.IntVar(&o.m, "m", 0, "rebuild the index WITH (m = ...) instead of the migration's parameters")
	flag.IntVar(&o.efConstruction, "ef-construction", 0, "rebuild the index WITH (ef_construction = ...)")
	flag.StringVar(&o.data, "data", "lowrank", "vector distribution: lowrank (like embeddings), uniform (worst case), or vectors:DIR, a text embedder's vectors of the clips and queries of -texts DIR (texts.go)")
	flag.StringVar(&o.storage, "storage", "", "set the embedding column's storage (plain, external) before loading; empty keeps the migration's")
	flag.BoolVar(&o.emotionIndexes, "emotion-indexes", true, "build the per-emotion HNSW indexes of migration 00002 (false: the whole-catalog index only)")
	texts := flag.String("texts", "", "write the document texts of the -clips clips and -queries queries to this directory, for a text embedder to make their vectors (texts.go), and exit")
	flag.BoolVar(&o.keep, "keep", false, "keep the scratch database for a look afterwards (its URL is printed)")
	var seed int64
	flag.Int64Var(&seed, "seed", 1, "random seed of the data and the queries")
	var u userOptions
	users := flag.Bool("users", false, "measure what API clients get instead: import -clips through the import path, "+
		"embed -vectors of them, load every query class over HTTP (see runUsers)")
	flag.IntVar(&u.vectors, "vectors", 0, "with -users: clips given a vector (0: all)")
	flag.IntVar(&u.clients, "clients", 8, "with -users: concurrent HTTP clients")
	flag.DurationVar(&u.duration, "duration", 5*time.Second, "with -users: load time per query class")
	flag.DurationVar(&u.warmup, "warmup", 2*time.Second, "with -users: unmeasured load of each query class (other queries of its kind) before it is measured")
	flag.IntVar(&u.efSearch, "semantic-ef", search.DefaultEfSearch, "with -users: the API's BROLL_SEMANTIC_EF_SEARCH")
	flag.Float64Var(&u.recallTarget, "recall-target", search.DefaultRecallTarget, "the recall target the catalog is calibrated for before measuring, as a worker does (with -users the API's BROLL_SEMANTIC_RECALL_TARGET; 0: every search walks -semantic-ef)")
	flag.StringVar(&u.only, "classes", "", "with -users: measure only the query classes whose name contains this (the id lookup always)")
	flag.StringVar(&u.reuse, "reuse", "", "with -users: the URL of a database an earlier run kept (-keep): measure it again, migrated to this build, without importing")
	flag.StringVar(&u.cpuProfile, "cpuprofile", "", "with -users: write the process's CPU profile (node and load generator) of the measured classes to this file")
	flag.Parse()
	o.seed = uint64(seed)
	o.recallTarget = u.recallTarget
	if *texts != "" {
		if err := writeTexts(*texts, o); err != nil {
			fmt.Fprintln(os.Stderr, "search:", err)
			os.Exit(1)
		}
		return
	}
	if *users {
		u.clips, u.queries, u.seed, u.keep = o.clips, o.queries, o.seed, o.keep
		if u.vectors <= 0 || u.vectors > u.clips {
			u.vectors = u.clips
		}
		if err := runUsers(u); err != nil {
			fmt.Fprintln(os.Stderr, "search:", err)
			os.Exit(1)
		}
		return
	}
	for _, s := range strings.Split(ef, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || n > 1000 {
			fmt.Fprintf(os.Stderr, "search: -ef-search: %q is not a number from 1 to 1000\n", s)
			os.Exit(2)
		}
		o.efSearch = append(o.efSearch, n)
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "search:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	ctx := context.Background()
	sc, err := benchkit.OpenScratch(ctx, 0, o.keep)
	if err != nil {
		return err
	}
	defer sc.Close()
	pool := sc.Pool
	vecs, err := newVectorSource(o.data, o.seed, o.clips, o.queries)
	if err != nil {
		return err
	}
	fmt.Printf("search benchmark: %d clips, %s vectors, %d queries per scenario, k=%d, GOMAXPROCS=%d\n",
		o.clips, o.data, o.queries, o.k, runtime.GOMAXPROCS(0))

	imp, err := importThroughput(ctx, pool, o.importVideos, o.seed)
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	fmt.Printf("import (catalog path, JSON Lines, 3 media files per clip): %d clips in %s = %.0f clips/s\n",
		o.importVideos, imp.Round(time.Millisecond), float64(o.importVideos)/imp.Seconds())
	fmt.Printf("BenchmarkImport/catalog 1 %d ns/op %.0f clips/s\n", imp.Nanoseconds(), float64(o.importVideos)/imp.Seconds())

	load, err := loadCatalog(ctx, pool, o, vecs)
	if err != nil {
		return fmt.Errorf("load: %w", err)
	}
	fmt.Printf("raw COPY with vectors (indexes dropped): %d clips in %s = %.0f clips/s\n",
		o.clips, load.copied.Round(time.Millisecond), float64(o.clips)/load.copied.Seconds())
	fmt.Printf("HNSW build, whole catalog: %s  (%s)\n", load.builtWhole.Round(time.Millisecond), load.wholeDef)
	if o.emotionIndexes {
		fmt.Printf("HNSW build, 13 per-emotion indexes: %s\n", load.builtEmotion.Round(time.Millisecond))
	} else {
		fmt.Println("per-emotion indexes: left out (-emotion-indexes=false)")
	}
	fmt.Printf("BenchmarkImport/copy 1 %d ns/op %.0f clips/s\n", load.copied.Nanoseconds(), float64(o.clips)/load.copied.Seconds())
	fmt.Printf("BenchmarkIndexBuild/whole 1 %d ns/op\n", load.builtWhole.Nanoseconds())
	fmt.Printf("BenchmarkIndexBuild/emotion 1 %d ns/op\n", load.builtEmotion.Nanoseconds())
	var table, index, emotionIndexes, buffers string
	if err := pool.QueryRow(ctx, `
		SELECT pg_size_pretty(pg_table_size('videos')), pg_size_pretty(pg_relation_size('videos_half_hnsw')),
		       pg_size_pretty(coalesce(sum(pg_relation_size(i.indexrelid)) FILTER (WHERE c.relname LIKE 'videos\_half\_hnsw\_%'), 0)),
		       current_setting('shared_buffers')
		FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = 'videos'::regclass`).
		Scan(&table, &index, &emotionIndexes, &buffers); err != nil {
		return err
	}
	fmt.Printf("sizes: table %s, whole-catalog HNSW index %s, per-emotion HNSW indexes %s, shared_buffers %s\n",
		table, index, emotionIndexes, buffers)

	// The catalog's own search at each -ef-search value (its
	// BROLL_SEMANTIC_EF_SEARCH), so recall and cost are measured on the
	// API's path: the candidates beyond the page put in order by their halfvec
	// distances.
	var svcs []*search.Service
	var graphs []*wiring.Services
	defer func() {
		for _, g := range graphs {
			g.Close()
		}
	}()
	for _, ef := range o.efSearch {
		g, err := benchkit.OpenCatalogWith(ctx, pool, "", func(c *config.Config) {
			// Each walks its own list: the calibration below chooses
			// one without changing what these measure.
			c.SemanticEfSearch, c.SemanticRecallTarget = ef, 0
		})
		if err != nil {
			return err
		}
		graphs, svcs = append(graphs, g), append(svcs, g.Search)
	}
	// What a worker's calibration would choose on these vectors, for the
	// default recall target, up to the largest -ef-search.
	start := time.Now()
	c, err := svcs[len(svcs)-1].Calibrate(ctx, benchModel, search.CalibrateOptions{Target: o.recallTarget})
	if err != nil {
		return fmt.Errorf("calibrate: %w", err)
	}
	fmt.Printf("calibration (%d clips' vectors, %s): hnsw.ef_search %d, recall@10 %.3f for a target of %.2f; tried %v\n",
		c.Queries, time.Since(start).Round(time.Millisecond), c.EfSearch, c.Recall, c.Target, c.Measured)
	return measureSearch(ctx, pool, svcs, o, vecs.withSeed(o.seed+1))
}
