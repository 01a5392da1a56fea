package search

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"broll/catalog"
	"broll/catalog/catalogtest"
	"broll/embed"
	"broll/internal/apperr"
	"broll/internal/database"
)

func TestSemanticSearchRanksBySimilarity(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ready := f.Live(func(c fixClip) bool { return c.Ready })
	if len(ready) == len(f.Live(nil)) {
		t.Fatal("fixture should hold a clip without a vector")
	}

	p := f.search(t, Query{SemanticSearch: "woman laughing in a car", Limit: 100})
	got := f.Keys(p.Videos)
	if got[0] != "carLaugh" || p.Total != len(ready) || len(got) != len(ready) || p.HasMore {
		t.Fatalf("got %v (total %d), want carLaugh first of %d", got[:3], p.Total, len(ready))
	}
	checkSimilarityOrder(t, p.Videos)
	if slices.Contains(got, catalogtest.ClipKeys(f.Clips)[len(f.Clips)-1]) {
		t.Fatal("a clip without a vector is in semantic results")
	}

	// Paraphrases made of vocabulary synonyms find the clip they describe.
	for query, want := range map[string]string{
		"lady giggling behind the wheel":          "carLaugh",
		"cheerful gal behind the wheel":           "carSmile",
		"guy sipping an espresso while cooking":   "coffeeMan",
		"dude opening a parcel, caught off guard": "unboxing",
		"teen in tears on the bed":                "crying",
	} {
		p := f.search(t, Query{SemanticSearch: query, Limit: 3})
		if got := f.Keys(p.Videos); got[0] != want {
			t.Errorf("%q: got %v, want %s first", query, got, want)
		}
	}

	// Filters apply on top; the order stays by similarity.
	p = f.search(t, Query{SemanticSearch: "woman laughing in a car", Emotion: "happy", Limit: 100})
	want := f.Live(func(c fixClip) bool { return c.Ready && c.In.Emotion == "happy" })
	if got := f.Keys(p.Videos); got[0] != "carSmile" || len(got) != len(want) || p.Total != len(want) {
		t.Fatalf("happy: %v, want %d clips", got, len(want))
	}
	for _, v := range p.Videos {
		if v.Emotion != "happy" {
			t.Fatalf("filter ignored: %s", v.Emotion)
		}
	}
	checkSimilarityOrder(t, p.Videos)

	// Pages of the ranking line up.
	all := f.Keys(f.search(t, Query{SemanticSearch: "man", Limit: 100}).Videos)
	page2 := f.search(t, Query{SemanticSearch: "man", Limit: 5, Offset: 5})
	if got := f.Keys(page2.Videos); !slices.Equal(got, all[5:10]) || !page2.HasMore || page2.Page != 2 {
		t.Fatalf("page 2: %v, want %v", got, all[5:10])
	}

	// sort_by overrides the ranking, similarity stays.
	p = f.search(t, Query{SemanticSearch: "woman laughing", SortBy: SortVirality, Limit: 100})
	if p.Total != len(ready) {
		t.Fatalf("sorted semantic total %d", p.Total)
	}
	for i, v := range p.Videos {
		if v.Similarity == nil {
			t.Fatalf("%s lacks similarity", v.Title)
		}
		if i > 0 && v.ViralityScore != nil && (p.Videos[i-1].ViralityScore == nil || *p.Videos[i-1].ViralityScore < *v.ViralityScore) {
			t.Fatalf("not by virality at %d", i)
		}
	}
}

func checkSimilarityOrder(t *testing.T, videos []catalog.Video) {
	t.Helper()
	for i, v := range videos {
		if v.Similarity == nil || *v.Similarity > 1.0001 || *v.Similarity < -1.0001 {
			t.Fatalf("%s: similarity %v", v.Title, v.Similarity)
		}
		if i > 0 && *videos[i-1].Similarity < *v.Similarity {
			t.Fatalf("not ordered by similarity at %d: %v < %v", i, *videos[i-1].Similarity, *v.Similarity)
		}
	}
}

// stubEmbedder answers every query with one vector of a named model.
type stubEmbedder struct {
	model string
	vec   []float32
	err   error
}

func (s stubEmbedder) EmbedQuery(context.Context, string) ([]float32, error) { return s.vec, s.err }
func (s stubEmbedder) Model() string                                         { return s.model }

func TestSemanticSearchModelAndAvailability(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	vec := make([]float32, embed.Dimensions)
	vec[0] = 1

	// Vectors of another model are never compared with the query's.
	p, err := f.svc.Search(f.Ctx, Query{SemanticSearch: "car"}, stubEmbedder{model: "other-model", vec: vec})
	if err != nil || len(p.Videos) != 0 || p.Total != 0 {
		t.Fatalf("other model: %d videos, total %d, %v", len(p.Videos), p.Total, err)
	}
	_, err = f.svc.Search(f.Ctx, Query{SemanticSearch: "car"}, nil)
	if apperr.CodeOf(err) != apperr.Unavailable {
		t.Fatalf("no embedder: %v", err)
	}
	_, err = f.svc.Search(f.Ctx, Query{SemanticSearch: "car"}, stubEmbedder{model: f.Model, err: errors.New("connection refused")})
	if ae, ok := apperr.As(err); !ok || ae.Code != apperr.Unavailable || strings.Contains(ae.Message, "refused") {
		t.Fatalf("failing embedder: %v", err)
	}
	// Keyword search and listing do not need the embedder.
	if _, err := f.svc.Search(f.Ctx, Query{Search: "car"}, nil); err != nil {
		t.Fatal(err)
	}
}

// bulkClips inserts n clips whose emotion cycles through the 13 values and
// gender through the 3, with random unit vectors of model "random"; one
// clip in 100 has model_id "rare". It returns the vectors by id. The HNSW
// indexes are rebuilt from their own definitions once the vectors are in:
// one build is many times faster than as many single inserts.
func bulkClips(t *testing.T, b *catalogtest.Catalog, n int, seed uint64) map[uuid.UUID][]float32 {
	t.Helper()
	rows, err := b.Pool.Query(b.Ctx, `
		SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'videos' AND indexdef LIKE '%USING hnsw%'`)
	if err != nil {
		t.Fatal(err)
	}
	var names, defs []string
	var name, def string
	if _, err := pgx.ForEachRow(rows, []any{&name, &def}, func() error {
		names, defs = append(names, name), append(defs, def)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if _, err := b.Pool.Exec(b.Ctx, `DROP INDEX `+pgx.Identifier{name}.Sanitize()); err != nil {
			t.Fatal(err)
		}
	}
	rows, err = b.Pool.Query(b.Ctx, `
		INSERT INTO videos (title, emotion, gender, difficulty, media_key, model_id)
		SELECT 'Bulk clip ' || i, ($2::text[])[1 + i % 13], ($3::text[])[1 + i % 3], 'easy', 'clips/bulk',
		       CASE WHEN i % 100 = 0 THEN 'rare' END
		FROM generate_series(0, $1 - 1) AS i
		RETURNING id`, n, catalog.Emotions(), catalog.Genders())
	if err != nil {
		t.Fatal(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	vecs := map[uuid.UUID][]float32{}
	embs := make([]catalog.Embedding, len(ids))
	for i, id := range ids {
		vecs[id] = randomUnit(rng)
		embs[i] = catalog.Embedding{ID: id, Vector: vecs[id]}
	}
	if err := b.Cat.StoreEmbeddings(b.Ctx, "random", embs); err != nil {
		t.Fatal(err)
	}
	for _, def := range defs {
		if _, err := b.Pool.Exec(b.Ctx, def); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.Pool.Exec(b.Ctx, `ANALYZE videos`); err != nil {
		t.Fatal(err)
	}
	return vecs
}

func randomUnit(rng *rand.Rand) []float32 {
	v := make([]float32, embed.Dimensions)
	var sum float64
	for i := range v {
		x := rng.NormFloat64()
		v[i], sum = float32(x), sum+x*x
	}
	for i := range v {
		v[i] = float32(float64(v[i]) / math.Sqrt(sum))
	}
	return v
}

// indexOnly is a service whose connections (pool) are kept from sorting or
// scanning the table, so every semantic search walks the HNSW index, as it
// does on a large catalog (a small one is cheaper to sort whole).
func indexOnly(t *testing.T, b *catalogtest.Catalog, more ...string) (*Service, *pgxpool.Pool) {
	t.Helper()
	url := b.Pool.Config().ConnConfig.ConnString()
	params := strings.Join(append([]string{"enable_sort=off", "enable_seqscan=off"}, more...), "&")
	if strings.Contains(url, "?") {
		url += "&" + params
	} else {
		url += "?" + params
	}
	pool, err := database.Open(b.Ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return New(catalog.NewService(catalog.ServiceOptions{Pool: pool})), pool
}

func TestSemanticSearchFillsFilteredPages(t *testing.T) {
	t.Parallel()
	b := catalogtest.New(t, nil)
	vecs := bulkClips(t, b, 600, 7)
	svc, pool := indexOnly(t, b)
	query := randomUnit(rand.New(rand.NewPCG(99, 1)))
	qe := stubEmbedder{model: "random", vec: query}
	// One clip in 3 is male; no index is made for gender, so the search
	// walks the whole-catalog graph and filters as it goes.
	q := Query{SemanticSearch: "men", Gender: "male", Limit: 20}
	if err := q.Validate(); err != nil {
		t.Fatal(err)
	}

	// The plan walks the HNSW index, and without iterative scans the
	// filter starves it: ef_search (40) candidates, 1 in 3 kept.
	sq := buildSearch(q, query, "random")
	var plan string
	err := pgx.BeginFunc(b.Ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(b.Ctx, `SET LOCAL hnsw.iterative_scan = off`); err != nil {
			return err
		}
		var err error
		if plan, err = explainSQL(b, tx, sq.page); err != nil {
			return err
		}
		starved, err := pageRows(b, tx, sq.page)
		if err != nil {
			return err
		}
		if len(starved) >= q.Limit {
			t.Errorf("without iterative scans the page filled (%d); the test shows nothing", len(starved))
		}
		// With the search's settings the index alone fills the page (and
		// the one more row that tells has_more), no exact scan needed.
		hs := svc.hnsw()
		if _, err := tx.Exec(b.Ctx, sqlHNSWSettings, fmt.Sprint(hs.efSearch), fmt.Sprint(hs.maxScanTuples), "force_custom_plan", "relaxed_order"); err != nil {
			return err
		}
		filled, err := pageRows(b, tx, sq.page)
		if len(filled) != q.Limit+1 {
			t.Errorf("iterative scan returned %d rows, want %d", len(filled), q.Limit+1)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan, "Index Scan using videos_half_hnsw on") {
		t.Fatalf("plan does not walk the whole-catalog HNSW index:\n%s", plan)
	}

	p, err := svc.Search(b.Ctx, q, qe)
	if err != nil {
		t.Fatal(err)
	}
	matching := b.Count(t, `SELECT count(*) FROM videos WHERE gender = 'male'`)
	if len(p.Videos) != q.Limit || !p.HasMore || p.Total != matching {
		t.Fatalf("%d videos, has_more %v, total %d of %d", len(p.Videos), p.HasMore, p.Total, matching)
	}
	checkSimilarityOrder(t, p.Videos)
	want := exactTop(t, b, vecs, query, `gender = 'male'`, q.Limit)
	if r := recall(p.Videos, want); r < 0.9 {
		t.Fatalf("recall %.2f against an exact scan", r)
	}
	for _, v := range p.Videos {
		if v.Gender != "male" {
			t.Fatalf("filter ignored: %s", v.Gender)
		}
	}

	// An emotion filter walks that emotion's own graph (migration 00002).
	q = Query{SemanticSearch: "angry", Emotion: "angry", Gender: "male", Limit: 5}
	if err := q.Validate(); err != nil {
		t.Fatal(err)
	}
	sq = buildSearch(q, query, "random")
	err = pgx.BeginFunc(b.Ctx, pool, func(tx pgx.Tx) error {
		hs := svc.hnsw()
		if _, err := tx.Exec(b.Ctx, sqlHNSWSettings, fmt.Sprint(hs.efSearch), fmt.Sprint(hs.maxScanTuples), "force_custom_plan", "relaxed_order"); err != nil {
			return err
		}
		plan, err = explainSQL(b, tx, sq.page)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan, "videos_half_hnsw_angry") {
		t.Fatalf("an emotion filter does not use its own index:\n%s", plan)
	}
	p, err = svc.Search(b.Ctx, q, qe)
	if err != nil {
		t.Fatal(err)
	}
	want = exactTop(t, b, vecs, query, `emotion = 'angry' AND gender = 'male'`, q.Limit)
	if len(p.Videos) != q.Limit || recall(p.Videos, want) < 0.8 {
		t.Fatalf("angry men: %d videos, recall %.2f", len(p.Videos), recall(p.Videos, want))
	}

	// A filter almost nothing passes makes the index give up early (here
	// after 50 tuples, 1 in 100 passing): the page is made again by exact
	// scan.
	q = Query{SemanticSearch: "rare", ModelID: "rare", Limit: 10}
	if err := q.Validate(); err != nil {
		t.Fatal(err)
	}
	sq = buildSearch(q, query, "random")
	c := svc.newCounter(b.Ctx, b.Pool, sq, false)
	rows, err := svc.runNearest(b.Ctx, b.Pool, q, sq, hnswSettings{efSearch: 10, maxScanTuples: 50}, c)
	if err != nil {
		t.Fatal(err)
	}
	total, _, err := c.total()
	if err != nil {
		t.Fatal(err)
	}
	videos := make([]catalog.Video, len(rows))
	for i, r := range rows {
		videos[i] = r.video
	}
	want = exactTop(t, b, vecs, query, `model_id = 'rare'`, 10)
	if total != 6 || len(videos) != 6 || recall(videos, want) != 1 {
		t.Fatalf("rare: %d videos, total %d, recall %.2f", len(videos), total, recall(videos, want))
	}
	checkSimilarityOrder(t, videos)
}

// A semantic search whose filters do not change which rows the graph walk
// should yield keeps the plan its connection made once, without the
// arguments (planOnce); that plan walks the right graph, and a filter that
// may match few clips is planned for its value every time.
func TestSemanticPlanMadeOnce(t *testing.T) {
	t.Parallel()
	b := catalogtest.New(t, nil)
	vecs := bulkClips(t, b, 600, 11)
	// One connection, so the statements prepared by the searches are the
	// ones this test then looks at.
	svc, pool := indexOnly(t, b, "pool_max_conns=1")
	query := randomUnit(rand.New(rand.NewPCG(5, 5)))
	qe := stubEmbedder{model: "random", vec: query}

	angry := Query{SemanticSearch: "angry men", Emotion: "angry", Gender: "male", Limit: 5}
	local := Query{SemanticSearch: "near", Location: "home", Limit: 5}
	for _, q := range []*Query{&angry, &local} {
		if err := q.Validate(); err != nil {
			t.Fatal(err)
		}
		if got, want := buildSearch(*q, query, "random").planOnce, q.Location == ""; got != want {
			t.Fatalf("%+v: planOnce %v", q, got)
		}
		for range 3 {
			p, err := svc.Search(b.Ctx, *q, qe)
			if err != nil {
				t.Fatal(err)
			}
			checkSimilarityOrder(t, p.Videos)
			for _, v := range p.Videos {
				if (q.Emotion != "" && v.Emotion != q.Emotion) || (q.Location != "" && (v.Location == nil || *v.Location != q.Location)) {
					t.Fatalf("filter ignored: %+v", v)
				}
			}
		}
	}
	p, err := svc.Search(b.Ctx, angry, qe)
	if err != nil {
		t.Fatal(err)
	}
	want := exactTop(t, b, vecs, query, `emotion = 'angry' AND gender = 'male'`, angry.Limit)
	if len(p.Videos) != angry.Limit || recall(p.Videos, want) < 0.8 {
		t.Fatalf("angry men: %d videos, recall %.2f", len(p.Videos), recall(p.Videos, want))
	}

	conn, err := pool.Acquire(b.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	plans := map[string][2]int{}
	rows, err := conn.Query(b.Ctx, `SELECT name, statement, generic_plans, custom_plans FROM pg_prepared_statements
		WHERE statement LIKE '%WITH nearest%'`)
	if err != nil {
		t.Fatal(err)
	}
	var angryStmt string
	for rows.Next() {
		var name, sql string
		var generic, custom int
		if err := rows.Scan(&name, &sql, &generic, &custom); err != nil {
			t.Fatal(err)
		}
		switch {
		case strings.Contains(sql, "v.emotion = 'angry'"):
			plans["angry"], angryStmt = [2]int{generic, custom}, name
		case strings.Contains(sql, "v.location = "):
			plans["location"] = [2]int{generic, custom}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if plans["angry"] != [2]int{4, 0} || plans["location"] != [2]int{0, 3} {
		t.Fatalf("plans made (generic, custom) per statement: %v, want angry [4 0] and location [0 3]", plans)
	}

	// The plan made once walks the emotion's own graph: the emotion is in
	// the text, the LIMIT too.
	// EXECUTE takes no $n arguments: they are written as constants.
	sq := buildSearch(angry, query, "random")
	params := make([]string, len(sq.page.args))
	for i, a := range sq.page.args {
		switch a := a.(type) {
		case fmt.Stringer, string:
			params[i] = enumLiteral(fmt.Sprint(a))
		case int:
			params[i] = fmt.Sprint(a)
		default:
			t.Fatalf("argument %d: %T", i+1, a)
		}
	}
	tx, err := conn.Begin(b.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(b.Ctx) //nolint:errcheck // read only
	if _, err := tx.Exec(b.Ctx, `SET LOCAL plan_cache_mode = force_generic_plan`); err != nil {
		t.Fatal(err)
	}
	plan, err := explainSQL(b, tx, statement{sql: "EXECUTE " + angryStmt + "(" + strings.Join(params, ", ") + ")"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan, "videos_half_hnsw_angry") {
		t.Fatalf("the plan made once does not walk the emotion's graph:\n%s", plan)
	}
}

func explainSQL(b *catalogtest.Catalog, tx pgx.Tx, st statement) (string, error) {
	rows, err := tx.Query(b.Ctx, "EXPLAIN "+st.sql, st.args...)
	if err != nil {
		return "", err
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return strings.Join(lines, "\n"), err
}

func pageRows(b *catalogtest.Catalog, tx pgx.Tx, st statement) ([]catalog.Video, error) {
	rows, err := tx.Query(b.Ctx, st.sql, st.args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (catalog.Video, error) {
		var key any
		return b.Cat.ScanListed(r, &key)
	})
}

// exactTop returns the ids of the k clips nearest to query among those
// matching where, computed in Go from the stored vectors.
func exactTop(t *testing.T, b *catalogtest.Catalog, vecs map[uuid.UUID][]float32, query []float32, where string, k int) []uuid.UUID {
	t.Helper()
	rows, err := b.Pool.Query(b.Ctx, `SELECT id FROM videos WHERE `+where)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		t.Fatal(err)
	}
	dot := func(id uuid.UUID) float64 {
		var s float64
		for i, x := range vecs[id] {
			s += float64(x) * float64(query[i])
		}
		return s
	}
	slices.SortFunc(ids, func(a, b uuid.UUID) int { return cmp.Compare(dot(b), dot(a)) })
	return ids[:min(k, len(ids))]
}

func recall(got []catalog.Video, want []uuid.UUID) float64 {
	hits := 0
	for _, id := range want {
		if slices.ContainsFunc(got, func(v catalog.Video) bool { return v.ID == id }) {
			hits++
		}
	}
	return float64(hits) / float64(len(want))
}

// TestSemanticSearchWalksOnPastRetiredClips: a semantic search with no
// filter but the meaning walks its graph without iterative scans
// (Query.graphAlone); when retired clips crowd the nearest candidates out
// of the page, it walks again with them, and the page is as full and as
// near as with iterative scans from the start.
func TestSemanticSearchWalksOnPastRetiredClips(t *testing.T) {
	t.Parallel()
	b := catalogtest.New(t, nil)
	vecs := bulkClips(t, b, 600, 11)
	svc, pool := indexOnly(t, b)
	query := randomUnit(rand.New(rand.NewPCG(21, 1)))
	nearest := exactTop(t, b, vecs, query, "true", 40)
	if _, err := b.Pool.Exec(b.Ctx, `UPDATE videos SET retired_at = now() WHERE id = ANY($1)`, nearest); err != nil {
		t.Fatal(err)
	}
	q := Query{SemanticSearch: "crowded", Limit: 5}
	if err := q.Validate(); err != nil {
		t.Fatal(err)
	}
	if !q.graphAlone() || (Query{SemanticSearch: "x", Gender: "male"}).graphAlone() || !(Query{SemanticSearch: "x", Emotion: "happy"}).graphAlone() {
		t.Fatal("graphAlone: want true for no filter and for an emotion, false for a gender")
	}
	hs := hnswSettings{efSearch: 10, maxScanTuples: 20_000}
	sq := buildSearch(q, query, "random")
	// Without iterative scans alone the retired clips starve the page.
	err := pgx.BeginFunc(b.Ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(b.Ctx, sqlHNSWSettings, "16", fmt.Sprint(hs.maxScanTuples), "force_custom_plan", "off"); err != nil {
			return err
		}
		starved, err := pageRows(b, tx, sq.page)
		if err == nil && len(starved) > q.Limit {
			t.Errorf("without iterative scans the page filled (%d rows); the test shows nothing", len(starved))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// A total that says nothing more matches keeps the exact scan, the
	// last resort, out of it: only the second walk can fill the page.
	none := &counter{cached: &countEntry{exact: true}}
	rows, err := svc.runNearest(b.Ctx, pool, q, sq, hs, none)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != q.Limit+1 {
		t.Fatalf("%d rows, want %d", len(rows), q.Limit+1)
	}
	videos := make([]catalog.Video, q.Limit)
	for i, r := range rows[:q.Limit] {
		videos[i] = r.video
		if slices.Contains(nearest, r.video.ID) {
			t.Fatalf("retired clip %s on the page", r.video.ID)
		}
	}
	checkSimilarityOrder(t, videos)
	if r := recall(videos, exactTop(t, b, vecs, query, "retired_at IS NULL", q.Limit)); r < 0.8 {
		t.Fatalf("recall %.2f against an exact scan of the live clips", r)
	}
}
