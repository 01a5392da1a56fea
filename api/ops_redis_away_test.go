package api

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"broll/clients/go/brollclient"
)

// TestOpsImportWithRedisAway: POST /api/ops/v1/videos on a node whose Redis
// is unreachable stores the clips and, in the same transaction, their jobs
// (one embedding and one media job per clip) for the worker's relay: no
// warning, nothing to rerun by hand.
func TestOpsImportWithRedisAway(t *testing.T) {
	t.Parallel()
	dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { _ = dead.Close() })
	e := setup(t, envOpts{rdb: dead})
	ops, err := e.ctl.Tenancy.CreateOpsKey(context.Background(), "content team")
	if err != nil {
		t.Fatal(err)
	}
	full, preview, thumb := e.clipFiles(t)
	clips := []map[string]any{
		{"title": "Woman waving at the camera", "emotion": "happy", "gender": "female", "difficulty": "easy",
			"media_file": full, "preview_file": preview, "thumbnail_file": thumb},
		{"title": "Man reading a book", "emotion": "curious", "gender": "male", "difficulty": "hard", "media_file": full},
	}
	r := e.do(t, 0, "POST", "/api/ops/v1/videos", ops.Secret, clips)
	if got := expect[brollclient.ImportResult](t, r, 200); got != (brollclient.ImportResult{Created: 2, Queued: 2}) {
		t.Fatalf("import with Redis away: %s", r.raw)
	}
	var embedJobs, mediaJobs, videos int
	if err := e.pool.QueryRow(context.Background(), `
		SELECT count(*) FILTER (WHERE kind = 'embed'), count(*) FILTER (WHERE kind = 'media'),
		       (SELECT count(*) FROM videos)
		FROM job_outbox`).Scan(&embedJobs, &mediaJobs, &videos); err != nil {
		t.Fatal(err)
	}
	// Each clip's media batch (probe, then its embedding) is recorded.
	if embedJobs != 0 || mediaJobs != 2 || videos != 2 {
		t.Fatalf("recorded: %d embed jobs, %d media jobs, %d clips; want 0, 2, 2", embedJobs, mediaJobs, videos)
	}
}
