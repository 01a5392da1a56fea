package cluster

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
	"github.com/jackc/pgx/v5/pgxpool"

	"broll/billing/billingtest"
	"broll/embed/embedtest"
	"broll/internal/config"
	"broll/internal/database"
	"broll/internal/tasks"
	"broll/internal/testkit"
	"broll/wiring"
	"broll/wiring/wiringtest"
)

// TestRedisStopped: with Redis gone the API keeps answering, limiting with
// its in-process limiter and counting usage locally; when Redis returns it
// goes back to the shared limiter, and no request goes uncounted.
func TestRedisStopped(t *testing.T) {
	t.Parallel()
	pool, dbURL := testkit.NewPool(t)
	redisSrv := startRedis(t)
	env := baseEnv(t, dbURL, redisSrv.URL(), embedtest.NewOllama(t, embedtest.Options{}).URL)
	api := startAPI(t, env)
	acct := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: 5000})
	key := acct.CustomerKey(t, pool, "steady")
	videos := billingtest.Videos(t, pool, 2, "easy")

	sent := 0
	get := func() reply {
		sent++
		return call(t, api.url, "GET", "/api/v1/balance", key.Secret, nil)
	}
	for range 3 {
		if r := get(); r.status != 200 {
			t.Fatalf("before: %d %s", r.status, r.raw)
		}
	}

	redisSrv.stop()
	for i := range 10 {
		r := get()
		if r.status != 200 || r.header.Get("X-RateLimit-Limit") != "60" {
			t.Fatalf("request %d without Redis: %d (limit header %q) %s", i, r.status, r.header.Get("X-RateLimit-Limit"), r.raw)
		}
	}
	sent++
	if r := call(t, api.url, "POST", "/api/v1/broll/purchase", key.Secret, map[string]any{"video_ids": []uuid.UUID{videos[0]}}); r.status != 200 {
		t.Fatalf("purchase without Redis: %d %s", r.status, r.raw)
	}
	// Still ready: the node serves, so it stays in the load balancer.
	if r := call(t, api.url, "GET", "/readyz", "", nil); r.status != 200 || r.body["status"] != "degraded" {
		t.Fatalf("readyz without Redis: %d %s, want 200 degraded", r.status, r.raw)
	}
	fallbacks := value(scrape(t, api.metrics), "broll_rate_limiter_fallbacks_total", nil)
	if fallbacks < 11 {
		t.Fatalf("fallbacks counted: %v, want at least 11", fallbacks)
	}

	redisSrv.start()
	eventually(t, 15*time.Second, "readyz after Redis returned", func() error {
		r, err := tryCall(api.url, "GET", "/readyz", "", nil)
		if err != nil {
			return fmt.Errorf("%w %s", err, r.raw)
		}
		if r.body["status"] != "ready" {
			return fmt.Errorf("%s", r.raw)
		}
		return nil
	})
	before := value(scrape(t, api.metrics), "broll_rate_limiter_fallbacks_total", nil)
	for range 5 {
		if r := get(); r.status != 200 {
			t.Fatalf("after: %d %s", r.status, r.raw)
		}
	}
	sent++
	if r := call(t, api.url, "POST", "/api/v1/broll/purchase", key.Secret, map[string]any{"video_ids": []uuid.UUID{videos[1]}}); r.status != 200 {
		t.Fatalf("purchase after Redis returned: %d %s", r.status, r.raw)
	}
	if after := value(scrape(t, api.metrics), "broll_rate_limiter_fallbacks_total", nil); after != before {
		t.Fatalf("still falling back after Redis returned: %v -> %v", before, after)
	}

	// GET /keys flushes the counters first: every request is there, those
	// counted in Redis and those counted in the process while it was gone.
	r := call(t, api.url, "GET", "/api/v1/keys", acct.RootKey.Secret, nil)
	if r.status != 200 {
		t.Fatalf("list keys: %d %s", r.status, r.raw)
	}
	var total float64 = -1
	for _, k := range r.body["keys"].([]any) {
		if k := k.(map[string]any); k["id"] == key.ID.String() {
			total, _ = k["total_requests"].(float64)
		}
	}
	if int(total) != sent {
		t.Fatalf("total_requests %v, want %d: %s", total, sent, r.raw)
	}
	checkLedger(t, pool, acct.ID)
	api.stop(t)
}

// TestPostgresRestarted: while Postgres is down the API answers 503
// problem+json (never 500, never a hang), charges nothing, and serves again
// once Postgres is back, without being restarted itself.
func TestPostgresRestarted(t *testing.T) {
	t.Parallel()
	pg := startPostgres(t)
	rds := testkit.Redis(t)
	env := sharedEnv(t, pg.URL(), rds, embedtest.NewOllama(t, embedtest.Options{}).URL)
	ctl(t, env, "migrate")
	pool, err := database.Open(context.Background(), pg.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	api := startAPI(t, env)
	acct := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: 5000})
	key := acct.CustomerKey(t, pool, "steady")
	videos := billingtest.Videos(t, pool, 2, "easy")
	if r := call(t, api.url, "GET", "/api/v1/balance", key.Secret, nil); r.status != 200 {
		t.Fatalf("before: %d %s", r.status, r.raw)
	}

	pg.stop()
	wantProblem(t, "balance without Postgres", call(t, api.url, "GET", "/api/v1/balance", key.Secret, nil), 503, "unavailable")
	wantProblem(t, "purchase without Postgres", call(t, api.url, "POST", "/api/v1/broll/purchase", key.Secret,
		map[string]any{"video_ids": []uuid.UUID{videos[0]}}), 503, "unavailable")
	wantProblem(t, "readyz without Postgres", call(t, api.url, "GET", "/readyz", "", nil), 503, "unavailable")
	if api.logged("SELECT ") || api.logged("UPDATE ") || api.logged("INSERT ") {
		t.Error("the API logged SQL")
	}

	pg.start()
	pool.Reset() // the test's own connections died with the server
	eventually(t, 20*time.Second, "the API serves again", func() error {
		r, err := tryCall(api.url, "GET", "/api/v1/balance", key.Secret, nil)
		if err != nil {
			return err
		}
		if r.status != 200 {
			if r.status != 503 {
				t.Fatalf("while recovering: %d %s", r.status, r.raw)
			}
			return fmt.Errorf("status %d", r.status)
		}
		return nil
	})
	r := call(t, api.url, "POST", "/api/v1/broll/purchase", key.Secret, map[string]any{"video_ids": []uuid.UUID{videos[0], videos[1]}})
	if r.status != 200 {
		t.Fatalf("purchase after restart: %d %s", r.status, r.raw)
	}
	if got := balance(t, pool, acct.ID); got != 5000-2*500 {
		t.Fatalf("balance %d after one purchase of two easy clips, want %d", got, 5000-2*500)
	}
	checkLedger(t, pool, acct.ID)
	api.stop(t)
}

// holdingOllama forwards to the fake Ollama, except that while hold is set
// it takes embed requests and never answers them.
type holdingOllama struct {
	hold    atomic.Bool
	held    chan struct{} // one value per held request
	release chan struct{} // closed when the test ends
	server  *httptest.Server
}

func newHoldingOllama(t *testing.T, backend *embedtest.Ollama) *holdingOllama {
	u, _ := url.Parse(backend.URL)
	proxy := httputil.NewSingleHostReverseProxy(u)
	// A transport of its own: the default one is shared with every test of
	// the package, and every httptest server that stops closes its idle
	// connections, which this proxy's forwarding must not depend on.
	transport := &http.Transport{}
	proxy.Transport = transport
	h := &holdingOllama{held: make(chan struct{}, 100), release: make(chan struct{})}
	h.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/embed" && h.hold.Load() {
			// With the body read, the server notices the client going away.
			_, _ = io.Copy(io.Discard, r.Body)
			h.held <- struct{}{}
			select {
			case <-r.Context().Done():
			case <-h.release:
			}
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		close(h.release)
		h.server.Close()
		transport.CloseIdleConnections()
	})
	return h
}

// TestWorkerKilledMidJob: a worker killed (SIGKILL) while embedding loses
// nothing: asynq hands the job to another worker once its lease expires,
// and the clip is embedded once.
func TestWorkerKilledMidJob(t *testing.T) {
	t.Parallel()
	pool, dbURL := testkit.NewPool(t)
	rds := testkit.Redis(t)
	rdb := rds.Client
	backend := embedtest.NewOllama(t, embedtest.Options{})
	ollama := newHoldingOllama(t, backend)
	env := sharedEnv(t, dbURL, rds, ollama.server.URL)
	ids := billingtest.Videos(t, pool, 3, "easy")

	doomed := startWorker(t, env)
	ollama.hold.Store(true)
	q := nodeQueue(t, pool, rds)
	if _, err := q.EnqueueEmbed(context.Background(), ids); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ollama.held:
	case <-time.After(30 * time.Second):
		t.Fatal("the worker never called the embedder")
	}
	doomed.kill()
	ollama.hold.Store(false)

	// asynq recovers a dead worker's tasks once their lease (30 s) has
	// expired and the recoverer (every minute) sees them: about a minute.
	survivor := startWorker(t, env)
	waitEmbedded(t, pool, ids, 150*time.Second)

	ins := asynq.NewInspectorFromRedisClient(rdb)
	info, err := ins.GetQueueInfo(tasks.EmbedQueue(rds.Prefix))
	if err != nil {
		t.Fatal(err)
	}
	if info.Archived != 0 || info.Pending != 0 || info.Retry != 0 || info.Active != 0 {
		t.Fatalf("queue after recovery: %+v", info)
	}
	if done := value(scrape(t, survivor.metrics), "broll_embed_jobs_total", map[string]string{"result": "done"}); done != float64(len(ids)) {
		t.Fatalf("the surviving worker finished %v jobs, want %d", done, len(ids))
	}
	survivor.stop(t)
}

// TestEmbedderDown: while the embedder fails, jobs are retried with
// backoff, then archived and marked failed; once it is back,
// `brollctl clips reembed --failed` brings every clip to ready.
func TestEmbedderDown(t *testing.T) {
	t.Parallel()
	pool, dbURL := testkit.NewPool(t)
	rds := testkit.Redis(t)
	rdb := rds.Client
	ollama := embedtest.NewOllama(t, embedtest.Options{})
	env := with(sharedEnv(t, dbURL, rds, ollama.URL), map[string]string{
		"BROLL_EMBED_RETRY_BASE_DELAY": "20ms", "BROLL_EMBED_RETRY_MAX_DELAY": "100ms"})
	w := startWorker(t, env)
	ollama.Fail(http.StatusInternalServerError)
	ids := billingtest.Videos(t, pool, 5, "easy")
	q := nodeQueue(t, pool, rds)
	if _, err := q.EnqueueEmbed(context.Background(), ids); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "every clip marked failed", func() error {
		return statusCount(pool, ids, "failed")
	})
	ins := asynq.NewInspectorFromRedisClient(rdb)
	// The five clips are one task (a batch), archived once.
	eventually(t, 10*time.Second, "the job archived", func() error {
		info, err := ins.GetQueueInfo(tasks.EmbedQueue(rds.Prefix))
		if err != nil {
			return err
		}
		if info.Archived != 1 || info.Pending+info.Retry+info.Active != 0 {
			return fmt.Errorf("%d archived, %d pending, %d retry, %d active", info.Archived, info.Pending, info.Retry, info.Active)
		}
		return nil
	})
	status := ctl(t, env, "clips", "status")
	if !strings.Contains(status, "failed") {
		t.Errorf("clips status does not show the failures:\n%s", status)
	}

	ollama.Fail(0)
	ctl(t, env, "clips", "reembed", "--failed")
	waitEmbedded(t, pool, ids, 30*time.Second)
	fams := scrape(t, w.metrics)
	if failed := value(fams, "broll_embed_jobs_total", map[string]string{"result": "failed"}); failed != float64(len(ids)) {
		t.Errorf("failed jobs counted %v, want %d", failed, len(ids))
	}
	if done := value(fams, "broll_embed_jobs_total", map[string]string{"result": "done"}); done != float64(len(ids)) {
		t.Errorf("done jobs counted %v, want %d", done, len(ids))
	}
	w.stop(t)
}

func statusCount(pool *pgxpool.Pool, ids []uuid.UUID, status string) error {
	var n int
	if err := pool.QueryRow(context.Background(),
		`SELECT count(*) FROM videos WHERE id = ANY($1) AND embedding_status = $2`, ids, status).Scan(&n); err != nil {
		return err
	}
	if n != len(ids) {
		return fmt.Errorf("%d of %d %s", n, len(ids), status)
	}
	return nil
}

func waitEmbedded(t *testing.T, pool *pgxpool.Pool, ids []uuid.UUID, within time.Duration) {
	t.Helper()
	eventually(t, within, "every clip embedded", func() error { return statusCount(pool, ids, "ready") })
}

// nodeQueue is the job queue an API node enqueues on, as the composition
// root builds it over the test's database and keyspace (its prefix as
// BROLL_REDIS_PREFIX, so its queues are the workers' of sharedEnv).
func nodeQueue(t *testing.T, pool *pgxpool.Pool, rds testkit.Keyspace) *tasks.AsynqQueue {
	t.Helper()
	cfg := config.Defaults()
	cfg.RedisPrefix = rds.Prefix
	return wiringtest.Open(t, cfg, wiring.Options{Parts: wiring.Redis, Pool: pool, Redis: rds.Client}).Queue
}
