package cluster

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"broll/billing/billingtest"
	"broll/embed/embedtest"
	"broll/internal/database"
	"broll/internal/testkit"
)

// TestWarmupAfterPostgresRestart: a node whose Postgres restarts under it
// notices, warms its catalog again and only then answers /readyz 200: no
// 200 comes between the restart and the end of the new warm-up, which the
// node counts as a warm-up triggered by the restart. It serves afterwards
// without a restart of its own.
func TestWarmupAfterPostgresRestart(t *testing.T) {
	t.Parallel()
	pg := startPostgres(t)
	env := sharedEnv(t, pg.URL(), testkit.Redis(t), embedtest.NewOllama(t, embedtest.Options{}).URL)
	ctl(t, env, "migrate")
	pool, err := database.Open(context.Background(), pg.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	billingtest.Videos(t, pool, 20, "easy")
	key := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: 100}).RootKey.Secret
	api := startAPI(t, env)

	m := scrape(t, api.metrics)
	if v := value(m, "broll_warmups_total", map[string]string{"trigger": "start", "result": "warm"}); v != 1 {
		t.Fatalf("warm-ups at start: %v, want 1", v)
	}
	if r := call(t, api.url, "GET", "/readyz", "", nil); r.status != 200 || r.body["checks"].(map[string]any)["warmup"] != "warm" {
		t.Fatalf("readyz once started: %d %s", r.status, r.raw)
	}

	pg.stop()
	pg.start()
	// From here on, a 200 must come after the warm-up the restart set off.
	refused := 0
	eventually(t, time.Minute, "ready again after the restart", func() error {
		r, err := tryCall(api.url, "GET", "/readyz", "", nil)
		if err != nil {
			return err
		}
		if r.status != 200 {
			refused++
			return fmt.Errorf("readyz %d %s", r.status, r.raw)
		}
		if v := value(scrape(t, api.metrics), "broll_warmups_total",
			map[string]string{"trigger": "postgres_restart", "result": "warm"}); v != 1 {
			t.Fatalf("readyz answered 200 after the restart with %v warm-ups since it: %s", v, r.raw)
		}
		return nil
	})
	t.Logf("%d probes refused after the restart", refused)
	if !api.logged("postgres restarted; warming up again") {
		t.Error("the restart was not logged")
	}
	q := url.Values{"semantic_search": {"person smiling at the camera"}}
	if r := call(t, api.url, "GET", "/api/v1/broll?"+q.Encode(), key, nil); r.status != 200 {
		t.Fatalf("semantic search after the restart: %d %s", r.status, r.raw)
	}
}
