package search

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"broll/catalog"
	"broll/internal/paging"
)

// QueryEmbedder turns a semantic_search text into a vector of the model it
// names (embed.QueryCache, which keeps them in Redis).
type QueryEmbedder interface {
	EmbedQuery(ctx context.Context, text string) ([]float32, error)
	Model() string
}

// Page is one page of search results.
type Page struct {
	Videos []catalog.Video
	// Total counts every clip the query matches (for a semantic search:
	// every matching clip with a ready vector of the current model), exact
	// up to CountBound; beyond it Total is the planner's estimate (at least
	// CountBound+1) and TotalExact false.
	Total      int
	TotalExact bool
	Limit      int
	Offset     int
	Page       int // 1-based; offset / limit + 1
	HasMore    bool
	// NextCursor continues the query after this page (Query.Cursor); ""
	// on the last page, and where a semantic search reaches its window.
	NextCursor string
}

// row is a result row with its sort key, for the next cursor.
type row struct {
	video catalog.Video
	key   any
}

// Vector index settings of a semantic search (pgvector 0.8), set per
// transaction. With iterative scans the HNSW index keeps walking its graph
// while filters reject what it found, so a filtered search still fills its
// page; relaxed order is the fast mode, its slight disorder undone by the
// outer sort of nearestSQL. max_scan_tuples bounds the walk for filters
// that almost nothing passes; when it ends short of a page although the
// count says more clips match, the page is made again by exact scan.
// The values are measured by deploy/bench/search (docs/performance.md).
type hnswSettings struct {
	efSearch      int
	maxScanTuples int
}

// maxEfSearch is the largest hnsw.ef_search pgvector accepts.
const maxEfSearch = 1000

// DefaultEfSearch is the HNSW candidate list of a semantic search unless
// the service is given another (BROLL_SEMANTIC_EF_SEARCH).
const DefaultEfSearch = 120

func (s *Service) hnsw() hnswSettings {
	return hnswSettings{efSearch: s.efSearch, maxScanTuples: 20_000}
}

// Search runs a catalog search. Retired clips never appear. A query
// matched by meaning is compared with a vector of qe's model: with
// q.SemanticSearch the text's, embedded by qe; with q.SimilarTo the clip's
// own stored vector (queryVector). A nil qe (or one that fails) makes
// semantic search unavailable, never an internal error. Difficulty is
// checked against the tiers only when nothing matched, which is the only
// time an unknown one can be told from an empty result.
func (s *Service) Search(ctx context.Context, q Query, qe QueryEmbedder) (Page, error) {
	if err := q.Validate(); err != nil {
		return Page{}, err
	}
	var rows []row
	var total int
	exact, listed := true, false
	if l := s.listingsFor(ctx, q); l != nil {
		var err error
		rows, total, exact, listed, err = s.fromListings(ctx, q, l)
		if err != nil {
			return Page{}, fmt.Errorf("search: %w", err)
		}
	}
	if !listed {
		var err error
		rows, total, exact, err = s.readPage(ctx, q, qe)
		if err != nil {
			return Page{}, err
		}
	}
	if len(rows) == 0 && q.Difficulty != "" {
		if err := s.checkTier(ctx, q.Difficulty); err != nil {
			return Page{}, err
		}
	}

	offset := q.Offset
	if q.after != nil {
		offset = q.after.N
	}
	p := Page{Limit: q.Limit, Offset: offset, Page: offset/q.Limit + 1, Total: total, TotalExact: exact}
	rows, p.HasMore, p.NextCursor = paging.Page(rows, q.Limit, func(last row) paging.Cursor {
		return q.cursor(last.key, last.video.ID, offset+q.Limit)
	})
	if q.semanticRanked() && offset+2*q.Limit > MaxSemanticWindow {
		// The next page would pass the window: no cursor to it.
		p.NextCursor = ""
	}
	p.Videos = make([]catalog.Video, len(rows))
	for i, r := range rows {
		p.Videos[i] = r.video
	}
	if !exact {
		// An estimate may be behind this page.
		p.Total = max(p.Total, offset+len(rows)+btoi(p.HasMore))
	}
	return p, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// counter finds a search's total at no more than the cost of its page: the
// planner's estimate (EXPLAIN, no rows read) is asked for beside the page;
// only when it says at most CountBound clips match, and that counting them
// is cheap (MaxCountCost), are they counted, reading at most that many.
type counter struct {
	estimate func() (estimate, error)
	count    func() (int, error)
	// cached is a total this node found for the same count moments ago
	// (countCache); key is where a new total is kept, "" for a search
	// whose total is not cached.
	cached *countEntry
	cache  *countCache
	key    string
}

// newCounter prepares the total of sq. cacheable says whether the total may
// be served from, and kept in, this node's count cache.
func (s *Service) newCounter(ctx context.Context, db *pgxpool.Pool, sq searchSQL, cacheable bool) *counter {
	c := &counter{
		count: func() (int, error) {
			var n int
			err := db.QueryRow(ctx, sq.count.sql, sq.count.args...).Scan(&n)
			return n, err
		},
	}
	if cacheable && s.counts != nil {
		if sq.parts != nil {
			// The parts are kept, each shared by many searches; the
			// mix of them is not (composedParts).
			c.estimate = s.composedEstimate(ctx, db, *sq.parts)
			return c
		}
		// Keyed by the estimate, which is all the cache keeps: the
		// neighbours of every clip share theirs (buildSearch).
		c.cache, c.key = s.counts, countKey(sq.estimate)
		if e, ok := s.counts.get(c.key); ok {
			c.cached = &e
			return c
		}
	}
	done := make(chan struct{})
	var est estimate
	var estErr error
	go func() {
		defer close(done)
		est, estErr = s.estimate(ctx, db, sq.estimate)
	}()
	c.estimate = func() (estimate, error) { <-done; return est, estErr }
	return c
}

// total returns the total and whether it is exact.
func (c *counter) total() (int, bool, error) {
	if c.cached != nil {
		return c.cached.total, c.cached.exact, nil
	}
	n, exact, err := c.measure()
	// Only estimates are kept: an exact total is cheap (at most CountBound
	// rows) and must not lag a clip just added or retired.
	if err == nil && !exact && c.cache != nil {
		c.cache.put(c.key, n, exact)
		c.cached = &countEntry{total: n, exact: exact}
	}
	return n, exact, err
}

// measure asks the planner, then counts when the estimate says it is cheap.
func (c *counter) measure() (int, bool, error) {
	est, err := c.estimate()
	if err != nil {
		return 0, false, err
	}
	if est.rows > CountBound || est.cost > MaxCountCost {
		return est.rows, false, nil
	}
	n, err := c.count()
	if err != nil {
		return 0, false, err
	}
	if n > CountBound {
		return max(est.rows, n), false, nil
	}
	return n, true, nil
}

// estimate asks the planner about a search's count statement (EXPLAIN,
// nothing read): how many clips match, and what counting them would cost.
func (s *Service) estimate(ctx context.Context, db *pgxpool.Pool, st statement) (estimate, error) {
	return readEstimate(db.QueryRow(ctx, st.sql, st.args...))
}

// readEstimate reads the plan of a count statement's EXPLAIN.
func readEstimate(r pgx.Row) (estimate, error) {
	type node struct {
		Type  string  `json:"Node Type"`
		Rows  float64 `json:"Plan Rows"`
		Cost  float64 `json:"Total Cost"`
		Plans []node  `json:"Plans"`
	}
	var plan []struct {
		Plan node `json:"Plan"`
	}
	if err := r.Scan(&plan); err != nil {
		return estimate{}, err
	}
	if len(plan) == 0 {
		return estimate{}, nil
	}
	// Below the count's Aggregate and Limit is the scan of the matches,
	// whose row estimate and cost are not cut by the LIMIT.
	n := plan[0].Plan
	for (n.Type == "Aggregate" || n.Type == "Limit" || n.Type == "Subquery Scan") && len(n.Plans) > 0 {
		n = n.Plans[0]
	}
	return estimate{rows: int(min(n.Rows, math.MaxInt32)), cost: plan[0].Plan.Cost, scan: n.Cost}, nil
}

// estimate is the planner's view of a count.
type estimate struct {
	rows int
	// cost is the capped count's (which stops one past CountBound), scan
	// that of reading every match.
	cost, scan float64
}

// MaxCountCost is the planner cost above which a count is not run and the
// estimate is the total: a count of a few hundred matches that filters must
// pick out of many more rows would cost more than the page (a page of a
// filtered list costs a few hundred units).
const MaxCountCost = 1000

// collectPage reads the rows of a page query.
func (s *Service) collectPage(rows pgx.Rows, err error) ([]row, error) {
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, s.scanRow)
}

// runNearest runs a semantic search ranked by similarity: the page in
// one transaction with the index settings, the estimate beside it. No connection is held while waiting for the other query, so searches
// cannot starve each other of connections.
func (s *Service) runNearest(ctx context.Context, db *pgxpool.Pool, q Query, sq searchSQL, hs hnswSettings, c *counter) ([]row, error) {
	offset := q.Offset
	if q.after != nil {
		offset = q.after.N
	}
	efSearch := strconv.Itoa(min(max(hs.efSearch, offset+q.Limit+1), maxEfSearch))
	planning := "force_custom_plan"
	if sq.planOnce {
		planning = "force_generic_plan"
	}
	maxScan := strconv.Itoa(hs.maxScanTuples)
	// A graph that holds only what the query asks for (graphAlone) is
	// walked without iterative scans: pgvector then skips loading each
	// neighbour no nearer than its candidates, and keeps no heap of them
	// for a later batch. The page is the same, for about 5% less of the
	// statement's time (docs/performance.md). Should too few of the walk's
	// candidates pass (clips retired or with a vector pending or of
	// another model among the nearest, or a page at the window's edge),
	// the page is walked again with iterative scans.
	iterative := "relaxed_order"
	if q.graphAlone() {
		iterative = "off"
	}
	rows, err := s.nearestPage(ctx, db, sq.page, sq.source, sqlHNSWSettings, efSearch, maxScan, planning, iterative)
	if err == nil && len(rows) <= q.Limit && iterative == "off" {
		rows, err = s.nearestPage(ctx, db, sq.page, sq.source, sqlHNSWSettings, efSearch, maxScan, planning, "relaxed_order")
	}
	if err != nil || len(rows) > q.Limit {
		return rows, err
	}
	// The index gave up (max_scan_tuples) before filling the page although
	// enough clips match: sort the matching clips exactly. It happens only
	// for filters few clips pass, so few are sorted.
	total, _, err := c.total()
	if err == nil && total > offset+len(rows) {
		rows, err = s.nearestPage(ctx, db, sq.page, nil, sqlExactScan)
	}
	return rows, err
}

// nearestPage runs the page query after a settings statement, both in one
// round trip: a batch is one pipeline with a single Sync, which Postgres
// runs as one implicit transaction, so the local settings last until the
// page is read and no BEGIN and COMMIT round trips are paid (each one a
// wait for a turn on the CPU when the node is busy). The check of the
// clip whose vector is the query (source, when not nil) rides in the same
// round trip, before the page, whose rows are used only if it passes.
func (s *Service) nearestPage(ctx context.Context, db *pgxpool.Pool, page statement, source *clipSource,
	settings string, args ...any) ([]row, error) {
	batch := &pgx.Batch{}
	batch.Queue(settings, args...)
	if source != nil {
		st := source.statement()
		batch.Queue(st.sql, st.args...)
	}
	batch.Queue(page.sql, page.args...)
	br := db.SendBatch(ctx, batch)
	_, err := br.Exec()
	if err == nil && source != nil {
		err = source.check(br.QueryRow())
	}
	var out []row
	if err == nil {
		var rows pgx.Rows
		if rows, err = br.Query(); err == nil {
			out, err = pgx.CollectRows(rows, s.scanRow)
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return out, err
}

// scanRow reads catalog.ListedColumns, the similarity and the sort key;
// the clip comes from the node's copy of its row's version when it has one.
func (s *Service) scanRow(r pgx.CollectableRow) (row, error) {
	var out row
	var err error
	out.video, err = s.catalog.ScanListed(r, &out.key)
	return out, err
}

// checkTier reports an unknown difficulty with the tiers that exist.
func (s *Service) checkTier(ctx context.Context, name string) error {
	tiers, err := s.catalog.ListTiers(ctx)
	if err != nil {
		return fmt.Errorf("search: %w", err)
	}
	names := make([]string, len(tiers))
	for i, t := range tiers {
		if t.Name == name {
			return nil
		}
		names[i] = t.Name
	}
	return unknownValue("difficulty", name, names)
}

// readPage reads a page of q, and its total, with the page statement.
func (s *Service) readPage(ctx context.Context, q Query, qe QueryEmbedder) (rows []row, total int, exact bool, err error) {
	vec, model, err := s.queryVector(ctx, q, qe)
	if err != nil {
		return nil, 0, false, err
	}
	sq := buildSearch(q, vec, model)
	exact = true
	// owned depends on the caller's purchases: read it where they were made.
	err = s.catalog.Read(ctx, q.Owned != nil, func(db *pgxpool.Pool) error {
		c := s.newCounter(ctx, db, sq, q.Owned == nil)
		var err error
		switch {
		case q.semanticRanked():
			hs := s.hnsw()
			hs.efSearch = s.efFor(ctx, db, model)
			rows, err = s.runNearest(ctx, db, q, sq, hs, c)
		case sq.walk != nil:
			var n int
			walked := false
			if v, ok := s.quietVersion(ctx, q); ok {
				rows, n, walked, err = s.walkUnder(ctx, db, *sq.walkIDs, v)
			}
			if err == nil && !walked {
				rows, n, err = s.collectWalk(db.Query(ctx, sq.walk.sql, sq.walk.args...))
			}
			if err == nil && n <= walkReach(q) {
				rows, err = s.collectPage(db.Query(ctx, sq.page.sql, sq.page.args...))
			}
		default:
			if sq.source != nil {
				st := sq.source.statement()
				if err := sq.source.check(db.QueryRow(ctx, st.sql, st.args...)); err != nil {
					return err
				}
			}
			rows, err = s.collectPage(db.Query(ctx, sq.page.sql, sq.page.args...))
		}
		if err != nil {
			return err
		}
		// A last page reached by offset says how many match: no count.
		// Not so for a ranking, whose pages end where its candidates do.
		if q.SortBy != SortRelevance && len(rows) <= q.Limit && q.after == nil && (len(rows) > 0 || q.Offset == 0) {
			total = q.Offset + len(rows)
			return nil
		}
		total, exact, err = c.total()
		return err
	})
	if err != nil {
		return nil, 0, false, fmt.Errorf("search: %w", clipNotFound(q, err))
	}
	return rows, total, exact, nil
}
