// Package replica sends reads that may be a moment old to a streaming
// replica of the primary while it keeps up, and to the primary otherwise:
// a replica that is down, refuses, or lags behind only costs the primary
// the reads, it never refuses one.
//
// The replica's URL may name several hosts (target_session_attrs=
// prefer-standby): when the standby it reads from is promoted in a
// failover, its connections are dropped, so that the next ones find a
// standby again once one is back.
package replica

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"broll/internal/database"
)

// checkEvery is how often the replica's progress is compared with the
// primary's; it bounds how stale a read can be (about two of it).
const checkEvery = time.Second

// Reads picks the pool for a read. The zero of its replica (no URL) always
// picks the primary.
type Reads struct {
	primary *pgxpool.Pool
	url     string
	logger  *slog.Logger

	mu       sync.Mutex
	pool     *pgxpool.Pool // the replica's, once opened
	healthy  bool
	checked  time.Time
	checking bool
	// seen is the primary's WAL position at the previous check: a replica
	// that has replayed it is at most one check interval behind.
	seen string
	// done ends the checks when Close is called.
	done chan struct{}
}

// ReadsOptions tune Reads.
type ReadsOptions struct {
	// Logger says when the replica falls behind or comes back; nil
	// drops it.
	Logger *slog.Logger
}

// New returns Reads over primary and the replica at url ("" for none).
// Nothing is connected here: the replica is opened by the first check,
// and again after it failed, so a replica that is down at start does not
// stop the service.
func New(primary *pgxpool.Pool, url string, o ReadsOptions) *Reads {
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Reads{primary: primary, url: url, logger: logger, seen: "0/0", done: make(chan struct{})}
}

// Pool returns the replica's pool when it is known to keep up, else the
// primary's. It never waits: a due check runs in the background.
func (r *Reads) Pool() *pgxpool.Pool {
	if r == nil {
		return nil
	}
	if r.url == "" {
		return r.primary
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.checking && time.Since(r.checked) >= checkEvery {
		r.checking = true
		go r.check()
	}
	if r.healthy && r.pool != nil {
		return r.pool
	}
	return r.primary
}

// IsReplica says whether p is the replica's pool (a read that failed on
// it is retried on the primary).
func (r *Reads) IsReplica(p *pgxpool.Pool) bool {
	return r != nil && p != nil && p != r.primary
}

// Failed records that a read on the replica failed: reads go to the
// primary until a check finds the replica well again.
func (r *Reads) Failed(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.healthy {
		r.logger.Warn("read replica failed; reading from the primary", "error", err.Error())
	}
	r.healthy = false
}

// Close stops the checks and closes the replica's pool.
func (r *Reads) Close() {
	if r == nil || r.url == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	close(r.done)
	if r.pool != nil {
		r.pool.Close()
		r.pool = nil
	}
	r.healthy = false
}

// check opens the replica if needed and compares its replayed WAL with
// where the primary was at the previous check.
func (r *Reads) check() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r.mu.Lock()
	pool, seen := r.pool, r.seen
	r.mu.Unlock()

	healthy, standby, err := false, false, error(nil)
	if pool == nil {
		pool, err = database.Open(ctx, r.url)
	}
	if err == nil {
		// On a replica pg_last_wal_replay_lsn is its progress. A server not
		// in recovery (promoted, or a primary the URL let through) is not
		// used.
		err = pool.QueryRow(ctx, standbySQL, seen).Scan(&standby, &healthy)
		if err == nil && !standby {
			healthy = false
			// Its connections would stay on it for good: let the next
			// ones look for a standby among the URL's hosts again.
			pool.Reset()
		}
	}
	var now string
	if perr := r.primary.QueryRow(ctx, primaryLSNSQL).Scan(&now); perr != nil {
		now = seen
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	r.checking, r.checked, r.seen = false, time.Now(), now
	select {
	case <-r.done:
		if pool != nil && pool != r.pool {
			pool.Close()
		}
		return
	default:
	}
	if r.pool == nil && pool != nil {
		r.pool = pool
	}
	if err != nil {
		if r.healthy {
			r.logger.Warn("read replica unavailable; reading from the primary", "error", err.Error())
		}
		healthy = false
	} else if !standby && r.healthy {
		r.logger.Warn("read replica is not in recovery (promoted?); reading from the primary until a standby answers")
	} else if !healthy && r.healthy {
		r.logger.Warn("read replica lags; reading from the primary")
	}
	r.healthy = healthy
}
