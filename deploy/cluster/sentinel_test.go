package cluster

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"broll/billing/billingtest"
	"broll/embed/embedtest"
	"broll/internal/redisx"
	"broll/internal/testkit"
)

// switchLog is what the probes saw while Redis switched primaries.
type switchLog struct {
	mu       sync.Mutex
	statuses map[string]map[int]int // probe -> status -> count
	slowest  map[string]time.Duration
	first503 time.Time
	last503  time.Time
}

func (l *switchLog) saw(probe string, r reply, took time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.statuses[probe] == nil {
		l.statuses[probe] = map[int]int{}
	}
	l.slowest[probe] = max(l.slowest[probe], took)
	l.statuses[probe][r.status]++
	if r.status == 503 {
		now := time.Now()
		if l.first503.IsZero() {
			l.first503 = now
		}
		l.last503 = now
	}
}

// TestRedisSentinelFailover: with REDIS_URL naming three sentinels, the
// primary is killed (SIGKILL) and Sentinel promotes the replica. Two API
// nodes and a worker, never restarted, ride through: every answer while it
// switches is 200, 401, 429 or 503 with Retry-After (never 500); a key
// revoked before stays refused throughout and after; the shared rate limit
// holds on the new primary; jobs queued before the kill and after it run.
//
// A request waits on Redis for about three seconds (go-redis's dial and
// command retries) before it is answered 503 (or, for the rate limit, from
// the in-process limiter): with the sentinels' down-after at 1 s the switch
// is over within that time and nothing is refused; at 5 s (closer to what
// operators set) the revocations in the middle of it are 503 for a while.
func TestRedisSentinelFailover(t *testing.T) {
	t.Parallel()
	for _, downAfter := range []time.Duration{time.Second, 5 * time.Second} {
		t.Run("down-after "+downAfter.String(), func(t *testing.T) {
			t.Parallel()
			sentinelFailover(t, downAfter)
		})
	}
}

func sentinelFailover(t *testing.T, downAfter time.Duration) {
	pool, dbURL := testkit.NewPool(t)
	stack := startSentinelStack(t, downAfter)
	embedder := newGatedOllama(t, embedtest.NewOllama(t, embedtest.Options{}).URL)
	env := with(baseEnv(t, dbURL, stack.URL(), embedder.URL), map[string]string{
		"BROLL_RATE_LIMIT_PER_MINUTE":  "100000",
		"BROLL_AUTH_CACHE_TTL":         "10m",
		"BROLL_EMBED_RETRY_BASE_DELAY": "100ms",
		"BROLL_EMBED_RETRY_MAX_DELAY":  "1s",
	})
	nodes := []node{startAPI(t, env), startAPI(t, env)}
	worker := startWorker(t, env)
	acct := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: 5000})
	live := acct.CustomerKey(t, pool, "live")
	doomed := acct.CustomerKey(t, pool, "doomed")
	for _, n := range nodes { // both nodes now hold both keys in their auth cache
		for _, k := range []string{live.Secret, doomed.Secret} {
			if r := call(t, n.url, "GET", "/api/v1/balance", k, nil); r.status != 200 {
				t.Fatalf("before: %d %s", r.status, r.raw)
			}
		}
	}
	if r := call(t, nodes[0].url, "DELETE", "/api/v1/keys?id="+doomed.ID.String(), acct.RootKey.Secret, nil); r.status != 200 {
		t.Fatalf("revoke: %d %s", r.status, r.raw)
	}
	// Keys the revoking probe takes one after the other through the switch.
	spares := make([]uuid.UUID, 400)
	for i := range spares {
		spares[i] = acct.CustomerKey(t, pool, fmt.Sprintf("spare-%d", i)).ID
	}

	// Jobs queued before the kill: the embedder holds the worker's first
	// batch, so they are in Redis (active or pending) when the primary dies.
	embedder.shut()
	before := billingtest.Videos(t, pool, 4, "easy")
	ctl(t, env, "clips", "reembed")
	select {
	case <-embedder.seen:
	case <-time.After(30 * time.Second):
		t.Fatal("the worker never called the embedder")
	}
	if err := stack.replicaInSync(); err != nil {
		t.Fatal(err)
	}
	oldPrimary, err := stack.masterAddr()
	if err != nil {
		t.Fatal(err)
	}

	// Probes: a live key, the revoked key, and revocations (which must write
	// to Redis) through both nodes, until the switch is over.
	log := &switchLog{statuses: map[string]map[int]int{}, slowest: map[string]time.Duration{}}
	stop := make(chan struct{})
	var probes sync.WaitGroup
	probe := func(name string, allowed []int, next func(i int) reply) {
		probes.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				began := time.Now()
				r := next(i)
				log.saw(name, r, time.Since(began))
				if !slices.Contains(allowed, r.status) {
					t.Errorf("%s: status %d during the switch: %s", name, r.status, r.raw)
				}
				if r.status == 503 && r.header.Get("Retry-After") == "" {
					t.Errorf("%s: 503 without Retry-After: %s", name, r.raw)
				}
				if r.status >= 400 && r.body["code"] == nil {
					t.Errorf("%s: %d is not problem+json: %s", name, r.status, r.raw)
				}
				time.Sleep(10 * time.Millisecond) // pace the probe, not a wait
			}
		})
	}
	get := func(key string) func(int) reply {
		return func(i int) reply {
			r, err := tryCall(nodes[i%2].url, "GET", "/api/v1/balance", key, nil)
			if err != nil {
				t.Errorf("GET balance: %v", err)
			}
			return r
		}
	}
	probe("live key", []int{200, 429, 503}, get(live.Secret))
	probe("revoked key", []int{401}, get(doomed.Secret))
	var revoked atomic.Int64
	probe("revocation", []int{200, 503}, func(i int) reply {
		n := revoked.Load()
		if n == int64(len(spares)) {
			t.Errorf("ran out of keys to revoke")
			return reply{status: 200}
		}
		r, err := tryCall(nodes[i%2].url, "DELETE", "/api/v1/keys?id="+spares[n].String(), acct.RootKey.Secret, nil)
		if err != nil {
			t.Errorf("DELETE key: %v", err)
		}
		if r.status == 200 { // a 503 is retried with the same key, as a client would
			revoked.Add(1)
		}
		return r
	})

	eventually(t, 5*time.Second, "probes answered", func() error {
		log.mu.Lock()
		defer log.mu.Unlock()
		if len(log.statuses) < 3 {
			return fmt.Errorf("%d probes answered", len(log.statuses))
		}
		return nil
	})
	killed := time.Now()
	stack.killPrimary()
	var promoted time.Time
	eventually(t, 60*time.Second, "Sentinel promotes the replica", func() error {
		addr, err := stack.masterAddr()
		if err != nil {
			return err
		}
		if addr == oldPrimary {
			return fmt.Errorf("master still %s", addr)
		}
		promoted = time.Now()
		return nil
	})
	// Over when the revocations, which need the primary, succeed again for
	// a while: 20 in a row after the promotion.
	eventually(t, 60*time.Second, "revocations succeed again", func() error {
		log.mu.Lock()
		defer log.mu.Unlock()
		if log.last503.After(promoted) && time.Since(log.last503) < time.Second {
			return fmt.Errorf("503 %s ago", time.Since(log.last503))
		}
		if c := revoked.Load(); c < 20 {
			return fmt.Errorf("%d revoked", c)
		}
		return nil
	})
	close(stop)
	probes.Wait()
	if t.Failed() {
		t.FailNow()
	}
	log.mu.Lock()
	t.Logf("statuses while switching: %v; slowest answers: %v", log.statuses, log.slowest)
	t.Logf("primary killed; promoted after %.1f s", promoted.Sub(killed).Seconds())
	if !log.first503.IsZero() {
		t.Logf("503s from %.1f s to %.1f s after the kill: %.1f s of 503",
			log.first503.Sub(killed).Seconds(), log.last503.Sub(killed).Seconds(), log.last503.Sub(log.first503).Seconds())
	}
	log.mu.Unlock()

	t.Run("revoked keys stay refused", func(t *testing.T) {
		for i, n := range nodes {
			wantProblem(t, fmt.Sprintf("revoked before the kill, node %d", i), call(t, n.url, "GET", "/api/v1/balance", doomed.Secret, nil), 401, "unauthorized")
		}
		if r := call(t, nodes[1].url, "GET", "/api/v1/balance", live.Secret, nil); r.status != 200 {
			t.Fatalf("live key after the switch: %d %s", r.status, r.raw)
		}
	})

	t.Run("the rate limit is shared on the new primary", func(t *testing.T) {
		k := acct.CustomerKey(t, pool, "limited")
		// A 503 says the change is not yet on every node (Redis still
		// settling after the switch); a client retries it, and so does this.
		eventually(t, 30*time.Second, "set the key's limit", func() error {
			r := call(t, nodes[0].url, "PATCH", "/api/v1/keys?id="+k.ID.String(), acct.RootKey.Secret,
				map[string]any{"rate_limit_per_minute": 20})
			switch {
			case r.status == 503:
				return fmt.Errorf("%d %s", r.status, r.raw)
			case r.status != 200:
				t.Fatalf("set the key's limit: %d %s", r.status, r.raw)
			}
			return nil
		})
		fallbacks := func() float64 {
			return value(scrape(t, nodes[0].metrics), "broll_rate_limiter_fallbacks_total", nil) +
				value(scrape(t, nodes[1].metrics), "broll_rate_limiter_fallbacks_total", nil)
		}
		before := fallbacks()
		rdb, err := redisx.Open(context.Background(), stack.URL())
		if err != nil {
			t.Fatal(err)
		}
		defer rdb.Close()
		counts := map[int]int{}
		start := testkit.RedisNow(t, rdb)
		for i := range 30 {
			counts[call(t, nodes[i%2].url, "GET", "/api/v1/pricing", k.Secret, nil).status]++
		}
		// The first 20 pass, the rest are refused but for those the shared
		// bucket refilled meanwhile (one every 3 s).
		most := testkit.AdmittedAtMost(20, testkit.RedisNow(t, rdb).Sub(start))
		if counts[200] < 20 || counts[200] > most || counts[200]+counts[429] != 30 {
			t.Fatalf("statuses %v: want 20 to %d x 200 and the rest 429 across both nodes", counts, most)
		}
		if after := fallbacks(); after != before {
			t.Fatalf("limited in process, not on the new primary: fallbacks %v -> %v", before, after)
		}
	})

	t.Run("jobs queued before and after the switch run", func(t *testing.T) {
		after := billingtest.Videos(t, pool, 4, "easy")
		ctl(t, env, "clips", "reembed")
		embedder.openGate()
		waitEmbedded(t, pool, append(slices.Clone(before), after...), 60*time.Second)
		if r := call(t, worker.url, "GET", "/readyz", "", nil); r.status != 200 {
			t.Fatalf("worker readyz after the switch: %d %s", r.status, r.raw)
		}
	})

	for _, p := range append(nodes, worker) {
		p.stop(t)
	}
}
