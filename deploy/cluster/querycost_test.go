package cluster

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"broll/billing/billingtest"
	"broll/embed/embedtest"
	"broll/internal/testkit"
)

// holdVideos makes every catalog read wait: the test takes an exclusive
// lock on the videos table in a transaction it keeps open until release.
// A waiting statement counts against statement_timeout like a slow one.
func holdVideos(t *testing.T, pool *pgxpool.Pool) (release func()) {
	t.Helper()
	ctx := context.Background()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `LOCK TABLE videos IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	done := false
	release = func() {
		if !done {
			done = true
			_ = tx.Rollback(ctx)
		}
	}
	t.Cleanup(release)
	return release
}

// waitingOnVideos counts the other sessions' statements that wait for the
// lock on videos.
func waitingOnVideos(pool *pgxpool.Pool) (int, error) {
	var n int
	err := pool.QueryRow(context.Background(), `
		SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid()
		  AND state = 'active' AND wait_event_type = 'Lock' AND query ILIKE '%videos%'`).Scan(&n)
	return n, err
}

// TestQueryCost: a query that runs past BROLL_STATEMENT_TIMEOUT is
// cancelled by Postgres and answered 503 unavailable with Retry-After, not
// 500; and a client that leaves mid-query cancels its statement, which
// would otherwise wait as long as the lock is held.
func TestQueryCost(t *testing.T) {
	t.Parallel()
	pool, dbURL := testkit.NewPool(t)
	rds := testkit.Redis(t)
	env := sharedEnv(t, dbURL, rds, embedtest.NewOllama(t, embedtest.Options{}).URL)
	acct := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: 5000})
	key := acct.CustomerKey(t, pool, "reader")
	billingtest.Videos(t, pool, 2, "easy")

	t.Run("timeout is 503 with Retry-After", func(t *testing.T) {
		api := startAPI(t, with(env, map[string]string{"BROLL_STATEMENT_TIMEOUT": "300ms"}))
		if r := call(t, api.url, "GET", "/api/v1/broll", key.Secret, nil); r.status != 200 {
			t.Fatalf("before: %d %s", r.status, r.raw)
		}
		release := holdVideos(t, pool)
		r := call(t, api.url, "GET", "/api/v1/broll", key.Secret, nil)
		wantProblem(t, "catalog read past the timeout", r, 503, "unavailable")
		if secs, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || secs < 1 {
			t.Errorf("Retry-After %q, want whole seconds", r.header.Get("Retry-After"))
		}
		if api.logged("LOCK TABLE") || api.logged("SELECT ") {
			t.Error("the API logged SQL")
		}
		release()
		if r := call(t, api.url, "GET", "/api/v1/broll", key.Secret, nil); r.status != 200 {
			t.Fatalf("after: %d %s", r.status, r.raw)
		}
		api.stop(t)
	})

	t.Run("client that leaves cancels its query", func(t *testing.T) {
		api := startAPI(t, with(env, map[string]string{"BROLL_STATEMENT_TIMEOUT": "10m"}))
		release := holdVideos(t, pool)
		ctx, hangUp := context.WithCancel(context.Background())
		defer hangUp()
		req, _ := http.NewRequestWithContext(ctx, "GET", api.url+"/api/v1/broll", nil)
		req.Header.Set("Authorization", "Bearer "+key.Secret)
		answered := make(chan error, 1)
		go func() {
			res, err := http.DefaultClient.Do(req)
			if err == nil {
				res.Body.Close()
			}
			answered <- err
		}()
		eventually(t, 10*time.Second, "the catalog read waits on the lock", func() error {
			n, err := waitingOnVideos(pool)
			if err != nil {
				return fmt.Errorf("%d waiting (%w)", n, err)
			}
			if n == 0 {
				return fmt.Errorf("%d waiting", n)
			}
			return nil
		})
		hangUp()
		<-answered
		// The lock is still held: only a cancel ends the statement.
		eventually(t, 10*time.Second, "the statement is cancelled", func() error {
			n, err := waitingOnVideos(pool)
			if err != nil {
				return fmt.Errorf("%d still waiting (%w)", n, err)
			}
			if n != 0 {
				return fmt.Errorf("%d still waiting", n)
			}
			return nil
		})
		release()
		api.stop(t)
	})
}
