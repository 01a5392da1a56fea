package cluster

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"broll/billing/billingtest"
	"broll/deploy/monitoring"
	"broll/embed/embedtest"
	"broll/internal/testkit"
)

// TestDashboardAndAlertMetricsExported: every metric that a panel of the
// Grafana dashboard or an alerting rule queries (deploy/monitoring) is one
// that an API node or a worker started from the built binaries serves at
// /metrics after a read, a purchase and an ops import, so that no panel
// stays empty and no alert waits on a series that never comes.
func TestDashboardAndAlertMetricsExported(t *testing.T) {
	t.Parallel()
	pool, dbURL := testkit.NewPool(t)
	rds := testkit.Redis(t)
	clip := testkit.RenderVideo(t, 320, 180, 1)
	env := with(sharedEnv(t, dbURL, rds, embedtest.NewOllama(t, embedtest.Options{}).URL),
		map[string]string{"BROLL_IMPORT_DIR": filepath.Dir(clip)})
	api, worker := startAPI(t, env), startWorker(t, env)

	acct := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: 5000})
	key := acct.CustomerKey(t, pool, "monitoring").Secret
	video := billingtest.Videos(t, pool, 1, "easy")[0]
	if r := call(t, api.url, "GET", "/api/v1/broll/"+video.String(), key, nil); r.status != 200 {
		t.Fatalf("read: %d %s", r.status, r.raw)
	}
	if r := call(t, api.url, "POST", "/api/v1/broll/purchase", key, map[string]any{"video_ids": []uuid.UUID{video}}); r.status != 200 {
		t.Fatalf("purchase: %d %s", r.status, r.raw)
	}
	var ops struct {
		APIKey string `json:"api_key"`
	}
	if err := json.Unmarshal([]byte(ctl(t, env, "key", "create-ops", "--label", "monitoring")), &ops); err != nil {
		t.Fatal(err)
	}
	if r := call(t, api.url, "POST", "/api/ops/v1/videos", ops.APIKey, []map[string]any{{"title": "A woman laughing at a joke",
		"emotion": "happy", "gender": "female", "difficulty": "easy", "media_file": filepath.Base(clip)}}); r.status != 200 {
		t.Fatalf("ops import: %d %s", r.status, r.raw)
	}
	// The worker probes, embeds and puts the clip on sale.
	eventually(t, time.Minute, "the imported clip through the worker", func() error {
		if v := value(scrape(t, worker.metrics), "broll_media_jobs_total", map[string]string{"result": "done"}); v < 1 {
			return fmt.Errorf("broll_media_jobs_total{result=done} = %v", v)
		}
		return nil
	})

	exported := map[string]bool{}
	for _, n := range []node{api, worker} {
		r := call(t, n.metrics, "GET", "/metrics", "", nil)
		for name := range sampleNames(r.raw) {
			exported[name] = true
		}
	}
	queries, err := monitoring.Queries()
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range queries {
		for _, name := range monitoring.MetricNames(q.Expr) {
			if !exported[name] {
				t.Errorf("%s queries %s, which neither node exports", q.Where, name)
			}
		}
	}
}

// sampleNames are the names of the samples of a /metrics page, as
// Prometheus stores them (a histogram's _bucket, _sum and _count).
func sampleNames(page []byte) map[string]bool {
	out := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(page))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if i := strings.IndexAny(line, "{ "); i > 0 {
			out[line[:i]] = true
		}
	}
	return out
}
