package admission

import "sync"

// epochWatch notices that Redis lost its data (a restart without its
// append-only file, a FLUSHALL, a failover to an empty replica). An epoch
// key holds a random value written once with SET NX; every admission reads
// it in the same command as the revocation markers (admitScript). A missing
// key (this request writes a fresh value) or a value other than the one
// this node saw last means the markers may be gone too, so the in-process
// auth cache must not be believed until it is rebuilt from Postgres.
type epochWatch struct {
	mu    sync.Mutex
	known string
	lost  func()
}

func epochKey(prefix string) string { return prefix + "epoch" }

// check compares the epoch one admission found (admitScript's SET NX GET:
// the value in place, or the one it offered when the key was missing; ""
// when it could not be read) with what this node saw last. lost is true
// when the caches must be dropped; first when this is the node's first
// sight of the epoch (nothing was lost that it knew of). An unreadable
// epoch counts as lost: dropping the cache is always safe.
func (w *epochWatch) check(current string) (lost, first bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	first = w.known == ""
	if current == w.known && current != "" {
		return false, false
	}
	w.known = current
	return true, first
}

func (w *epochWatch) onLoss() {
	if w.lost != nil {
		w.lost()
	}
}
