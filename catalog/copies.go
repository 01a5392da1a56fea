package catalog

import (
	"sync"
	"time"
)

// passCopies is this node's copies of what a key owns, each kept under the
// version of what the key owns that the request's admission pass gave
// before the read (admission.Owned), for videoCacheTTL at most: a copy is
// used only by a pass that gives the same version. Past max weight (each
// copy weighs weight(v), 1 when weight is nil) the copies start again from
// empty.
type passCopies[K comparable, V any] struct {
	mu     sync.RWMutex
	m      map[K]passCopy[V]
	total  int
	max    int
	weight func(V) int
}

type passCopy[V any] struct {
	v       V
	pass    string
	expires time.Time
}

func newPassCopies[K comparable, V any](limit int, weight func(V) int) *passCopies[K, V] {
	return &passCopies[K, V]{m: map[K]passCopy[V]{}, max: limit, weight: weight}
}

// get returns the copy of k made under version pass, if this node has it.
func (c *passCopies[K, V]) get(k K, pass string, now time.Time) (V, bool) {
	c.mu.RLock()
	e, ok := c.m[k]
	c.mu.RUnlock()
	if !ok || e.pass != pass || !now.Before(e.expires) {
		var zero V
		return zero, false
	}
	return e.v, true
}

// put keeps v as the copy of k made under version pass.
func (c *passCopies[K, V]) put(k K, v V, pass string, now time.Time) {
	w := c.weightOf(v)
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.m[k]; ok {
		c.total -= c.weightOf(old.v)
	}
	if c.total+w > c.max {
		clear(c.m)
		c.total = 0
	}
	c.m[k] = passCopy[V]{v: v, pass: pass, expires: now.Add(videoCacheTTL)}
	c.total += w
}

func (c *passCopies[K, V]) weightOf(v V) int {
	if c.weight == nil {
		return 1
	}
	return c.weight(v)
}
