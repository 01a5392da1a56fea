package tenancy

import (
	"context"
	"runtime"
	"time"

	"broll/internal/apperr"
)

// hashSlots bounds the argon2 hashes one process computes at once. Each
// takes 19 MiB and a core for tens of milliseconds, so a flood of sign-ins
// (each verifies a hash, unknown emails included) would otherwise take all
// of the node's CPU and memory; with the slots, the flood waits its turn and
// everything else keeps running.
type hashSlots struct {
	slots chan struct{}
	// wait is how long a request waits for a slot before it is told to
	// come back later (maxHashWait).
	wait time.Duration
}

// newHashSlots allows n hashes at once; n <= 0 means GOMAXPROCS.
func newHashSlots(n int) hashSlots {
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	return hashSlots{slots: make(chan struct{}, n), wait: maxHashWait}
}

// maxHashWait is how long a request waits for a slot before it is told to
// come back later.
const maxHashWait = 5 * time.Second

var errHashingBusy = apperr.New(apperr.Unavailable, "sign-in is busy right now; retry shortly").
	With("retry_after_seconds", 2)

// run waits for a free slot (at most h.wait, or until ctx ends) and runs
// fn in it.
func (h hashSlots) run(ctx context.Context, fn func()) error {
	wait := time.NewTimer(h.wait)
	defer wait.Stop()
	select {
	case h.slots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	case <-wait.C:
		return errHashingBusy
	}
	defer func() { <-h.slots }()
	fn()
	return nil
}
