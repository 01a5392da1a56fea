package worker_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"broll/catalog"
	"broll/embed"
	"broll/wiring"
	"broll/worker"
)

// TestWorkerRelaysJobsRecordedWhileRedisWasAway: a reembed run while Redis
// was unreachable succeeds with its jobs recorded in the job outbox; a
// worker started once Redis is back moves them to the queue and the clip
// is embedded, nothing left behind.
func TestWorkerRelaysJobsRecordedWhileRedisWasAway(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	id := e.insertClip(t, "Woman laughing in a car")

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	down := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: 200 * time.Millisecond, MaxRetries: -1})
	t.Cleanup(func() { _ = down.Close() })
	away := e.graph(t, wiring.Options{Parts: wiring.CLIParts, Redis: down}).Catalog
	if n, err := away.Reembed(ctx, catalog.ReembedStale, embed.NewBuiltin().Model()); err != nil || n != 1 {
		t.Fatalf("reembed with Redis away = %d, %v", n, err)
	}
	if s := e.state(t, id); s.Status != "pending" {
		t.Fatalf("clip before the worker: %+v", s)
	}

	e.start(t, embed.NewBuiltin(), worker.Options{RelayInterval: 50 * time.Millisecond})
	if s := e.waitStatus(t, id, "ready", 20*time.Second); s.Dims != embed.Dimensions {
		t.Fatalf("after the relay: %+v", s)
	}
	var left int
	if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM job_outbox`).Scan(&left); err != nil || left != 0 {
		t.Fatalf("jobs left in the outbox: %d, %v", left, err)
	}
}
