package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"broll/billing/billingtest"
	"broll/internal/config"
	"broll/internal/testkit"
	"broll/wiring"
	"broll/wiring/wiringtest"
)

// TestRunEmbedsQueuedClips starts the real worker with the built-in embedder,
// queues a clip the way the API does, and waits for its vector.
func TestRunEmbedsQueuedClips(t *testing.T) {
	pool, dbURL := testkit.NewPool(t)
	rds := testkit.Redis(t)
	env := map[string]string{"DATABASE_URL": dbURL, "REDIS_URL": rds.URL, "BROLL_REDIS_PREFIX": rds.Prefix, "BROLL_EMBED_PROVIDER": "builtin",
		"BROLL_WORKER_HTTP_ADDR": "127.0.0.1:0", "BROLL_SIGNING_KEY": config.GenerateSecret()}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	ready := make(chan string, 1)
	go func() { done <- run(ctx, func(k string) string { return env[k] }, io.Discard, ready) }()
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatalf("worker: %v", err)
	}

	id := billingtest.Videos(t, pool, 1, "easy")[0]
	// Queued as an API node queues it, through its graph's queue.
	cfg := config.Defaults()
	cfg.RedisPrefix = rds.Prefix
	q := wiringtest.Open(t, cfg, wiring.Options{Parts: wiring.Redis, Pool: pool, Redis: rds.Client}).Queue
	if _, err := q.EnqueueEmbed(ctx, []uuid.UUID{id}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		var status string
		var dims int
		err := pool.QueryRow(ctx, `SELECT embedding_status, coalesce(vector_dims(embedding), 0) FROM videos WHERE id = $1`, id).Scan(&status, &dims)
		if err != nil {
			t.Fatal(err)
		}
		if status == "ready" && dims == 768 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("clip not embedded: %s", status)
		}
		time.Sleep(50 * time.Millisecond)
	}

	for _, path := range []string{"/healthz", "/readyz"} {
		if err := get(addr, path, nil); err != nil {
			t.Fatal(err)
		}
	}
	var fams testkit.Metrics
	if err := get(addr, "/metrics", func(r io.Reader) error {
		raw, err := io.ReadAll(r)
		fams = testkit.ParseMetrics(t, raw)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got, _ := fams.Value("broll_embed_jobs_total", map[string]string{"result": "done"}); got != 1 {
		t.Errorf("broll_embed_jobs_total{result=done} = %v, want 1", got)
	}
	if got, _ := fams.Value("broll_embed_batches_total", map[string]string{"result": "ok"}); got != 1 {
		t.Errorf("broll_embed_batches_total{result=ok} = %v, want 1", got)
	}
	for _, name := range []string{"asynq_tasks_enqueued_total", "asynq_queue_size", "pgxpool_total_conns", "broll_embed_job_duration_seconds"} {
		if _, ok := fams[name]; !ok {
			t.Errorf("worker /metrics lacks %s", name)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("worker: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("worker did not stop")
	}
}

// get fetches http://addr+path, wants a 200 and hands the body to read.
func get(addr, path string, read func(io.Reader) error) error {
	res, err := http.Get("http://" + addr + path)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %d", path, res.StatusCode)
	}
	if read != nil {
		return read(res.Body)
	}
	return nil
}

// The worker refuses to start without BROLL_SIGNING_KEY: it could open
// none of the sealed webhook signing secrets, so it could sign nothing.
func TestRunNeedsSigningKey(t *testing.T) {
	env := map[string]string{"DATABASE_URL": "postgres://x@127.0.0.1:1/x", "REDIS_URL": "redis://127.0.0.1:1",
		"BROLL_EMBED_PROVIDER": "builtin"}
	err := run(context.Background(), func(k string) string { return env[k] }, io.Discard, nil)
	if err == nil || !strings.Contains(err.Error(), "BROLL_SIGNING_KEY") {
		t.Fatalf("run without BROLL_SIGNING_KEY: %v, want an error naming it", err)
	}
}
