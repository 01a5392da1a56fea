package main

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"broll/billing/billingtest"
	"broll/catalog"
	"broll/internal/testkit"
)

// TestRunEmbedsQueuedClips starts the real worker with the built-in embedder,
// queues a clip the way the API does, and waits for its vector.
func TestRunEmbedsQueuedClips(t *testing.T) {
	pool, dbURL := testkit.NewPool(t)
	rdb, redisURL := testkit.Redis(t)
	env := map[string]string{"DATABASE_URL": dbURL, "REDIS_URL": redisURL, "BROLL_EMBED_PROVIDER": "builtin"}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, func(k string) string { return env[k] }, io.Discard) }()

	id := billingtest.Videos(t, pool, 1, "easy")[0]
	q := catalog.NewAsynqQueue(asynq.NewClientFromRedisClient(rdb), asynq.NewInspectorFromRedisClient(rdb))
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
