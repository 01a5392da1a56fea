package search

import (
	"fmt"
	"testing"
	"time"
)

// TestCountCacheBounds checks that the count cache keeps an estimate for its
// TTL only, tells statements and arguments apart, and never holds more than
// countCacheSize entries whatever number of distinct searches arrives.
func TestCountCacheBounds(t *testing.T) {
	c := newCountCache()
	now := time.Unix(1_700_000_000, 0)
	c.now = func() time.Time { return now }

	a := countKey(statement{sql: "SELECT count(*) FROM videos WHERE emotion = $1", args: []any{"happy"}})
	b := countKey(statement{sql: "SELECT count(*) FROM videos WHERE emotion = $1", args: []any{"sad"}})
	if a == b {
		t.Fatal("different arguments share a key")
	}
	c.put(a, 5000, false)
	if e, ok := c.get(a); !ok || e.total != 5000 || e.exact {
		t.Fatalf("get a: %+v %v", e, ok)
	}
	if _, ok := c.get(b); ok {
		t.Fatal("b found before it was put")
	}
	// A planner estimate kept for a composed total is not the total kept
	// under the same statement.
	st := statement{sql: "EXPLAIN SELECT count(*) FROM videos WHERE emotion = $1", args: []any{"happy"}}
	c.put(countKey(st), 7, false)
	c.putEstimate(st, estimate{rows: 9, scan: 12.5})
	if e, ok := c.getEstimate(st); !ok || e.rows != 9 || e.scan != 12.5 {
		t.Fatalf("estimate: %+v %v", e, ok)
	}
	if e, ok := c.get(countKey(st)); !ok || e.total != 7 {
		t.Fatalf("total beside the estimate: %+v %v", e, ok)
	}
	now = now.Add(countCacheTTL)
	if _, ok := c.get(a); ok {
		t.Fatal("a served past its TTL")
	}
	if _, ok := c.getEstimate(st); ok {
		t.Fatal("estimate served past its TTL")
	}

	for i := range 3 * countCacheSize {
		c.put(fmt.Sprintf("k%d", i), i, false)
		if len(c.entries) > countCacheSize {
			t.Fatalf("%d entries after %d puts", len(c.entries), i+1)
		}
	}
	if _, ok := c.get(fmt.Sprintf("k%d", 3*countCacheSize-1)); !ok {
		t.Fatal("the newest entry was dropped")
	}
}
