package cluster

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"broll/billing/billingtest"
	"broll/embed/embedtest"
	"broll/internal/config"
	"broll/internal/tasks"
	"broll/internal/testkit"
)

// baseEnv is what every process of a test cluster shares.
func baseEnv(t *testing.T, dbURL, redisURL, ollamaURL string) map[string]string {
	return map[string]string{
		"DATABASE_URL":               dbURL,
		"REDIS_URL":                  redisURL,
		"BROLL_SIGNING_KEY":          config.GenerateSecret(),
		"BROLL_PUBLIC_URL":           "http://broll.test",
		"BROLL_MEDIA_DIR":            t.TempDir(),
		"BROLL_EMBED_PROVIDER":       "ollama",
		"OLLAMA_HOST":                ollamaURL,
		"BROLL_USAGE_FLUSH_INTERVAL": "1s",
		// Above the 5 s for which the server keeps a connection that has
		// not sent its first request yet (Go's client dials ahead), so a
		// graceful stop right after a burst of requests finishes in time.
		"BROLL_SHUTDOWN_TIMEOUT": "10s",
		"BROLL_LOG_LEVEL":        "info",
	}
}

// sharedEnv is baseEnv on the test's own keyspace of the shared test Redis.
func sharedEnv(t *testing.T, dbURL string, rds testkit.Keyspace, ollamaURL string) map[string]string {
	return with(baseEnv(t, dbURL, rds.URL, ollamaURL), map[string]string{"BROLL_REDIS_PREFIX": rds.Prefix})
}

// TestScaleOut runs two API nodes and two workers against one Postgres and
// one Redis, as a deployment behind a load balancer would.
func TestScaleOut(t *testing.T) {
	t.Parallel()
	pool, dbURL := testkit.NewPool(t)
	rds := testkit.Redis(t)
	rdb := rds.Client
	ollama := embedtest.NewOllama(t, embedtest.Options{})
	// One embedder call in flight per worker (32 clips), so that both
	// workers take a share of the clips.
	env := with(sharedEnv(t, dbURL, rds, ollama.URL), map[string]string{
		"BROLL_RATE_LIMIT_PER_MINUTE": "20", "BROLL_WORKER_CONCURRENCY": "1"})
	nodes := []node{startAPI(t, env), startAPI(t, env)}
	workers := []node{startWorker(t, env), startWorker(t, env)}
	acct := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: 100000})

	t.Run("rate limit is shared per key", func(t *testing.T) {
		key := acct.CustomerKey(t, pool, "limited").Secret
		counts := map[int]int{}
		start := testkit.RedisNow(t, rdb)
		for i := 0; i < 30; i++ {
			r := call(t, nodes[i%2].url, "GET", "/api/v1/pricing", key, nil)
			counts[r.status]++
		}
		// 20 per minute with a burst of 20: the first 20 pass whichever node
		// they reach, the rest are refused but for those the shared bucket
		// refilled meanwhile (one every 3 s; a bucket per node would pass
		// all 30).
		most := testkit.AdmittedAtMost(20, testkit.RedisNow(t, rdb).Sub(start))
		if counts[200] < 20 || counts[200] > most || counts[200]+counts[429] != 30 {
			t.Fatalf("statuses %v: want 20 to %d x 200 and the rest 429 across both nodes", counts, most)
		}
	})

	t.Run("revocation is immediate on every node", func(t *testing.T) {
		k := acct.CustomerKey(t, pool, "revoked")
		for _, n := range nodes { // both nodes now hold the key in their auth cache
			if r := call(t, n.url, "GET", "/api/v1/balance", k.Secret, nil); r.status != 200 {
				t.Fatalf("before revocation: %d %s", r.status, r.raw)
			}
		}
		if r := call(t, nodes[0].url, "DELETE", "/api/v1/keys?id="+k.ID.String(), acct.RootKey.Secret, nil); r.status != 200 {
			t.Fatalf("revoke: %d %s", r.status, r.raw)
		}
		for i, n := range nodes {
			wantProblem(t, fmt.Sprintf("node %d after revocation", i), call(t, n.url, "GET", "/api/v1/balance", k.Secret, nil), 401, "unauthorized")
		}
	})

	t.Run("one charge when one key buys one video through both nodes at once", func(t *testing.T) {
		k := acct.CustomerKey(t, pool, "buyer")
		video := billingtest.Videos(t, pool, 1, "medium")[0]
		before := balance(t, pool, acct.ID)
		var wg sync.WaitGroup
		statuses := make([]int, 16)
		for i := range statuses {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := tryCall(nodes[i%2].url, "POST", "/api/v1/broll/purchase", k.Secret,
					map[string]any{"video_ids": []uuid.UUID{video}})
				if err != nil {
					t.Error(err)
					return
				}
				statuses[i] = r.status
			}()
		}
		wg.Wait()
		for i, s := range statuses {
			if s != 200 {
				t.Errorf("purchase %d: status %d", i, s)
			}
		}
		var purchases, ledgerRows int
		if err := pool.QueryRow(context.Background(), `
			SELECT (SELECT count(*) FROM purchases WHERE api_key_id = $1),
			       (SELECT count(*) FROM ledger l JOIN purchases p ON p.id = l.purchase_id WHERE p.api_key_id = $1)`,
			k.ID).Scan(&purchases, &ledgerRows); err != nil {
			t.Fatal(err)
		}
		if after := balance(t, pool, acct.ID); purchases != 1 || ledgerRows != 1 || before-after != 1000 {
			t.Fatalf("%d purchases, %d ledger rows, charged %d cents; want 1, 1, 1000", purchases, ledgerRows, before-after)
		}
		checkLedger(t, pool, acct.ID)
	})

	t.Run("each clip is embedded exactly once", func(t *testing.T) {
		const n = 120
		ids := billingtest.Videos(t, pool, n, "easy")
		// Both API nodes may enqueue the same clips (an import retried
		// through the other node): a batch's task id is its clips', so the
		// second is a no-op, and a clip already embedded is skipped.
		var wg sync.WaitGroup
		for _, q := range []*tasks.AsynqQueue{nodeQueue(t, pool, rds), nodeQueue(t, pool, rds)} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := q.EnqueueEmbed(context.Background(), ids); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		eventually(t, 60*time.Second, "every clip embedded", func() error {
			var ready int
			if err := pool.QueryRow(context.Background(),
				`SELECT count(*) FROM videos WHERE id = ANY($1) AND embedding_status = 'ready' AND embedding IS NOT NULL`, ids).Scan(&ready); err != nil {
				return err
			}
			if ready != n {
				return fmt.Errorf("%d of %d ready", ready, n)
			}
			return nil
		})
		// Each process also sends one probe text when it starts (embed.Select).
		texts := 0
		for _, r := range ollama.Requests() {
			for _, in := range r.Input {
				if strings.Contains(in, "Test clip ") {
					texts++
				}
			}
		}
		done := 0.0
		for i, w := range workers {
			d := value(scrape(t, w.metrics), "broll_embed_jobs_total", map[string]string{"result": "done"})
			t.Logf("worker %d embedded %v clips", i, d)
			done += d
		}
		if texts != n || done != n {
			t.Fatalf("the embedder got %d texts and the workers finished %v jobs for %d clips; want %d each", texts, done, n, n)
		}
	})

	for _, p := range append(nodes, workers...) {
		p.stop(t)
	}
}

func balance(t *testing.T, pool *pgxpool.Pool, account uuid.UUID) int64 {
	t.Helper()
	var b int64
	if err := pool.QueryRow(context.Background(), `SELECT balance_cents FROM accounts WHERE id = $1`, account).Scan(&b); err != nil {
		t.Fatal(err)
	}
	return b
}

// checkLedger asserts the money invariants: the balance is never negative
// and always equals the sum of the account's ledger.
func checkLedger(t *testing.T, pool *pgxpool.Pool, account uuid.UUID) {
	t.Helper()
	var bal, sum int64
	if err := pool.QueryRow(context.Background(), `
		SELECT a.balance_cents, coalesce((SELECT sum(amount_cents) FROM ledger WHERE account_id = a.id), 0)
		FROM accounts a WHERE a.id = $1`, account).Scan(&bal, &sum); err != nil {
		t.Fatal(err)
	}
	if bal < 0 || bal != sum {
		t.Fatalf("balance %d, ledger sum %d", bal, sum)
	}
}
