package search

import (
	"cmp"
	"time"

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
	// listed is this node's order of the catalog for lists (listings.go).
	listed *listingsHolder
	// calibrate says semantic searches walk with the calibrated list
	// (calibrate.go) when one is stored, never more than efSearch.
	calibrate bool
	// calibrated is this node's copy of the calibrated lists.
	calibrated calibratedLists
}

// ServiceOptions are what a search is built with beside its catalog; the zero
// value is usable.
type ServiceOptions struct {
	// EfSearch is the HNSW candidate list of a semantic search
	// (hnsw.ef_search, at most 1,000; a page deeper than it raises it for
	// that search); 0: DefaultEfSearch. Recall grows with it and so does
	// the cost of a search: see docs/performance.md for both, measured.
	EfSearch int
	// Calibrated makes semantic searches walk with the candidate list the
	// last calibration chose for their model (Calibrate), at most
	// EfSearch; false: always EfSearch.
	Calibrated bool
	// ListingsQuiet is how long the catalog must keep one version before
	// the node reads it whole to answer lists from memory (listings.go);
	// 0: listingsQuiet; negative: never.
	ListingsQuiet time.Duration
}

// NewService returns the search of cat, reading where cat reads
// (catalog.ServiceOptions.Reads), as o says.
func NewService(cat *catalog.Service, o ServiceOptions) *Service {
	ef := DefaultEfSearch
	if o.EfSearch != 0 {
		ef = min(max(o.EfSearch, 1), maxEfSearch)
	}
	s := &Service{catalog: cat, counts: newCountCache(), efSearch: ef, calibrate: o.Calibrated}
	if o.ListingsQuiet >= 0 {
		s.listed = newListingsHolder(cmp.Or(o.ListingsQuiet, listingsQuiet))
	}
	return s
}

// New returns the search of cat with the default HNSW candidate list.
func New(cat *catalog.Service) *Service { return NewService(cat, ServiceOptions{}) }
