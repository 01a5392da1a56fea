package api

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"broll/clients/go/brollclient"
	"broll/embed"
	"broll/internal/config"
	"broll/wiring"
)

// readyzCheck is one check of /readyz's 503 problem (brollclient.Problem):
// warmup, which the document declares, or another by name.
func readyzCheck(p brollclient.Problem, name string) string {
	if p.Checks == nil {
		return ""
	}
	if name == "warmup" {
		return string(deref(p.Checks.Warmup))
	}
	v, _ := p.Checks.Get(name)
	return string(v)
}

// readyWarmup is the warmup check of /readyz's 200 body.
func readyWarmup(b brollclient.Readiness) string {
	return string(deref(b.Checks.Warmup))
}

// warmNode adds a node to e whose warm-up calls hook, with cfg changed by
// configure and the embedder e (nil: the configured one), and returns its
// index and the node.
func (e *testEnv) warmNode(t *testing.T, hook func(string), configure func(*config.Config), emb embed.Embedder) (int, *Node) {
	t.Helper()
	cfg := e.cfg
	if configure != nil {
		configure(&cfg)
	}
	g := e.graph(t, cfg, wiring.Options{Parts: wiring.APIParts, Logs: e.logs, Embedder: emb})
	n, err := NewNode(g)
	if err != nil {
		t.Fatal(err)
	}
	n.Warmup.hook = hook
	e.nodes = append(e.nodes, &testNode{app: n.App, gate: g.Gate, metrics: n.Metrics, media: g.Media, g: g})
	return len(e.nodes) - 1, n
}

// TestReadyzWaitsForWarmup: a node answers /readyz 503 (warmup "warming")
// from the moment its warm-up starts until every search of it has run;
// no 200 comes before, and 200 (warmup "warm") comes after. The metrics
// say the same.
func TestReadyzWaitsForWarmup(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	seedCatalog(t, e)
	entered, release := make(chan struct{}), make(chan struct{})
	var finished atomic.Bool
	i, n := e.warmNode(t, func(state string) {
		switch state {
		case warmWarming:
			close(entered)
			<-release
		case warmWarm:
			finished.Store(true)
		}
	}, nil, nil)
	t.Cleanup(n.Warmup.Start(context.Background()))

	// Before Start returned, the node was already out.
	r := e.do(t, i, "GET", "/readyz", "", nil)
	if p := problemOf(t, r); r.status != 503 || p.Code != "unavailable" || readyzCheck(p, "warmup") != warmWarming {
		t.Fatalf("readyz as the warm-up starts: %d %s, want 503 warming", r.status, r.raw)
	}
	select {
	case <-entered:
	case <-time.After(30 * time.Second):
		t.Fatal("the warm-up never began")
	}
	for range 3 {
		r := e.do(t, i, "GET", "/readyz", "", nil)
		if p := problemOf(t, r); r.status != 503 || readyzCheck(p, "warmup") != warmWarming || readyzCheck(p, "postgres") != "ok" {
			t.Fatalf("readyz while warming: %d %s, want 503 warming", r.status, r.raw)
		}
	}
	m := e.scrape(t, i)
	if v, _ := m.Value("broll_warmup_state", map[string]string{"state": warmWarming}); v != 1 {
		t.Fatalf("broll_warmup_state{state=warming} = %v while warming", v)
	}

	close(release)
	deadline := time.Now().Add(60 * time.Second)
	for {
		r := e.do(t, i, "GET", "/readyz", "", nil)
		if r.status == 200 {
			if !finished.Load() {
				t.Fatalf("readyz answered 200 before the warm-up finished: %s", r.raw)
			}
			if b := expect[brollclient.Readiness](t, r, 200); b.Status != brollclient.ReadinessStatusReady || readyWarmup(b) != warmWarm {
				t.Fatalf("readyz once warm: %s", r.raw)
			}
			break
		}
		if p := problemOf(t, r); r.status != 503 || readyzCheck(p, "warmup") != warmWarming {
			t.Fatalf("readyz during the warm-up: %d %s", r.status, r.raw)
		}
		if time.Now().After(deadline) {
			t.Fatal("the warm-up did not finish")
		}
		time.Sleep(20 * time.Millisecond)
	}
	m = e.scrape(t, i)
	for series, want := range map[string]float64{
		`broll_warmup_state{state="warm"}`:                              1,
		`broll_warmup_state{state="warming"}`:                           0,
		`broll_warmups_total{trigger="start",result="warm"}`:            1,
		`broll_warmups_total{trigger="start",result="unfinished"}`:      0,
		`broll_warmups_total{trigger="postgres_restart",result="warm"}`: 0,
	} {
		family, labels := parseSeries(series)
		if got, _ := m.Value(family, labels); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
	if d, _ := m.Value("broll_warmup_duration_seconds", nil); d <= 0 {
		t.Errorf("broll_warmup_duration_seconds = %v", d)
	}
	if !strings.Contains(e.logs.String(), `"msg":"warm-up done; ready"`) {
		t.Error("the warm-up's end was not logged")
	}
}

// TestWarmupBound: a warm-up that cannot finish within
// BROLL_WARMUP_TIMEOUT (here a model server that never answers) stops
// holding the node out: /readyz answers 200 with warmup "unfinished", and
// the node says so in its log and metrics. With the setting at 0 there is
// no warm-up at all.
func TestWarmupBound(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	seedCatalog(t, e)
	i, n := e.warmNode(t, nil, func(c *config.Config) { c.WarmupTimeout = 200 * time.Millisecond }, hangingEmbedder{})
	t.Cleanup(n.Warmup.Start(context.Background()))
	deadline := time.Now().Add(60 * time.Second)
	for {
		r := e.do(t, i, "GET", "/readyz", "", nil)
		if r.status == 200 {
			if b := expect[brollclient.Readiness](t, r, 200); readyWarmup(b) != warmUnfinished {
				t.Fatalf("readyz past the bound: %s, want warmup unfinished", r.raw)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still not ready past the bound: %s", r.raw)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if v, _ := e.scrape(t, i).Value("broll_warmups_total", map[string]string{"result": warmUnfinished}); v != 1 {
		t.Errorf("broll_warmups_total{result=unfinished} = %v, want 1", v)
	}
	if !strings.Contains(e.logs.String(), "did not finish within BROLL_WARMUP_TIMEOUT") {
		t.Error("the bound was not logged")
	}

	off, n := e.warmNode(t, nil, func(c *config.Config) { c.WarmupTimeout = 0 }, hangingEmbedder{})
	t.Cleanup(n.Warmup.Start(context.Background()))
	if b := expect[brollclient.Readiness](t, e.do(t, off, "GET", "/readyz", "", nil), 200); readyWarmup(b) != warmOff {
		t.Fatalf("readyz without a warm-up: %+v", b)
	}
}

// hangingEmbedder is a model server that never answers: each call lasts
// until its caller gives up.
type hangingEmbedder struct{}

func (hangingEmbedder) Embed(ctx context.Context, _ embed.Kind, _ []string) ([][]float32, error) {
	<-ctx.Done()
	return nil, errors.Join(errors.New("embedder did not answer"), ctx.Err())
}

func (hangingEmbedder) Model() string { return embed.NewBuiltin().Model() }

// parseSeries splits `name{a="b",c="d"}` into the family and its labels.
func parseSeries(s string) (string, map[string]string) {
	name, rest, ok := strings.Cut(s, "{")
	if !ok {
		return s, nil
	}
	labels := map[string]string{}
	for _, kv := range strings.Split(strings.TrimSuffix(rest, "}"), ",") {
		k, v, _ := strings.Cut(kv, "=")
		labels[k] = strings.Trim(v, `"`)
	}
	return name, labels
}
