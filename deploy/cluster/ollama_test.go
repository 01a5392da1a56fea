package cluster

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"

	"broll/billing/billingtest"
	"broll/embed"
	"broll/embed/ollamatest"
	"broll/internal/testkit"
)

// The tests of this file run the worker and API nodes against a real
// `ollama serve` (embed/ollamatest, built by deploy/local/stack.sh) with a
// small model of nomic-embed-text's architecture that the test writes:
// random weights, so what is tried is the server, its protocol and its
// failures, not the ranking.

// testModel is the model the tests install, as the service names it.
var testModel = ollamatest.ModelSpec{Seed: 7, ContextLength: 128}

// realOllama starts a server, with the model installed unless bare.
func realOllama(t *testing.T, bare bool) *ollamatest.Server {
	t.Helper()
	srv := ollamatest.Start(t, ollamatest.Options{NumParallel: 1})
	if !bare {
		srv.Create(t, embed.DefaultModel, testModel)
	}
	return srv
}

// embeddingConsistent checks that every clip's vector and status agree:
// a clip is ready with a vector of the model, or pending or failed
// without one; never a vector half stored.
func embeddingConsistent(t *testing.T, pool *pgxpool.Pool, ids []uuid.UUID) (ready int) {
	t.Helper()
	var bad int
	if err := pool.QueryRow(context.Background(), `
		SELECT count(*) FILTER (WHERE embedding_status = 'ready'),
		       count(*) FILTER (WHERE (embedding_status = 'ready') <> (embedding IS NOT NULL AND embedding_model = $2))
		FROM videos WHERE id = ANY($1)`, ids, embed.DefaultModel).Scan(&ready, &bad); err != nil {
		t.Fatal(err)
	}
	if bad != 0 {
		t.Fatalf("%d clips whose vector and status disagree", bad)
	}
	return ready
}

// TestRealOllamaImportAndSearch: an import's clips are embedded by the
// worker through the real server in batches and are found by semantic
// search, whose query the API node embeds through the same server; the
// server serves one request at a time (OLLAMA_NUM_PARALLEL=1), and
// searches sent meanwhile all answer, 200 or the documented 503.
func TestRealOllamaImportAndSearch(t *testing.T) {
	t.Parallel()
	pool, dbURL := testkit.NewPool(t)
	rds := testkit.Redis(t)
	srv := realOllama(t, false)
	env := sharedEnv(t, dbURL, rds, srv.URL)
	api := startAPI(t, env)
	// The worker reaches the same server through a proxy that tells when
	// its batch is on the way.
	proxy := newCountingProxy(t, srv.URL)
	w := startWorker(t, with(env, map[string]string{"OLLAMA_HOST": proxy.url}))
	for len(proxy.embeds) > 0 { // the worker's start-up check
		<-proxy.embeds
	}
	key := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: 1000}).RootKey.Secret

	dir := t.TempDir()
	video := testkit.RenderVideo(t, 64, 36, 1)
	titles := []string{"Woman laughing in a car", "Man cooking in a kitchen", "Dog running on the beach",
		"Aerial drone shot of a city at night", "Team meeting in an office", "Rain on a street",
		"Child smiling at the camera", "Slow motion ocean water at sunset", "Coffee on a laptop desk",
		"Snow on a mountain forest", "Traffic on a road", "Bird in a cloudy sky"}
	var lines strings.Builder
	for i, title := range titles {
		name := fmt.Sprintf("clip%02d.mp4", i)
		raw, err := os.ReadFile(video)
		if err != nil {
			t.Fatal(err)
		}
		testkit.WriteFile(t, dir, name, raw)
		fmt.Fprintf(&lines, `{"title":%q,"emotion":"happy","gender":"female","difficulty":"easy","media_file":%q}`+"\n", title, name)
	}
	file := filepath.Join(dir, "clips.jsonl")
	if err := os.WriteFile(file, []byte(lines.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	ctl(t, env, "clips", "import", file)
	var ids []uuid.UUID
	rows, err := pool.Query(context.Background(), `SELECT id FROM videos`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id uuid.UUID
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if rows.Err() != nil || len(ids) != len(titles) {
		t.Fatalf("imported %d clips, want %d (%v)", len(ids), len(titles), rows.Err())
	}

	// Searches while the worker's batch is on the server: it takes one
	// request at a time, so they queue behind the batch.
	select {
	case <-proxy.embeds:
	case <-time.After(time.Minute):
		t.Fatal("the worker never called the server")
	}
	var wg sync.WaitGroup
	statuses := make([]int, 6)
	for i := range statuses {
		wg.Go(func() {
			q := url.Values{"semantic_search": {fmt.Sprintf("%s number %d", titles[i], i)}}
			r, err := tryCall(api.url, "GET", "/api/v1/broll?"+q.Encode(), key, nil)
			if err != nil {
				t.Errorf("search %d: %v", i, err)
				return
			}
			statuses[i] = r.status
			if r.status != 200 {
				wantProblem(t, fmt.Sprintf("search %d", i), r, 503, "unavailable")
			}
		})
	}
	waitEmbedded(t, pool, ids, 3*time.Minute)
	wg.Wait()
	t.Logf("searches during the import: %v", statuses)
	embeddingConsistent(t, pool, ids)

	// The worker embedded the clips in batches, not one call per clip.
	m := scrape(t, w.metrics)
	calls := value(m, "broll_embed_batch_size", nil)
	var texts float64
	for _, s := range m["broll_embed_batch_size"].GetMetric() {
		texts += s.GetHistogram().GetSampleSum()
	}
	if calls == 0 || calls >= float64(len(ids)) || texts != float64(len(ids)) {
		t.Errorf("%v embedder calls for %v clips (want fewer calls than clips, every clip once)", calls, texts)
	}

	// A search answers through the server: the API's similarities are
	// the cosine of the server's query vector with the stored vectors.
	query := "woman laughing in a car"
	o, err := embed.NewOllama(embed.OllamaOptions{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	qv, err := o.Embed(context.Background(), embed.Query, []string{embed.NormalizeQuery(query)})
	if err != nil {
		t.Fatal(err)
	}
	var bestID uuid.UUID
	var bestSim float64
	if err := pool.QueryRow(context.Background(), `
		SELECT id, 1 - (embedding <=> $1) FROM videos ORDER BY embedding <=> $1 LIMIT 1`,
		pgvector.NewVector(qv[0])).Scan(&bestID, &bestSim); err != nil {
		t.Fatal(err)
	}
	r := call(t, api.url, "GET", "/api/v1/broll?"+url.Values{"semantic_search": {query}}.Encode(), key, nil)
	if r.status != 200 {
		t.Fatalf("semantic search: %d %s", r.status, r.raw)
	}
	videos, _ := r.body["videos"].([]any)
	if len(videos) == 0 {
		t.Fatalf("semantic search found nothing: %s", r.raw)
	}
	first := videos[0].(map[string]any)
	if first["id"] != bestID.String() {
		t.Errorf("first result %v, want %v (the nearest to the server's query vector)", first["id"], bestID)
	}
	if sim, _ := first["similarity"].(float64); sim < bestSim-1e-3 || sim > bestSim+1e-3 {
		t.Errorf("similarity %v, computed from the server's vector %v", sim, bestSim)
	}
	w.stop(t)
	api.stop(t)
}

// TestRealOllamaModelMissing: with the model not installed the worker and
// the API node start and stay up (no crash loop under a restart policy),
// the worker says which model is missing and how to install it, the
// clips stay pending while their jobs retry, semantic search answers
// 503; once the model is created the clips are embedded and search
// answers.
func TestRealOllamaModelMissing(t *testing.T) {
	t.Parallel()
	pool, dbURL := testkit.NewPool(t)
	rds := testkit.Redis(t)
	srv := realOllama(t, true)
	env := with(sharedEnv(t, dbURL, rds, srv.URL), map[string]string{
		"BROLL_EMBED_RETRY_BASE_DELAY": "500ms", "BROLL_EMBED_RETRY_MAX_DELAY": "5s"})
	api := startAPI(t, env)
	w := startWorker(t, env)
	key := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: 1000}).RootKey.Secret
	ids := billingtest.Videos(t, pool, 4, "easy")
	q := nodeQueue(t, pool, rds)
	if _, err := q.EnqueueEmbed(context.Background(), ids); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the worker reports the missing model", func() error {
		if !w.logged("model nomic-embed-text not found: run `ollama pull nomic-embed-text`") {
			return fmt.Errorf("not logged")
		}
		if v := value(scrape(t, w.metrics), "broll_embed_batches_total", map[string]string{"result": "error"}); v == 0 {
			return fmt.Errorf("no failed embedder call counted")
		}
		return nil
	})
	if err := statusCount(pool, ids, "pending"); err != nil {
		t.Fatalf("clips while the model is missing: %v", err)
	}
	search := "/api/v1/broll?" + url.Values{"semantic_search": {"person smiling at the camera"}}.Encode()
	wantProblem(t, "semantic search without the model", call(t, api.url, "GET", search, key, nil), 503, "unavailable")
	if r := call(t, w.url, "GET", "/healthz", "", nil); r.status != 200 {
		t.Fatalf("worker healthz: %d %s", r.status, r.raw)
	}

	srv.Create(t, embed.DefaultModel, testModel)
	waitEmbedded(t, pool, ids, time.Minute)
	embeddingConsistent(t, pool, ids)
	eventually(t, 30*time.Second, "semantic search answers once the model is there", func() error {
		r, err := tryCall(api.url, "GET", search, key, nil)
		if err != nil {
			return err
		}
		if r.status != 200 {
			return fmt.Errorf("%d %s", r.status, r.raw)
		}
		return nil
	})
	w.stop(t)
	api.stop(t)
}

// countingProxy forwards to a server and signals each embed request it
// passes on.
type countingProxy struct {
	url    string
	embeds chan struct{}
	delay  atomic.Int64 // nanoseconds each embed request waits before it is forwarded
}

func newCountingProxy(t *testing.T, backend string) *countingProxy {
	t.Helper()
	u, _ := url.Parse(backend)
	proxy := httputil.NewSingleHostReverseProxy(u)
	// A transport of its own, as newHoldingOllama's.
	transport := &http.Transport{}
	proxy.Transport = transport
	// The requests the slow test gives up on are no news.
	proxy.ErrorLog = log.New(io.Discard, "", 0)
	p := &countingProxy{embeds: make(chan struct{}, 1000)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/embed" {
			select {
			case p.embeds <- struct{}{}:
			default:
			}
			if d := time.Duration(p.delay.Load()); d > 0 {
				// With the body read, the server notices the client
				// going away.
				body, err := io.ReadAll(r.Body)
				if err != nil {
					return
				}
				r.Body = io.NopCloser(bytes.NewReader(body))
				select {
				case <-time.After(d):
				case <-r.Context().Done():
					return
				}
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		srv.Close()
		transport.CloseIdleConnections()
	})
	p.url = srv.URL
	return p
}

// TestRealOllamaKilledMidBatch: the server killed (SIGKILL, with its
// runner) while it embeds a batch: the job is retried, no clip holds half
// a batch's state (each is ready with its vector or pending without one),
// and once the server is back every clip is embedded.
func TestRealOllamaKilledMidBatch(t *testing.T) {
	t.Parallel()
	pool, dbURL := testkit.NewPool(t)
	rds := testkit.Redis(t)
	srv := realOllama(t, false)
	proxy := newCountingProxy(t, srv.URL)
	env := with(sharedEnv(t, dbURL, rds, proxy.url), map[string]string{
		"BROLL_EMBED_RETRY_BASE_DELAY": "200ms", "BROLL_EMBED_RETRY_MAX_DELAY": "5s"})
	w := startWorker(t, env)
	for len(proxy.embeds) > 0 { // the worker's start-up check
		<-proxy.embeds
	}
	// 34 clips: two requests of the embedder (32 texts and 2).
	ids := billingtest.Videos(t, pool, 34, "easy")
	q := nodeQueue(t, pool, rds)
	if _, err := q.EnqueueEmbed(context.Background(), ids); err != nil {
		t.Fatal(err)
	}
	select {
	case <-proxy.embeds:
	case <-time.After(30 * time.Second):
		t.Fatal("the worker never called the server")
	}
	time.Sleep(300 * time.Millisecond) // into the batch
	srv.Kill()
	eventually(t, 30*time.Second, "the failed call counted", func() error {
		if v := value(scrape(t, w.metrics), "broll_embed_batches_total", map[string]string{"result": "error"}); v == 0 {
			return fmt.Errorf("no failed embedder call")
		}
		return nil
	})
	ready := embeddingConsistent(t, pool, ids)
	t.Logf("%d of %d clips embedded when the server died", ready, len(ids))
	if ready == len(ids) {
		t.Fatal("the batch finished before the server was killed")
	}

	srv.Restart()
	waitEmbedded(t, pool, ids, 2*time.Minute)
	embeddingConsistent(t, pool, ids)
	if v := value(scrape(t, w.metrics), "broll_embed_jobs_total", map[string]string{"result": "retry"}); v == 0 {
		t.Error("no retry counted")
	}
	w.stop(t)
}

// TestRealOllamaSlow: a server slower than BROLL_EMBED_TIMEOUT (a delaying
// proxy in front of it): the worker's calls time out and are retried with
// backoff, semantic search answers 503 within about the timeout instead of
// waiting on the server; once the server is quick again the clips are
// embedded and search answers 200.
func TestRealOllamaSlow(t *testing.T) {
	t.Parallel()
	pool, dbURL := testkit.NewPool(t)
	rds := testkit.Redis(t)
	srv := realOllama(t, false)
	proxy := newCountingProxy(t, srv.URL)
	env := with(sharedEnv(t, dbURL, rds, proxy.url), map[string]string{
		"BROLL_EMBED_TIMEOUT":          "5s",
		"BROLL_EMBED_RETRY_BASE_DELAY": "500ms", "BROLL_EMBED_RETRY_MAX_DELAY": "2s"})
	api := startAPI(t, env)
	w := startWorker(t, env)
	key := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: 1000}).RootKey.Secret

	// Well past the timeout; the timeout well past a call of the test
	// model on a busy machine (a second or two).
	proxy.delay.Store(int64(time.Minute))
	ids := billingtest.Videos(t, pool, 3, "easy")
	q := nodeQueue(t, pool, rds)
	if _, err := q.EnqueueEmbed(context.Background(), ids); err != nil {
		t.Fatal(err)
	}
	search := "/api/v1/broll?" + url.Values{"semantic_search": {"slow motion ocean water"}}.Encode()
	start := time.Now()
	wantProblem(t, "semantic search on a slow server", call(t, api.url, "GET", search, key, nil), 503, "unavailable")
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("semantic search on a slow server answered after %s; the embed timeout is 5s", took)
	}
	eventually(t, time.Minute, "the worker's calls time out and are retried", func() error {
		if !w.logged("within 5s") {
			return fmt.Errorf("no timeout logged")
		}
		if v := value(scrape(t, w.metrics), "broll_embed_jobs_total", map[string]string{"result": "retry"}); v == 0 {
			return fmt.Errorf("no retry counted")
		}
		return nil
	})
	if err := statusCount(pool, ids, "pending"); err != nil {
		t.Fatalf("clips while the server is slow: %v", err)
	}

	proxy.delay.Store(0)
	waitEmbedded(t, pool, ids, time.Minute)
	embeddingConsistent(t, pool, ids)
	if r := call(t, api.url, "GET", search, key, nil); r.status != 200 {
		t.Fatalf("semantic search once the server is quick: %d %s", r.status, r.raw)
	}
	w.stop(t)
	api.stop(t)
}
