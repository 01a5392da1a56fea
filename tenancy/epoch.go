package tenancy

import (
	"context"
	"errors"
	"sync"

	"github.com/redis/go-redis/v9"
)

// epochWatch notices that Redis lost its data (a restart without its
// append-only file, a FLUSHALL, a failover to an empty replica). An epoch
// key holds a random value written once with SET NX; every admission reads
// it in the same pipeline as the revocation markers. A missing key (this
// request writes a fresh value) or a value other than the one this node saw
// last means the markers may be gone too, so the in-process auth cache must
// not be believed until it is rebuilt from Postgres.
type epochWatch struct {
	mu    sync.Mutex
	known string
	lost  func()
}

// epochRead is one admission's view of the epoch key: the value offered to
// SET NX and the command that returns the value found, if any.
type epochRead struct {
	offered string
	cmd     *redis.StatusCmd
}

func epochKey(prefix string) string { return prefix + "epoch" }

// read queues SET epoch <random> NX GET: one command both creates the epoch
// when it is missing and returns the one in place otherwise.
func (w *epochWatch) read(ctx context.Context, pipe redis.Pipeliner, prefix string) epochRead {
	offered := randomToken()
	return epochRead{offered: offered, cmd: pipe.SetArgs(ctx, epochKey(prefix), offered, redis.SetArgs{Mode: "NX", Get: true})}
}

// check compares what the pipeline found with what this node saw last.
// lost is true when the caches must be dropped; first when this is the
// node's first sight of the epoch (nothing was lost that it knew of).
// An unreadable epoch counts as lost: dropping the cache is always safe.
func (w *epochWatch) check(r epochRead) (lost, first bool) {
	if r.cmd == nil {
		return false, false
	}
	current, err := r.cmd.Result()
	switch {
	case errors.Is(err, redis.Nil):
		current = r.offered
	case err != nil:
		current = ""
	}
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
