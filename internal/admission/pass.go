package admission

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/google/uuid"

	"broll/internal/admission/marks"
)

// Pass is what one admission saw of the subjects a node keeps copies of:
// the version of the catalog and of what the request's key owns, read in
// Redis before anything the request reads from Postgres. The zero Pass
// trusts nothing.
type Pass struct {
	catalog, owned string
	key            uuid.UUID
	// at is this process's count of holds when the admission ran: a hold
	// taken here since (the request's own purchase, say) ends the pass's
	// trust in what it holds.
	at    uint64
	holds *holds
}

// Version is the version of s under which the request may use a copy, and
// under which it copies what it reads; ok is false when it must read
// Postgres and copy nothing to be trusted (the subject was changing, Redis
// was away, or it was held in this process since the admission). A pass
// knows the catalog and what its own key owns, nothing else.
func (p Pass) Version(s Subject) (v string, ok bool) {
	switch {
	case !s.owned:
		v = p.catalog
	case s.owner == p.key && p.key != uuid.Nil:
		v = p.owned
	}
	if v == "" || p.holds.since(s, p.at) {
		return "", false
	}
	return v, true
}

// Hold is a change's hold on some subjects (Door.Hold).
type Hold struct{ h marks.Hold }

// Release ends the hold and gives each subject a new version: nodes copy
// again after the change. A release Redis does not take at once is retried
// in the background.
func (h Hold) Release(ctx context.Context) { h.h.Release(ctx) }

// Taken reports whether every node now stops trusting its copies of the
// held subjects (Redis took the hold); when it is false only the release
// ends their trust.
func (h Hold) Taken() bool { return h.h.Taken() }

// Settle ends the hold after its change's commit: released when the
// commit's outcome is known (it committed, or surely did not), left to
// lapse when unknown is true (database.CommitOutcomeUnknown), since the
// commit may still land after a release.
func (h Hold) Settle(ctx context.Context, unknown bool) {
	if unknown {
		h.h.Lapse(ctx)
		return
	}
	h.h.Release(ctx)
}

// Hold holds subjects across a change (Door.Hold): this process's passes
// issued before stop trusting them at once, and every node's once Redis
// has the hold. A nil Gate (services without Redis, whose nodes trust
// nothing) holds nothing.
func (g *Gate) Hold(ctx context.Context, subjects ...Subject) Hold {
	if g == nil || len(subjects) == 0 {
		return Hold{}
	}
	g.holds.take(subjects)
	names := make([]string, len(subjects))
	for i, s := range subjects {
		names[i] = s.name()
	}
	return Hold{g.marks.Hold(ctx, names...)}
}

// name is the subject's mark.
func (s Subject) name() string {
	if s.owned {
		return marks.Owned(s.owner)
	}
	return marks.Catalog
}

// maxHeldSubjects bounds the subjects holds remembers (a few dozen bytes
// each); past it they start again from empty, and every pass issued before
// trusts nothing.
const maxHeldSubjects = 100_000

// holds are the holds taken in this process, numbered: a pass issued at n
// trusts no subject held after n.
type holds struct {
	n     atomic.Uint64
	mu    sync.RWMutex
	last  map[Subject]uint64
	floor uint64
}

func newHolds() *holds { return &holds{last: map[Subject]uint64{}} }

// now is the number a pass issued now carries.
func (h *holds) now() uint64 {
	if h == nil {
		return 0
	}
	return h.n.Load()
}

// take numbers a hold of subjects, before it reaches Redis.
func (h *holds) take(subjects []Subject) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.last)+len(subjects) > maxHeldSubjects {
		clear(h.last)
		h.floor = h.n.Load() + 1
	}
	n := h.n.Add(1)
	for _, s := range subjects {
		h.last[s] = n
	}
}

// since reports whether s was held in this process after a pass issued at
// at.
func (h *holds) since(s Subject, at uint64) bool {
	if h == nil {
		return true
	}
	if h.n.Load() <= at {
		return false
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	return at < h.floor || h.last[s] > at
}
