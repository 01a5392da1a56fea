package search

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// countCache keeps the estimated totals (past CountBound) of recent
// searches on this node for countCacheTTL, keyed by the count statement and
// its arguments. A total is
// the same for every search with the same filters and words, whatever the
// page, cursor or sort; for a semantic search it does not depend on the
// query text at all (the count is of the clips with a ready vector that
// pass the filters), so one planner estimate serves every semantic search
// with those filters. Without it each search asked the planner again:
// planning the count over the table's many indexes cost as much CPU as the
// page itself. An estimate may lag the catalog by up to the TTL, like the
// filter values (GET /broll/filters); exact totals are always counted
// afresh, and searches whose total depends on the caller's own purchases
// (owned) are never cached.
//
// It also keeps the planner's estimates a keyword search with filters
// composes its total from (composedParts): the words' alone, the filters'
// alone and the live catalog's, each under its own key, so that a search
// whose words and filters were each seen moments ago, in other company,
// asks the planner nothing.
type countCache struct {
	mu      sync.Mutex
	entries map[string]countEntry
	now     func() time.Time
}

type countEntry struct {
	total int
	exact bool
	// scan is a kept estimate's cost of reading every match (estimate.scan).
	scan float64
	at   time.Time
}

const (
	countCacheTTL = 10 * time.Second
	// countCacheSize bounds the entries: each is a statement text and two
	// ints, so the cache stays well under a megabyte.
	countCacheSize = 2048
)

func newCountCache() *countCache {
	return &countCache{entries: make(map[string]countEntry), now: time.Now}
}

// countKey names a count statement with its arguments.
func countKey(st statement) string {
	var b strings.Builder
	b.WriteString(st.sql)
	for _, a := range st.args {
		fmt.Fprintf(&b, "\x00%T\x00%v", a, a)
	}
	return b.String()
}

func (c *countCache) get(key string) (countEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || c.now().Sub(e.at) >= countCacheTTL {
		return countEntry{}, false
	}
	return e, true
}

func (c *countCache) put(key string, total int, exact bool) {
	c.keep(key, countEntry{total: total, exact: exact})
}

// estimateKey names a planner estimate kept on its own (composedParts),
// apart from the totals kept under countKey.
func estimateKey(st statement) string { return "estimate\x00" + countKey(st) }

// getEstimate returns the kept planner estimate of st.
func (c *countCache) getEstimate(st statement) (estimate, bool) {
	e, ok := c.get(estimateKey(st))
	return estimate{rows: e.total, scan: e.scan}, ok
}

// putEstimate keeps the planner's estimate of st.
func (c *countCache) putEstimate(st statement, e estimate) {
	c.keep(estimateKey(st), countEntry{total: e.rows, scan: e.scan})
}

func (c *countCache) keep(key string, e countEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if len(c.entries) >= countCacheSize {
		for k, e := range c.entries {
			if now.Sub(e.at) >= countCacheTTL {
				delete(c.entries, k)
			}
		}
		// Still nearly full of fresh entries: drop an eighth of them,
		// any (map order is random). That bounds the cache whatever
		// clients send, and the next puts find room without another
		// pass over every entry.
		for k := range c.entries {
			if len(c.entries) < countCacheSize-countCacheSize/8 {
				break
			}
			delete(c.entries, k)
		}
	}
	e.at = now
	c.entries[key] = e
}
