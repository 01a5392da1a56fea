package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"broll/catalog/media"
	"broll/clients/go/brollclient"
	"broll/internal/admission"
	"broll/internal/config"
	"broll/internal/database"
	"broll/internal/telemetry"
	"broll/internal/testkit"
	"broll/wiring"
	"broll/wiring/wiringtest"
)

type testEnv struct {
	pool  *pgxpool.Pool
	rdb   *redis.Client
	cfg   config.Config
	logs  *testkit.SyncBuffer
	media media.Store
	// s3 is the test's own S3 server when the env runs on the s3 store.
	s3    *testkit.S3Server
	nodes []*testNode
	// ctl is the graph brollctl would build over the env's stores: what a
	// test does as an operator (ops keys, imports, revocations from the
	// CLI) goes through it, outside every node's caches.
	ctl *wiring.Services
	// telemetry traces the nodes (nil: tracing off).
	telemetry *telemetry.Provider
}

type testNode struct {
	app  *fiber.App
	gate *admission.Gate
	// metrics is what the node's metrics listener would serve.
	metrics *prometheus.Registry
	media   media.Store
	// g is the node's service graph.
	g *wiring.Services
}

type envOpts struct {
	nodes     int
	perMinute int
	rdb       *redis.Client // overrides the test Redis (e.g. an unreachable one)
	configure func(*config.Config)
	// s3 runs the nodes on the s3 media store, over a versitygw of the
	// test's own.
	s3 bool
	// telemetry traces the nodes, their statements and their Redis calls
	// (the env's pool and Redis client are then traced ones of its own).
	telemetry *telemetry.Provider
}

// setup builds API nodes over one fresh database and one Redis key prefix,
// each node with its own caches, as separate processes would have.
func setup(t testing.TB, o envOpts) *testEnv {
	t.Helper()
	pool, dbURL := testkit.NewPool(t)
	rds := testkit.Redis(t)
	rdb := rds.Client
	if o.nodes == 0 {
		o.nodes = 1
	}
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"DATABASE_URL": dbURL, "REDIS_URL": rds.URL, "BROLL_REDIS_PREFIX": rds.Prefix, "BROLL_MEDIA_DIR": t.TempDir(), "BROLL_IMPORT_DIR": t.TempDir(),
			"BROLL_SIGNING_KEY": config.GenerateSecret(), "BROLL_PUBLIC_URL": "http://api.test",
			"BROLL_LOG_LEVEL": "debug", "BROLL_EMBED_PROVIDER": "builtin"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	if o.perMinute > 0 {
		cfg.RateLimitPerMinute = o.perMinute
	}
	if o.rdb != nil {
		rdb = o.rdb
	}
	if o.configure != nil {
		o.configure(&cfg)
	}
	if o.telemetry != nil {
		pool, rdb = tracedStores(t, o.telemetry, dbURL, rds.URL)
	}
	env := &testEnv{pool: pool, rdb: rdb, cfg: cfg, logs: &testkit.SyncBuffer{}, telemetry: o.telemetry}
	if o.s3 {
		env.s3 = testkit.StartS3(t)
		env.cfg.MediaStore = "s3"
		env.cfg.S3 = config.S3{Endpoint: env.s3.Endpoint, Bucket: env.s3.Bucket, Region: env.s3.Region, PathStyle: true,
			AccessKey: config.Secret(env.s3.AccessKey), SecretKey: config.Secret(env.s3.SecretKey), PresignTTL: cfg.S3.PresignTTL}
	}
	env.ctl = env.graph(t, env.cfg, wiring.Options{Parts: wiring.CLIParts, Redis: rdb})
	for i := 0; i < o.nodes; i++ {
		env.addNode(t, env.cfg, nil)
	}
	env.media = env.nodes[0].media
	return env
}

// tracedStores opens a pool and a Redis client of the test's own over the
// test's database and Redis, traced by tp as a process's are.
func tracedStores(t testing.TB, tp *telemetry.Provider, dbURL, redisURL string) (*pgxpool.Pool, *redis.Client) {
	t.Helper()
	pool, err := database.Open(context.Background(), dbURL, database.Tracer(tp.PoolTracer()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	opts, err := redis.ParseURL(redisURL)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { _ = rdb.Close() })
	if err := tp.InstrumentRedis(rdb); err != nil {
		t.Fatal(err)
	}
	return pool, rdb
}

// graph opens a graph over the env's database as the composition root
// does for a process with cfg and o (o.Redis nil: the env's Redis); it
// closes when the test ends.
func (e *testEnv) graph(t testing.TB, cfg config.Config, o wiring.Options) *wiring.Services {
	t.Helper()
	o.Pool = e.pool
	if o.Redis == nil {
		o.Redis = e.rdb
	}
	if o.Parts&wiring.Fonts != 0 && o.Fonts == nil {
		o.Fonts = wiringtest.Fonts(t)
	}
	g, err := wiring.Open(context.Background(), cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	return g
}

// addNode adds a node over the env's database and Redis, as another process
// with cfg and the clock now (nil: time.Now) would be, and returns its index.
func (e *testEnv) addNode(t testing.TB, cfg config.Config, now func() time.Time) int {
	t.Helper()
	g := e.graph(t, cfg, wiring.Options{Parts: wiring.APIParts, Logs: e.logs, Now: now, Telemetry: e.telemetry})
	n, err := NewNode(g)
	if err != nil {
		t.Fatal(err)
	}
	e.nodes = append(e.nodes, &testNode{app: n.App, gate: g.Gate, metrics: n.Metrics, media: g.Media, g: g})
	return len(e.nodes) - 1
}

// response is one answer; its body is read through decode (a success) or
// problemOf (an error).
type response struct {
	status int
	header http.Header
	raw    []byte
}

// buy purchases the clips with key through node n; anything but 200
// fails the test.
func (e *testEnv) buy(t *testing.T, n int, key string, ids ...uuid.UUID) brollclient.PurchaseResult {
	t.Helper()
	r := e.do(t, n, "POST", "/api/v1/broll/purchase", key, map[string]any{"video_ids": ids})
	if r.status != 200 {
		t.Fatalf("purchase %v: %d %s", ids, r.status, r.raw)
	}
	return decode[brollclient.PurchaseResult](t, r)
}

// downloadLink is the download link of the i-th clip of a purchase's
// answer, "" when it has none.
func downloadLink(lines []brollclient.PurchaseLine, i int) string { return deref(lines[i].DownloadUrl) }

// do sends one request to node n through the real fiber router, with key
// as the bearer key when it is not empty.
func (e *testEnv) do(t *testing.T, n int, method, path, key string, body any) response {
	t.Helper()
	var header map[string]string
	if key != "" {
		header = bearerHeader(key)
	}
	return e.send(t, n, method, path, header, body)
}

func bearerHeader(key string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + key}
}

// send is do with arbitrary headers (X-API-Key, Accept, ...). A string body
// is sent as it is, anything else as JSON.
func (e *testEnv) send(t *testing.T, n int, method, path string, header map[string]string, body any) response {
	t.Helper()
	out := e.sendUnchecked(t, n, method, path, header, body)
	if out.status >= 400 {
		checkProblem(t, method+" "+path, out)
	}
	return out
}

// sendUnchecked is send without the problem+json check, for the dashboard,
// whose errors are pages.
func (e *testEnv) sendUnchecked(t *testing.T, n int, method, path string, header map[string]string, body any) response {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, _ := json.Marshal(b)
		rd = bytes.NewReader(raw)
	}
	req := httptest.NewRequest(method, path, rd)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := e.nodes[n].app.Test(req, -1)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if len(raw) > 0 && raw[0] == '{' && !json.Valid(raw) {
		t.Fatalf("%s %s: bad JSON %q", method, path, raw)
	}
	return response{status: res.StatusCode, header: res.Header, raw: raw}
}

// decode reads the body as T and fails the test unless T holds all of it:
// a member T does not name (one renamed or added on the server) and a
// member T names but the body lacks (one removed) are both drift from the
// contract, where reading them as zero values would hide it.
func decode[T any](t testing.TB, r response) T {
	t.Helper()
	var out T
	dec := json.NewDecoder(bytes.NewReader(r.raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("decode %T: %v: %s", out, err, r.raw)
	}
	// Encoded again, T must give back the body it was read from: members
	// are only left out where both omit them (omitempty on the optional ones).
	again, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	var want, got any
	if err := json.Unmarshal(r.raw, &want); err != nil {
		t.Fatalf("decode %T: %v", out, err)
	}
	if err := json.Unmarshal(again, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("decode %T: the body has members the type lacks or lacks members it names:\nbody %s\ntype %s", out, r.raw, again)
	}
	return out
}

// expect fails the test unless r has status, and decodes its body as T.
func expect[T any](t testing.TB, r response, status int) T {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.raw)
	}
	return decode[T](t, r)
}

// problemOf reads an error body as the contract's Problem.
func problemOf(t testing.TB, r response) brollclient.Problem {
	return errorOf[brollclient.Problem](t, r)
}

// errorOf reads an error: a problem, or the result of a failed MCP tool
// call. Errors carry extension members beyond the ones the tests read, so
// unlike decode it lets unknown members pass.
func errorOf[T any](t testing.TB, r response) T {
	t.Helper()
	var out T
	if err := json.Unmarshal(r.raw, &out); err != nil {
		t.Fatalf("error body %T: %v: %s", out, err, r.raw)
	}
	return out
}

// checkProblem asserts the RFC 9457 shape every error must have.
func checkProblem(t *testing.T, what string, r response) {
	t.Helper()
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/problem+json") {
		t.Errorf("%s: content type %q, want application/problem+json", what, ct)
	}
	p := problemOf(t, r)
	if p.Status != r.status {
		t.Errorf("%s: body status %v != %d", what, p.Status, r.status)
	}
	for _, m := range []struct{ name, value string }{
		{"type", p.Type}, {"title", p.Title}, {"detail", p.Detail}, {"code", string(p.Code)}, {"request_id", p.RequestId},
	} {
		if m.value == "" {
			t.Errorf("%s: problem body lacks %q: %s", what, m.name, r.raw)
		}
	}
}
