package search

import (
	"broll/catalog"
)

// Service runs catalog searches and counts the filter values. It keeps this
// node's recent search totals, so one is built per node.
type Service struct {
	// catalog routes the reads (a replica while it keeps up) and knows
	// the tiers.
	catalog *catalog.Service
	// counts keeps recent search totals (countCache).
	counts *countCache
	// efSearch is the HNSW candidate list of a semantic search.
	efSearch int
}

// New returns the search of cat, reading where cat reads (catalog.WithReads).
func New(cat *catalog.Service) *Service {
	return &Service{catalog: cat, counts: newCountCache(), efSearch: DefaultEfSearch}
}

// WithEfSearch returns the search running semantic searches with an HNSW
// candidate list of n (hnsw.ef_search, at most 1,000; a page deeper than n
// raises it for that search). Recall grows with n and so does the cost of
// a search: see docs/performance.md for both, measured.
func (s *Service) WithEfSearch(n int) *Service {
	c := *s
	c.efSearch = min(max(n, 1), maxEfSearch)
	return &c
}
