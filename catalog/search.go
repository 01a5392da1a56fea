package catalog

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"

	"broll/internal/apperr"
)

// QueryEmbedder turns a semantic_search text into a vector of the model it
// names (embed.QueryCache, which keeps them in Redis).
type QueryEmbedder interface {
	EmbedQuery(ctx context.Context, text string) ([]float32, error)
	Model() string
}

// Page is one page of search results.
type Page struct {
	Videos []Video
	// Total counts every clip the query matches (for a semantic search:
	// every matching clip with a ready vector of the current model), exact
	// up to MaxResultWindow; beyond it Total is MaxResultWindow and
	// TotalExact false.
	Total      int
	TotalExact bool
	Limit      int
	Offset     int
	Page       int // 1-based; offset / limit + 1
	HasMore    bool
}

// Vector index settings of a semantic search (pgvector 0.8), set per
// transaction. With iterative scans the HNSW index keeps walking its graph
// while filters reject what it found, so a filtered search still fills its
// page; relaxed order is the fast mode, its slight disorder undone by the
// outer sort of nearestSQL. max_scan_tuples bounds the walk for filters
// that almost nothing passes; when it ends short of a page although the
// count says more clips match, the page is made again by exact scan.
// The values are measured by deploy/bench/search (README, Performance).
const (
	hnswEfSearch      = 100
	hnswMaxScanTuples = 20_000
)

const sqlHNSWSettings = `
	SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true),
	       set_config('hnsw.ef_search', $1, true),
	       set_config('hnsw.max_scan_tuples', $2, true),
	       set_config('plan_cache_mode', 'force_custom_plan', true)`

// sqlExactScan makes the rest of the transaction sort by computed distance
// instead of walking the index. Custom plans (set above) make the planner
// see it; a cached generic plan would not.
const sqlExactScan = `SELECT set_config('enable_indexscan', 'off', true)`

// Search runs a catalog search. Retired clips never appear. With
// q.SemanticSearch the text is embedded by qe; a nil qe (or one that fails)
// makes semantic search unavailable, never an internal error. Difficulty is
// checked against the tiers only when nothing matched, which is the only
// time an unknown one can be told from an empty result.
func (s *Service) Search(ctx context.Context, q Query, qe QueryEmbedder) (Page, error) {
	if err := q.Validate(); err != nil {
		return Page{}, err
	}
	var vec []float32
	var model string
	if q.SemanticSearch != "" {
		if qe == nil {
			return Page{}, apperr.New(apperr.Unavailable, "semantic search is not available on this server; use search")
		}
		v, err := qe.EmbedQuery(ctx, q.SemanticSearch)
		if err != nil {
			if ctx.Err() != nil {
				return Page{}, ctx.Err()
			}
			return Page{}, apperr.New(apperr.Unavailable,
				"semantic search is unavailable right now (the embedding model did not answer); retry later or use search")
		}
		vec, model = v, qe.Model()
	}

	sq := buildSearch(q, vec, model)
	var videos []Video
	var total int
	var err error
	if q.semanticRanked() {
		videos, total, err = s.runNearest(ctx, q, sq)
	} else {
		videos, total, err = s.runList(ctx, sq)
	}
	if err != nil {
		return Page{}, fmt.Errorf("search: %w", err)
	}
	if len(videos) == 0 && q.Difficulty != "" {
		if err := s.checkTier(ctx, q.Difficulty); err != nil {
			return Page{}, err
		}
	}

	p := Page{Limit: q.Limit, Offset: q.Offset, Page: q.Offset/q.Limit + 1, Total: total, TotalExact: true}
	if len(videos) > q.Limit {
		p.HasMore, videos = true, videos[:q.Limit]
	}
	p.Videos = videos
	if p.Total > MaxResultWindow {
		p.Total, p.TotalExact = MaxResultWindow, false
	}
	return p, nil
}

// runList runs a filter or keyword search: page and count in one round trip.
func (s *Service) runList(ctx context.Context, sq searchSQL) ([]Video, int, error) {
	batch := &pgx.Batch{}
	batch.Queue(sq.page.sql, sq.page.args...)
	batch.Queue(sq.count.sql, sq.count.args...)
	br := s.pool.SendBatch(ctx, batch)
	defer br.Close()
	videos, err := collectVideos(br)
	if err != nil {
		return nil, 0, err
	}
	var total int
	if err := br.QueryRow().Scan(&total); err != nil {
		return nil, 0, err
	}
	return videos, total, br.Close()
}

// runNearest runs a semantic search ranked by similarity in one read-only
// transaction holding the index settings.
func (s *Service) runNearest(ctx context.Context, q Query, sq searchSQL) ([]Video, int, error) {
	var videos []Video
	var total int
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		batch := &pgx.Batch{}
		batch.Queue(sqlHNSWSettings, strconv.Itoa(max(hnswEfSearch, q.Offset+q.Limit+1)), strconv.Itoa(hnswMaxScanTuples))
		batch.Queue(sq.page.sql, sq.page.args...)
		batch.Queue(sq.count.sql, sq.count.args...)
		br := tx.SendBatch(ctx, batch)
		if _, err := br.Exec(); err != nil {
			br.Close()
			return err
		}
		var err error
		if videos, err = collectVideos(br); err != nil {
			br.Close()
			return err
		}
		if err := br.QueryRow().Scan(&total); err != nil {
			br.Close()
			return err
		}
		if err := br.Close(); err != nil {
			return err
		}
		// The index gave up (max_scan_tuples) before filling the page
		// although enough clips match: sort the matching clips exactly.
		// It happens only for filters few clips pass, so few are sorted.
		if len(videos) <= q.Limit && total > q.Offset+len(videos) {
			if _, err := tx.Exec(ctx, sqlExactScan); err != nil {
				return err
			}
			rows, err := tx.Query(ctx, sq.page.sql, sq.page.args...)
			if err != nil {
				return err
			}
			videos, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Video, error) { return scanVideo(r) })
			return err
		}
		return nil
	})
	return videos, total, err
}

func collectVideos(br pgx.BatchResults) ([]Video, error) {
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Video, error) { return scanVideo(r) })
}

// checkTier reports an unknown difficulty with the tiers that exist.
func (s *Service) checkTier(ctx context.Context, name string) error {
	tiers, err := s.ListTiers(ctx)
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
