package tasks_test

import (
	"context"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"broll/catalog"
	"broll/catalog/imports"
	"broll/catalog/mediajobs"
	"broll/catalog/search"
	"broll/embed"
	"broll/internal/config"
	"broll/internal/tasks"
	"broll/internal/testkit"
	"broll/wiring"
	"broll/wiring/wiringtest"
)

// unreachableRedis is a client of a port where nothing listens: Redis away.
func unreachableRedis(t *testing.T) *redis.Client {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	rdb := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: 200 * time.Millisecond, MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// TestRedisAwayLosesNoWork runs every path that changes clips and queues
// work (import, a media batch, reembed --all) with Redis unreachable:
// each succeeds with its change stored and its jobs recorded beside it, the
// old vectors keep serving semantic search, and once Redis is back the
// relay hands every recorded job to asynq.
func TestRedisAwayLosesNoWork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := testkit.NewPool(t)
	cfg := config.Defaults()
	cfg.MediaDir = filepath.Join(t.TempDir(), "media")
	// The catalog of a process whose Redis is away, and of one once it is
	// back (with the keyspace's prefix, prefix).
	graphOver := func(rdb *redis.Client, prefix string) *wiring.Services {
		cfg := cfg
		cfg.RedisPrefix = prefix
		return wiringtest.Open(t, cfg, wiring.Options{Parts: wiring.Redis | wiring.Media, Pool: pool, Redis: rdb})
	}
	awayGraph := graphOver(unreachableRedis(t), "")
	away := awayGraph.Catalog
	jobs := func(kind string) int {
		t.Helper()
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM job_outbox WHERE kind = $1`, kind).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	file := testkit.RenderVideo(t, 64, 36, 0.5)
	ids := []uuid.UUID{uuid.New(), uuid.New()}
	clips := []imports.VideoInput{
		{ID: ids[0].String(), Title: "Woman jogging in the park", Emotion: "confident", Gender: "female",
			Difficulty: "easy", MediaFile: file, Orientation: "horizontal"},
		// No orientation: the probe fills it, which changes the embedded text.
		{ID: ids[1].String(), Title: "Man laughing at a phone", Emotion: "laughing", Gender: "male",
			Difficulty: "easy", MediaFile: file},
	}

	t.Run("import", func(t *testing.T) {
		res, err := awayGraph.Imports.ImportVideos(ctx, clips, "", nil)
		if err != nil || res != (imports.Result{Created: 2, Queued: 2}) {
			t.Fatalf("import with Redis away = %+v, %v", res, err)
		}
		// A clip waiting for its probe is embedded by its media batch.
		if e, m := jobs("embed"), jobs("media"); e != 0 || m != 2 {
			t.Fatalf("recorded jobs: %d embed, %d media; want 0 and 2", e, m)
		}
	})

	t.Run("media batch", func(t *testing.T) {
		probed, err := awayGraph.MediaJobs.ProbePending(ctx, ids, "builtin-lexical-v1")
		if err != nil || len(probed) != 2 {
			t.Fatalf("probe with Redis away: %+v, %v", probed, err)
		}
		// No vectors (the embedder was away too): the clips go on sale and
		// their embedding, previews and thumbnails are recorded as jobs.
		res, err := awayGraph.MediaJobs.StoreProbed(ctx, "builtin-lexical-v1", probed, nil)
		if err != nil || res != (mediajobs.ProbedResult{Ready: 2}) {
			t.Fatalf("store probed with Redis away: %+v, %v", res, err)
		}
		st, err := away.ClipState(ctx, ids[1])
		if err != nil || st.MediaStatus != "ready" || !st.Listed || st.EmbeddingStatus != "pending" {
			t.Fatalf("processed clip: %+v, %v", st, err)
		}
		if e, p := jobs("embed"), jobs("previews"); e != 2 || p != 2 {
			t.Fatalf("jobs after the media batch: %d embed, %d previews; want 2 and 2", e, p)
		}
	})

	b := embed.NewBuiltin()
	inputs, err := away.EmbeddingInputs(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	embs := make([]catalog.Embedding, len(inputs))
	for i, in := range inputs {
		v, err := b.Embed(ctx, embed.Document, []string{in.Text})
		if err != nil {
			t.Fatal(err)
		}
		embs[i] = catalog.Embedding{ID: in.ID, Vector: v[0]}
	}
	if err := away.StoreEmbeddings(ctx, b.Model(), embs); err != nil {
		t.Fatal(err)
	}
	qe := wiringtest.Open(t, cfg, wiring.Options{Parts: wiring.Embedder, Pool: pool, Embedder: b}).QueryEmbedder
	semantic := func() int {
		t.Helper()
		p, err := awayGraph.Search.Search(ctx, search.Query{SemanticSearch: "person laughing", Limit: 10}, qe)
		if err != nil {
			t.Fatal(err)
		}
		return len(p.Videos)
	}
	if n := semantic(); n != 2 {
		t.Fatalf("semantic search before reembed: %d clips", n)
	}

	t.Run("reembed --all", func(t *testing.T) {
		before := jobs("embed")
		n, err := away.Reembed(ctx, catalog.ReembedAll, b.Model())
		if err != nil || n != 2 {
			t.Fatalf("reembed --all with Redis away = %d, %v", n, err)
		}
		var vectors int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM videos WHERE embedding IS NOT NULL`).Scan(&vectors); err != nil || vectors != 2 {
			t.Fatalf("vectors kept: %d, %v", vectors, err)
		}
		if n := semantic(); n != 2 {
			t.Fatalf("semantic search after reembed --all with Redis away: %d clips, want 2", n)
		}
		if e := jobs("embed"); e != before+2 {
			t.Fatalf("embed jobs: %d, want %d", e, before+2)
		}
		// The worker makes them again: the old vectors are not current.
		in, err := away.EmbeddingInputs(ctx, ids)
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range in {
			if i.ReadyWith != "" {
				t.Fatalf("clip %s counts as embedded after reembed --all", i.ID)
			}
		}
	})

	t.Run("Redis back: the relay queues every job", func(t *testing.T) {
		rds := testkit.Redis(t)
		up := graphOver(rds.Client, rds.Prefix).Catalog
		if _, err := up.RelayJobs(ctx); err != nil {
			t.Fatal(err)
		}
		if e, m, p := jobs("embed"), jobs("media"), jobs("previews"); e != 0 || m != 0 || p != 0 {
			t.Fatalf("jobs left after the relay: %d embed, %d media, %d previews", e, m, p)
		}
		insp := asynq.NewInspectorFromRedisClient(rds.Client)
		for _, q := range []string{tasks.EmbedQueue(rds.Prefix), tasks.MediaQueue(rds.Prefix), tasks.PreviewsQueue(rds.Prefix)} {
			if got := pendingClips(t, insp, q); len(got) != 2 || !got[ids[0]] || !got[ids[1]] {
				t.Fatalf("queue %s holds clips %v; want both", q, got)
			}
		}
	})
}
