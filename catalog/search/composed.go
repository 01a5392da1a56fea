package search

import (
	"context"
	"math"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"broll/internal/paging"
)

// A keyword search with filters composes its total from three planner
// estimates, each kept by the node on its own (countCache): the words'
// alone, the filters' alone and the live catalog's. The planner takes the
// words and the filters to be independent (it has no statistics across a
// text column and the others), so the estimate it would give the whole
// count is the words' matches times the filters' share of the live
// catalog: the same figure, within rounding. Asked whole, the planner
// weighs the table's indexes anew for every mix of words and filters
// (0.3 ms, as much as the walk that reads the page), and such mixes seldom
// repeat within the cache's TTL; the words and the filters each do, so a
// composed total mostly asks nothing.
//
// Counting stays bounded by the page's cost: the matches are counted only
// when the composed estimate is at most CountBound and reading the words'
// matches or the filters' would be cheap (MaxCountCost), since a count of
// the search's own can read the cheaper of the two and check the rest on
// each clip's row. The filters' estimate is therefore asked of their
// matches read from the rows (v.search_tsv IS NOT NULL, which every clip
// passes, is on no other index): an index alone may list which clips pass
// a filter, but not whether the words are theirs. Where only both
// together would be cheap (two indexes ANDed), the total is the estimate.
type composedParts struct {
	words, filters, live statement
}

// composeParts returns the estimates q's total is composed from, or nil
// when q's own estimate is asked for: no words, no filters, a search by
// meaning (whose estimate names no words and is kept whole), or an owned
// filter (never kept).
func composeParts(q Query) *composedParts {
	if q.Search == "" || q.byVector() || q.Owned != nil {
		return nil
	}
	live := &paging.Builder{}
	live.Where("v.retired_at IS NULL")
	filters := live.Clone()
	addFilters(filters, q)
	if filters.Len() == live.Len() {
		return nil
	}
	filters.Where("v.search_tsv IS NOT NULL")
	words := live.Clone()
	kw := addKeyword(words, q)
	var p composedParts
	_, p.words = countStatements(words, kw)
	_, p.filters = countStatements(filters, keywordParts{cond: -1})
	_, p.live = countStatements(live, keywordParts{cond: -1})
	return &p
}

// compose is the estimate of the words and the filters together.
func compose(words, filters, live estimate) estimate {
	rows := 0
	if live.rows > 0 {
		rows = int(min(math.Round(float64(words.rows)*float64(filters.rows)/float64(live.rows)), math.MaxInt32))
	}
	cost := min(words.scan, filters.scan)
	return estimate{rows: rows, cost: cost, scan: cost}
}

// composedEstimate returns the composed estimate of p, asking the planner
// only for the parts this node has not kept, all in one round trip, beside
// the page (as newCounter's own estimate).
func (s *Service) composedEstimate(ctx context.Context, db *pgxpool.Pool, p composedParts) func() (estimate, error) {
	parts := []statement{p.words, p.filters, p.live}
	ests := make([]estimate, len(parts))
	var missing []int
	for i, st := range parts {
		e, ok := s.counts.getEstimate(st)
		if !ok {
			missing = append(missing, i)
		}
		ests[i] = e
	}
	if len(missing) == 0 {
		e := compose(ests[0], ests[1], ests[2])
		return func() (estimate, error) { return e, nil }
	}
	done := make(chan struct{})
	var err error
	go func() {
		defer close(done)
		batch := &pgx.Batch{}
		for _, i := range missing {
			batch.Queue(parts[i].sql, parts[i].args...)
		}
		br := db.SendBatch(ctx, batch)
		for _, i := range missing {
			if ests[i], err = readEstimate(br.QueryRow()); err != nil {
				break
			}
			s.counts.putEstimate(parts[i], ests[i])
		}
		if cerr := br.Close(); err == nil {
			err = cerr
		}
	}()
	return func() (estimate, error) {
		<-done
		if err != nil {
			return estimate{}, err
		}
		return compose(ests[0], ests[1], ests[2]), nil
	}
}
