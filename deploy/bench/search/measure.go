package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
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
	"broll/internal/database"
)

// sqlNearest has the shape of the catalog's semantic query (nearestSQL):
// the index serves ORDER BY distance LIMIT k over videos with the filters
// checked as it yields rows, and the outer query sorts again. The distance
// is the graphs' own, of the stored halfvecs (migration 00031): by the full
// vector no index serves the order, and the "index" rows would be scans.
const sqlNearest = `
	WITH nearest AS MATERIALIZED (
		SELECT v.id, v.embedding_half <=> ($1::vector)::halfvec(768) AS distance FROM videos v
		WHERE v.retired_at IS NULL AND v.embedding_status = 'ready' AND v.embedding_model = $2 %s
		ORDER BY distance LIMIT $3
	)
	SELECT id FROM nearest ORDER BY distance, id`

// scenario is a filter and how to draw its values for one query.
type scenario struct {
	name   string
	where  string // extra conditions on $4, $5
	values func(rng *rand.Rand) []any
	query  func(values []any) search.Query
}

func scenarios() []scenario {
	emotions, genders := catalog.Emotions(), catalog.Genders()
	return []scenario{
		{"unfiltered", "", func(*rand.Rand) []any { return nil },
			func([]any) search.Query { return search.Query{} }},
		{"emotion(7.7%)", "AND v.emotion = $4",
			func(rng *rand.Rand) []any { return []any{emotions[rng.IntN(len(emotions))]} },
			func(v []any) search.Query { return search.Query{Emotion: v[0].(string)} }},
		{"emotion+gender(2.6%)", "AND v.emotion = $4 AND v.gender = $5",
			func(rng *rand.Rand) []any {
				return []any{emotions[rng.IntN(len(emotions))], genders[rng.IntN(len(genders))]}
			},
			func(v []any) search.Query { return search.Query{Emotion: v[0].(string), Gender: v[1].(string)} }},
	}
}

// settings are the index settings of one measured variant.
type settings struct {
	name      string
	exact     bool
	iterative bool
	efSearch  int
}

func (st settings) apply(ctx context.Context, tx pgx.Tx) error {
	if st.exact {
		_, err := tx.Exec(ctx, `SELECT set_config('enable_indexscan', 'off', true), set_config('plan_cache_mode', 'force_custom_plan', true)`)
		return err
	}
	mode := "off"
	if st.iterative {
		mode = "relaxed_order"
	}
	_, err := tx.Exec(ctx, `
		SELECT set_config('hnsw.iterative_scan', $1, true), set_config('hnsw.ef_search', $2, true),
		       set_config('hnsw.max_scan_tuples', '20000', true), set_config('plan_cache_mode', 'force_custom_plan', true)`,
		mode, fmt.Sprint(st.efSearch))
	return err
}

type stats struct {
	latencies []time.Duration
	recall    float64
	filled    int
	n         int
}

func (s *stats) add(d time.Duration, got, want []uuid.UUID, k int) {
	s.latencies = append(s.latencies, d)
	hits := 0
	for _, id := range want {
		if slices.Contains(got, id) {
			hits++
		}
	}
	if len(want) > 0 {
		s.recall += float64(hits) / float64(len(want))
	}
	if len(got) >= k {
		s.filled++
	}
	s.n++
}

func (s *stats) report(name string) {
	slices.Sort(s.latencies)
	r := benchkit.Result{Latencies: s.latencies}
	p50, p99 := r.Percentile(0.50), r.Percentile(0.99)
	fmt.Printf("  %-44s p50 %6.2f ms  p99 %6.2f ms  recall@k %.3f  filled %d/%d\n", name,
		benchkit.Millis(p50), benchkit.Millis(p99), s.recall/float64(s.n), s.filled, s.n)
	fmt.Printf("BenchmarkSearch/%s %d %d ns/op %d p99-ns %.4f recall %.4f filled\n", strings.ReplaceAll(name, " ", "_"),
		s.n, p50.Nanoseconds(), p99.Nanoseconds(), s.recall/float64(s.n), float64(s.filled)/float64(s.n))
}

func nearest(ctx context.Context, pool *pgxpool.Pool, st settings, sc scenario, q []float32, vals []any, k int) ([]uuid.UUID, time.Duration, error) {
	args := append([]any{pgvector.NewVector(q), benchModel, k}, vals...)
	var ids []uuid.UUID
	start := time.Now()
	err := pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if err := st.apply(ctx, tx); err != nil {
			return err
		}
		var err error
		ids, err = database.Select(ctx, tx, pgx.RowTo[uuid.UUID], fmt.Sprintf(sqlNearest, sc.where), args...)
		return err
	})
	return ids, time.Since(start), err
}

// fixedEmbedder hands the catalog a prepared query vector.
type fixedEmbedder struct{ vec []float32 }

func (f *fixedEmbedder) EmbedQuery(context.Context, string) ([]float32, error) { return f.vec, nil }
func (f *fixedEmbedder) Model() string                                         { return benchModel }

func measureSearch(ctx context.Context, pool *pgxpool.Pool, svcs []*search.Service, o options, vecs *vectorSource) error {
	rng := rand.New(rand.NewPCG(o.seed, 4))
	queries := make([][]float32, o.queries)
	for i := range queries {
		queries[i] = vecs.next()
	}
	if err := explain(ctx, pool, o, queries[0]); err != nil {
		return err
	}
	for _, sc := range scenarios() {
		vals := make([][]any, o.queries)
		exact := make([][]uuid.UUID, o.queries)
		var ex stats
		for i, q := range queries {
			vals[i] = sc.values(rng)
			ids, d, err := nearest(ctx, pool, settings{exact: true}, sc, q, vals[i], o.k)
			if err != nil {
				return fmt.Errorf("exact %s: %w", sc.name, err)
			}
			exact[i] = ids
			ex.add(d, ids, ids, o.k)
		}
		fmt.Printf("%s:\n", sc.name)
		ex.report(sc.name + " exact scan")

		variants := []settings{{name: "hnsw no iterative scan ef=100", efSearch: 100}}
		for _, ef := range o.efSearch {
			variants = append(variants, settings{name: fmt.Sprintf("hnsw relaxed_order ef=%d", ef), iterative: true, efSearch: ef})
		}
		for _, st := range variants {
			for _, q := range queries[:min(20, len(queries))] { // warm the index pages
				if _, _, err := nearest(ctx, pool, st, sc, q, vals[0], o.k); err != nil {
					return err
				}
			}
			var s stats
			for i, q := range queries {
				ids, d, err := nearest(ctx, pool, st, sc, q, vals[i], o.k)
				if err != nil {
					return fmt.Errorf("%s %s: %w", sc.name, st.name, err)
				}
				s.add(d, ids, exact[i], o.k)
			}
			s.report(sc.name + " " + st.name)
			hit, read, err := bufferUse(ctx, pool, st, sc, queries[0], vals[0], o.k)
			if err != nil {
				return err
			}
			fmt.Printf("  %-44s one query touched %d buffers, %d of them read from outside shared_buffers\n", "", hit+read, read)
		}

		// The whole catalog search as the API runs it, at each ef_search:
		// index settings, the nearest query with the clip rows, the capped
		// count, the exact fallback when needed.
		for n, svc := range svcs {
			var s stats
			for i, q := range queries {
				cq := sc.query(vals[i])
				cq.SemanticSearch, cq.Limit = "bench", o.k
				start := time.Now()
				page, err := svc.Search(ctx, cq, &fixedEmbedder{vec: q})
				if err != nil {
					return fmt.Errorf("catalog search %s: %w", sc.name, err)
				}
				ids := make([]uuid.UUID, len(page.Videos))
				for j, v := range page.Videos {
					ids[j] = v.ID
				}
				s.add(time.Since(start), ids, exact[i], o.k)
			}
			s.report(fmt.Sprintf("%s catalog.Search ef=%d", sc.name, o.efSearch[n]))
		}
	}
	return otherQueries(ctx, svcs[len(svcs)-1])
}

// explain prints whether the filtered query walks the HNSW index.
func explain(ctx context.Context, pool *pgxpool.Pool, o options, q []float32) error {
	sc := scenarios()[1]
	args := append([]any{pgvector.NewVector(q), benchModel, o.k}, sc.values(rand.New(rand.NewPCG(1, 1)))...)
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if err := (settings{iterative: true, efSearch: 100}).apply(ctx, tx); err != nil {
			return err
		}
		plan, err := database.Select(ctx, tx, pgx.RowTo[string], "EXPLAIN "+fmt.Sprintf(sqlNearest, sc.where), args...)
		if err != nil {
			return err
		}
		fmt.Printf("filtered query plan uses videos_half_hnsw: %v\n",
			strings.Contains(strings.Join(plan, "\n"), "videos_half_hnsw"))
		return nil
	})
}

// otherQueries times the rest of what a catalog client calls, for scale.
func otherQueries(ctx context.Context, svc *search.Service) error {
	fmt.Println("other catalog queries:")
	cases := []struct {
		name string
		run  func() error
	}{
		{"filters (GET /broll/filters)", func() error { _, err := svc.Filters(ctx); return err }},
		{"list newest, emotion filter", func() error {
			_, err := svc.Search(ctx, search.Query{Emotion: "happy"}, nil)
			return err
		}},
		{"list by price, page 50", func() error {
			_, err := svc.Search(ctx, search.Query{SortBy: search.SortPrice, Offset: 980}, nil)
			return err
		}},
		{"keyword search \"laughing phone\"", func() error {
			_, err := svc.Search(ctx, search.Query{Search: "laughing phone"}, nil)
			return err
		}},
		{"keyword prefix \"unbox\"", func() error {
			_, err := svc.Search(ctx, search.Query{Search: "unbox"}, nil)
			return err
		}},
	}
	for _, c := range cases {
		var s stats
		for range 30 {
			start := time.Now()
			if err := c.run(); err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			s.latencies = append(s.latencies, time.Since(start))
		}
		slices.Sort(s.latencies)
		r := benchkit.Result{Latencies: s.latencies}
		fmt.Printf("  %-44s p50 %6.2f ms  p99 %6.2f ms\n", c.name, benchkit.Millis(r.Percentile(0.5)), benchkit.Millis(r.Percentile(0.99)))
	}
	return nil
}

var buffersLine = regexp.MustCompile(`Buffers: shared(?: hit=(\d+))?(?: read=(\d+))?`)

// bufferUse runs one query under EXPLAIN (ANALYZE, BUFFERS) and returns the
// shared buffers of its top plan node: pages found in shared_buffers and
// pages read from the operating system (its cache or the disk).
func bufferUse(ctx context.Context, pool *pgxpool.Pool, st settings, sc scenario, q []float32, vals []any, k int) (hit, read int, err error) {
	args := append([]any{pgvector.NewVector(q), benchModel, k}, vals...)
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if err := st.apply(ctx, tx); err != nil {
			return err
		}
		plan, err := database.Select(ctx, tx, pgx.RowTo[string], "EXPLAIN (ANALYZE, BUFFERS) "+fmt.Sprintf(sqlNearest, sc.where), args...)
		if err != nil {
			return err
		}
		for _, line := range plan {
			if m := buffersLine.FindStringSubmatch(line); m != nil {
				hit, _ = strconv.Atoi(m[1])
				read, _ = strconv.Atoi(m[2])
				return nil
			}
		}
		return nil
	})
	return hit, read, err
}
