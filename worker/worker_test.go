package worker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"
	"github.com/redis/go-redis/v9"

	"broll/catalog"
	"broll/catalog/imports"
	"broll/catalog/media"
	"broll/catalog/mediajobs"
	"broll/embed"
	"broll/internal/config"
	"broll/internal/tasks"
	"broll/internal/testkit"
	"broll/wiring"
	"broll/worker"
)

// env is what a worker test needs: its own database and Redis key prefix
// (so its own queues), the configuration of its processes (the prefix as
// BROLL_REDIS_PREFIX), an asynq client and inspector on that Redis, and
// the catalog and queue of a graph over both (the API's or brollctl's side
// of the queue).
type env struct {
	pool   *pgxpool.Pool
	rdb    *redis.Client
	cfg    config.Config
	prefix string
	// embedQueue is the test's embedding queue.
	embedQueue string
	cat        *catalog.Service
	imports    *imports.Service
	mediaJobs  *mediajobs.Service
	media      media.Store
	client     *asynq.Client
	insp       *asynq.Inspector
	queue      *tasks.AsynqQueue
}

func setup(t *testing.T) *env {
	t.Helper()
	pool, dbURL := testkit.NewPool(t)
	rds := testkit.Redis(t)
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"DATABASE_URL": dbURL, "REDIS_URL": rds.URL, "BROLL_REDIS_PREFIX": rds.Prefix,
			"BROLL_MEDIA_DIR": t.TempDir(), "BROLL_SIGNING_KEY": config.GenerateSecret(), "BROLL_EMBED_PROVIDER": "builtin"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	o := rds.Client.Options()
	ropt := asynq.RedisClientOpt{Addr: o.Addr, Username: o.Username, Password: o.Password, DB: o.DB}
	client := asynq.NewClient(ropt)
	t.Cleanup(func() { _ = client.Close() })
	insp := asynq.NewInspector(ropt)
	t.Cleanup(func() { _ = insp.Close() })
	e := &env{pool: pool, rdb: rds.Client, cfg: cfg, prefix: rds.Prefix, embedQueue: tasks.EmbedQueue(rds.Prefix),
		client: client, insp: insp}
	g := e.graph(t, wiring.Options{Parts: wiring.CLIParts})
	e.cat, e.imports, e.mediaJobs, e.media, e.queue = g.Catalog, g.Imports, g.MediaJobs, g.Media, g.Queue
	return e
}

// deps are what a worker takes of g, as cmd/broll-worker gives them.
func deps(g *wiring.Services) worker.Deps {
	if g == nil {
		return worker.Deps{}
	}
	d := worker.Deps{Queue: g.QueueConn, Prefix: g.Config.RedisPrefix, Catalog: g.Catalog, MediaJobs: g.MediaJobs,
		Embedder: g.Embedder, Logger: g.Logger, Collections: g.Collections, Search: g.Search}
	if g.Media != nil {
		d.Stamps = g.Stamps
	}
	if g.QueryEmbedder != nil {
		d.RecentQueries = g.QueryEmbedder
	}
	return d
}

// graph opens a graph over the env's database and Redis (o.Redis nil) as
// the composition root does for a process; it closes when the test ends.
func (e *env) graph(t *testing.T, o wiring.Options) *wiring.Services {
	t.Helper()
	o.Pool = e.pool
	if o.Redis == nil {
		o.Redis = e.rdb
	}
	g, err := wiring.Open(context.Background(), e.cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	return g
}

func (e *env) insertClip(t *testing.T, title string) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	err := e.pool.QueryRow(context.Background(), `
		INSERT INTO videos (title, tags, emotion, gender, difficulty, media_key)
		VALUES ($1, '{ugc,test}', 'happy', 'female', 'easy', 'clips/test.mp4') RETURNING id`, title).Scan(&id)
	if err != nil {
		t.Fatalf("insert clip: %v", err)
	}
	return id
}

func (e *env) enqueue(t *testing.T, ids ...uuid.UUID) {
	t.Helper()
	if _, err := e.queue.EnqueueEmbed(context.Background(), ids); err != nil {
		t.Fatal(err)
	}
}

// enqueueWithRetries queues a task like tasks.NewEmbedTask but with its
// own retry budget, so a failing embedder is archived quickly.
func (e *env) enqueueWithRetries(t *testing.T, id uuid.UUID, maxRetry int) {
	t.Helper()
	b, _ := json.Marshal(tasks.ClipsPayload{VideoIDs: []uuid.UUID{id}})
	task := asynq.NewTask(tasks.TaskEmbedClips, b, asynq.Queue(e.embedQueue),
		asynq.TaskID(e.taskID(id)), asynq.MaxRetry(maxRetry), asynq.Timeout(time.Minute))
	if _, err := e.client.Enqueue(task); err != nil {
		t.Fatal(err)
	}
}

// taskID is the id of the embedding task of the one clip id, as
// tasks.AsynqQueue names it.
func (e *env) taskID(id uuid.UUID) string { return tasks.TaskID(e.embedQueue, []uuid.UUID{id}) }

// start runs a worker over a worker's graph with embedder and
// test-friendly timings until stop is called or the test ends. stop
// returns Run's error.
func (e *env) start(t *testing.T, embedder embed.Embedder, opts worker.Options) (stop func() error) {
	t.Helper()
	g := e.graph(t, wiring.Options{Parts: wiring.WorkerParts, Embedder: embedder})
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	setIfZero(&opts.PollInterval, 20*time.Millisecond)
	setIfZero(&opts.RetryBaseDelay, 10*time.Millisecond)
	setIfZero(&opts.RetryMaxDelay, 40*time.Millisecond)
	setIfZero(&opts.ShutdownTimeout, 2*time.Second)
	w, err := worker.New(deps(g), opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	var once sync.Once
	var runErr error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case runErr = <-done:
			case <-time.After(20 * time.Second):
				runErr = fmt.Errorf("worker did not stop within 20s")
			}
		})
		return runErr
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	})
	return stop
}

func setIfZero[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}

type clipState struct {
	Status, Model, Error string
	Dims                 int
}

func (e *env) state(t *testing.T, id uuid.UUID) clipState {
	t.Helper()
	var s clipState
	err := e.pool.QueryRow(context.Background(), `
		SELECT embedding_status, coalesce(embedding_model, ''), coalesce(embedding_error, ''),
		       coalesce(vector_dims(embedding), 0)
		FROM videos WHERE id = $1`, id).Scan(&s.Status, &s.Model, &s.Error, &s.Dims)
	if err != nil {
		t.Fatalf("read clip: %v", err)
	}
	return s
}

// waitStatus polls the clip until its embedding_status is want.
func (e *env) waitStatus(t *testing.T, id uuid.UUID, want string, within time.Duration) clipState {
	t.Helper()
	var s clipState
	waitFor(t, within, func() bool {
		s = e.state(t, id)
		return s.Status == want
	}, func() string { return fmt.Sprintf("clip %s status %q (%+v), want %q", id, s.Status, s, want) })
	return s
}

// waitTask polls asynq until the clip's task is in state want.
func (e *env) waitTask(t *testing.T, id uuid.UUID, want asynq.TaskState, within time.Duration) *asynq.TaskInfo {
	t.Helper()
	var info *asynq.TaskInfo
	var err error
	waitFor(t, within, func() bool {
		info, err = e.insp.GetTaskInfo(e.embedQueue, e.taskID(id))
		return err == nil && info.State == want
	}, func() string { return fmt.Sprintf("task of %s: %+v, %v; want state %s", id, info, err, want) })
	return info
}

func waitFor(t *testing.T, within time.Duration, ok func() bool, why func() string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %s", within, why())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestNewRequiresDependencies(t *testing.T) {
	t.Parallel()
	e := setup(t)
	full := deps(e.graph(t, wiring.Options{Parts: wiring.WorkerParts}))
	if _, err := worker.New(full, worker.Options{}); err != nil {
		t.Fatal(err)
	}
	noCatalog, noMediaJobs := full, full
	noCatalog.Catalog, noMediaJobs.MediaJobs = nil, nil
	for name, d := range map[string]worker.Deps{
		"redis":      deps(e.graph(t, wiring.Options{Parts: wiring.WorkerParts &^ wiring.Redis})),
		"graph":      deps(nil),
		"embedder":   deps(e.graph(t, wiring.Options{Parts: wiring.WorkerParts &^ wiring.Embedder})),
		"catalog":    noCatalog,
		"media jobs": noMediaJobs,
	} {
		if _, err := worker.New(d, worker.Options{}); err == nil {
			t.Errorf("no %s accepted", name)
		}
	}
	// A worker that leaves media jobs to others needs none.
	if _, err := worker.New(noMediaJobs, worker.Options{NoMedia: true}); err != nil {
		t.Errorf("no media jobs with NoMedia: %v", err)
	}
}

func TestRunFailsWithoutRedis(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.cfg.RedisURL = "redis://127.0.0.1:1/0"
	down := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", DialTimeout: 200 * time.Millisecond, MaxRetries: -1})
	t.Cleanup(func() { _ = down.Close() })
	w, err := worker.New(deps(e.graph(t, wiring.Options{Parts: wiring.WorkerParts, Redis: down})), worker.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.Run(ctx); err == nil {
		t.Fatal("Run with no Redis returned nil")
	}
}

// TestEmbedsNewClip runs the production poll interval, the latency a user
// sees (docs/api.md gives it; no test asserts a duration: it is logged).
func TestEmbedsNewClip(t *testing.T) {
	t.Parallel()
	e := setup(t)
	builtin := embed.NewBuiltin()
	e.start(t, builtin, worker.Options{PollInterval: worker.DefaultPollInterval})

	id := e.insertClip(t, "Young woman laughing at her phone on the couch")
	start := time.Now()
	e.enqueue(t, id)
	s := e.waitStatus(t, id, "ready", 10*time.Second)
	t.Logf("clip searchable %s after it was queued", time.Since(start).Round(time.Millisecond))
	if s.Dims != embed.Dimensions || s.Model != embed.NewBuiltin().Model() || s.Error != "" {
		t.Fatalf("state = %+v", s)
	}

	// The stored vector is the builtin one of the catalog's document text.
	inputs, err := e.cat.EmbeddingInputs(context.Background(), []uuid.UUID{id})
	if err != nil {
		t.Fatal(err)
	}
	want, err := builtin.Embed(context.Background(), embed.Document, []string{inputs[0].Text})
	if err != nil {
		t.Fatal(err)
	}
	var got pgvector.Vector
	if err := e.pool.QueryRow(context.Background(), `SELECT embedding FROM videos WHERE id = $1`, id).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Slice(), want[0]) {
		t.Error("stored vector is not the document embedding of the clip's text")
	}
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	got := worker.Backoff(time.Second, 10*time.Second)
	want := []time.Duration{1, 2, 4, 8, 10, 10}
	for n, w := range want {
		if d := got(n, nil, nil); d != w*time.Second {
			t.Errorf("retry %d: %s, want %s", n, d, w*time.Second)
		}
	}
	if d := got(500, nil, nil); d != 10*time.Second {
		t.Errorf("retry 500: %s", d)
	}
}

// TestQueuesCarryThePrefix: a worker takes tasks from its deployment's
// queues, new clips' media batches (which embed them too) first, and
// drains the unprefixed queues of earlier releases last; without ffmpeg it
// leaves every media queue alone.
func TestQueuesCarryThePrefix(t *testing.T) {
	t.Parallel()
	got := worker.Queues("eu:", worker.Options{})
	want := map[string]int{"eu:media": 3, "eu:embed": 2, "embed": 1, "media": 1}
	if !maps.Equal(got, want) {
		t.Errorf("queues %v, want %v", got, want)
	}
	got = worker.Queues("eu:", worker.Options{NoMedia: true})
	if want := map[string]int{"eu:embed": 2, "embed": 1}; !maps.Equal(got, want) {
		t.Errorf("queues without ffmpeg %v, want %v", got, want)
	}
}
