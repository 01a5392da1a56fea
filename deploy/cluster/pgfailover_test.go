package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/user"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"broll/billing/billingtest"
	"broll/embed/embedtest"
	"broll/internal/database"
	"broll/internal/testkit"
)

// Failover load: buyers each with a customer key of one account, each
// buying the same clips one after another (a key owns a clip once), every
// purchase with an Idempotency-Key of its own and retried with it.
const (
	failoverBuyers    = 24
	failoverPurchases = 40 // per buyer
	failoverReaders   = 4
	// failoverKillAfter purchases have succeeded when the primary dies.
	failoverKillAfter = failoverBuyers * failoverPurchases / 3
	// failoverSettle bounds how long one purchase may take from its first
	// attempt to its 200, the switch included: a key left claimed by a
	// request that died with the old primary must not hold it longer.
	failoverSettle = 20 * time.Second
)

// syncStandby makes a synchronous standby of c: a commit is acknowledged
// once the standby has it on disk, so promoting it loses nothing that any
// client was told had happened.
func (c *pgCluster) syncStandby(t *testing.T) *pgCluster {
	t.Helper()
	s := c.standby(t)
	conn, err := pgx.Connect(context.Background(), c.url("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for _, q := range []string{`ALTER SYSTEM SET synchronous_standby_names = '*'`, `SELECT pg_reload_conf()`} {
		if _, err := conn.Exec(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 30*time.Second, "the standby is synchronous", func() error {
		var state string
		err := conn.QueryRow(context.Background(), `SELECT coalesce(max(sync_state), '') FROM pg_stat_replication`).Scan(&state)
		if err == nil && state != "sync" {
			err = fmt.Errorf("sync_state %q", state)
		}
		return err
	})
	return s
}

// multiHost is the URL of the service's database on any of clusters, as
// an operator writes DATABASE_URL for a primary and its standby.
func multiHost(attrs string, clusters ...*pgCluster) string {
	hosts := ""
	for i, c := range clusters {
		if i > 0 {
			hosts += ","
		}
		hosts += "127.0.0.1:" + strconv.Itoa(c.port)
	}
	return "postgres://postgres@" + hosts + "/broll?sslmode=disable&target_session_attrs=" + attrs
}

// failoverStats is what the clients saw.
type failoverStats struct {
	attempts, ok, unavailable, inUse, transport atomic.Int64
	rerun                                       atomic.Int64 // 200s of a rerun that found the purchase made
	reads, readsUnavailable                     atomic.Int64
	mu                                          sync.Mutex
	purchaseIDs                                 map[string]int // purchase id -> times answered
	firstOKAfterKill                            time.Time
	slowest                                     time.Duration
}

// TestPostgresFailover runs the API on a multi-host DATABASE_URL over a
// primary and its synchronous standby, kills the primary under purchase
// and read load (pg_ctl stop -m immediate) and promotes the standby: the
// node follows without a restart, answers 503 with Retry-After while it
// switches and never 500, every purchase retried with its Idempotency-Key
// settles within seconds and exactly once, and the balance equals the
// ledger and the purchases afterwards.
func TestPostgresFailover(t *testing.T) {
	t.Parallel()
	primary := startPostgres(t)
	rds := testkit.Redis(t)
	env := sharedEnv(t, primary.URL(), rds, embedtest.NewOllama(t, embedtest.Options{}).URL)
	ctl(t, env, "migrate")
	standby := primary.syncStandby(t)
	env["DATABASE_URL"] = multiHost("read-write", primary, standby)
	env["BROLL_DATABASE_READ_URL"] = multiHost("prefer-standby", primary, standby)
	env["BROLL_RATE_LIMIT_PER_MINUTE"] = "1000000"
	ctx := context.Background()
	// The test's own pool follows the primary the same way.
	pool, err := database.Open(ctx, env["DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	standbyPool, err := pgxpool.New(ctx, standby.url("broll"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(standbyPool.Close)

	const credits = 1_000_000
	acct := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: credits})
	keys := make([]string, failoverBuyers)
	for i := range keys {
		keys[i] = acct.CustomerKey(t, pool, fmt.Sprintf("buyer-%d", i)).Secret
	}
	videos := billingtest.Videos(t, pool, failoverPurchases, "easy")
	// The lists below are page statements, whose routing (standby, primary,
	// promoted standby, rebuilt standby) this test follows: a node
	// answering them from its own order of the catalog reads none of them
	// (see catalog/search/listings.go).
	api := startAPI(t, with(env, map[string]string{"BROLL_LISTINGS_QUIET": "0"}))

	// Reads go to the standby before anything fails (prefer-standby).
	eventually(t, 20*time.Second, "catalog reads on the standby", func() error {
		before := transactions(t, standbyPool)
		for range 10 {
			if r := call(t, api.url, "GET", "/api/v1/broll?limit=5", keys[0], nil); r.status != 200 {
				t.Fatalf("list: %d %s", r.status, r.raw)
			}
		}
		if after := transactions(t, standbyPool); after-before < 10 {
			return fmt.Errorf("%d transactions on the standby for 10 lists", after-before)
		}
		return nil
	})

	st := &failoverStats{purchaseIDs: map[string]int{}}
	var killedAt atomic.Pointer[time.Time]
	killNow := make(chan struct{})
	var killOnce sync.Once
	stopReads := make(chan struct{})
	var wg, readers sync.WaitGroup
	for b := range failoverBuyers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, video := range videos {
				if !buyUntilSettled(t, api.url, keys[b], fmt.Sprintf("buyer-%d-%d", b, i), video, st, &killedAt) {
					return
				}
				if st.ok.Load() >= failoverKillAfter {
					killOnce.Do(func() { close(killNow) })
				}
			}
		}()
	}
	for range failoverReaders {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-stopReads:
					return
				default:
				}
				r, err := tryCall(api.url, "GET", "/api/v1/broll?limit=5", keys[0], nil)
				st.reads.Add(1)
				switch {
				case err != nil:
					t.Errorf("read: %v", err)
					return
				case r.status == 503 && r.header.Get("Retry-After") != "":
					st.readsUnavailable.Add(1)
					time.Sleep(50 * time.Millisecond)
				case r.status != 200:
					t.Errorf("read during the switch: %d %s", r.status, r.raw)
					return
				}
			}
		}()
	}

	buyersDone := make(chan struct{})
	go func() { wg.Wait(); close(buyersDone) }()
	select {
	case <-killNow:
	case <-buyersDone:
		close(stopReads)
		readers.Wait()
		t.Fatalf("the buyers stopped after %d purchases, before the kill", st.ok.Load())
	}
	okAtKill := st.ok.Load()
	at := time.Now()
	killedAt.Store(&at)
	if out, err := primary.run("pg_ctl", "-D", primary.data(), "-m", "immediate", "-w", "stop"); err != nil {
		t.Fatalf("kill the primary: %v\n%s", err, out)
	}
	// An orchestrator promotes the standby once it has seen the primary
	// gone; here, once every buyer has met it: the requests that were
	// running when it died have answered 503 and tried to give their keys
	// up while no primary could take the release.
	eventually(t, 30*time.Second, "the clients meet the outage", func() error {
		if n := st.unavailable.Load(); n < failoverBuyers {
			return fmt.Errorf("%d purchases answered 503", n)
		}
		return nil
	})
	outage := time.Since(at)
	if out, err := standby.run("pg_ctl", "-D", standby.data(), "-w", "-t", "60", "promote"); err != nil {
		t.Fatalf("promote the standby: %v\n%s", err, out)
	}
	promoted := time.Since(at)
	<-buyersDone
	close(stopReads)
	readers.Wait()
	if t.Failed() {
		return
	}

	st.mu.Lock()
	switched := st.firstOKAfterKill.Sub(at)
	st.mu.Unlock()
	total := int64(failoverBuyers * failoverPurchases)
	t.Logf("failover: kill to promote %.2fs, kill to promoted %.2fs, promoted to the first purchase that succeeded %.2fs; "+
		"%d purchases (%d before the kill), %d attempts, %d retries: %d answered 503, %d 409 in use, %d transport errors; "+
		"%d answered by a rerun that found the purchase made; slowest purchase %.2fs; reads %d, of them 503 %d",
		outage.Seconds(), promoted.Seconds(), (switched - promoted).Seconds(), total, okAtKill, st.attempts.Load(), st.attempts.Load()-total,
		st.unavailable.Load(), st.inUse.Load(), st.transport.Load(), st.rerun.Load(), st.slowest.Seconds(),
		st.reads.Load(), st.readsUnavailable.Load())
	if st.ok.Load() != total {
		t.Fatalf("%d purchases answered 200, want %d", st.ok.Load(), total)
	}
	// The node logged the outage without naming the database's hosts (the
	// settings it logs at start are the operator's own).
	warned := 0
	api.mu.Lock()
	for _, l := range api.lines {
		if !strings.Contains(l, `"level":"WARN"`) && !strings.Contains(l, `"level":"ERROR"`) {
			continue
		}
		warned++
		for _, c := range []*pgCluster{primary, standby} {
			if addr := "127.0.0.1:" + strconv.Itoa(c.port); strings.Contains(l, addr) {
				t.Errorf("the API logged the database host %s: %s", addr, l)
			}
		}
	}
	api.mu.Unlock()
	if warned == 0 {
		t.Error("the outage was not logged")
	}

	// The node reads on the promoted standby, through its read pool too.
	if r := call(t, api.url, "GET", "/api/v1/broll?limit=5", keys[0], nil); r.status != 200 {
		t.Fatalf("list after the switch: %d %s", r.status, r.raw)
	}
	// The old primary's host comes back as a standby of the new one: the
	// read pool finds it without a restart.
	rebuilt := standby.standbyOn(t, primary.port)
	rebuiltPool, err := pgxpool.New(ctx, rebuilt.url("broll"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rebuiltPool.Close)
	eventually(t, 30*time.Second, "catalog reads on the rebuilt standby", func() error {
		for range 10 {
			if r := call(t, api.url, "GET", "/api/v1/broll?limit=5", keys[0], nil); r.status != 200 {
				t.Fatalf("list: %d %s", r.status, r.raw)
			}
		}
		// Its statistics count what it replays too: the node's reads are
		// told by its connections there.
		var readers int
		if err := rebuiltPool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = 'broll' AND backend_type = 'client backend' AND pid <> pg_backend_pid()`).Scan(&readers); err != nil {
			return err
		}
		if readers == 0 {
			return errors.New("the node has no connection to the rebuilt standby")
		}
		return nil
	})

	// Money: the pool fell by exactly the purchases, the balance equals the
	// ledger, and each purchase answered exists once.
	pool.Reset()
	var rows, charged int64
	if err := pool.QueryRow(ctx, `SELECT count(*), coalesce(sum(price_cents), 0) FROM purchases WHERE account_id = $1`,
		acct.ID).Scan(&rows, &charged); err != nil {
		t.Fatal(err)
	}
	fell := credits - balance(t, pool, acct.ID)
	t.Logf("pool fell %d = purchases %d (%d rows)", fell, charged, rows)
	if rows != total || fell != charged || charged != total*500 {
		t.Fatalf("%d purchase rows charging %d, the pool fell %d; want %d purchases of 500", rows, charged, fell, total)
	}
	checkLedger(t, pool, acct.ID)
	ids := make([]uuid.UUID, 0, len(st.purchaseIDs))
	for id, n := range st.purchaseIDs {
		if n != 1 {
			t.Errorf("purchase %s answered %d times", id, n)
		}
		ids = append(ids, uuid.MustParse(id))
	}
	var found int64
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM purchases WHERE id = ANY($1)`, ids).Scan(&found); err != nil {
		t.Fatal(err)
	}
	if found != total || int64(len(ids)) != total {
		t.Fatalf("%d purchase ids answered, %d of them stored; want %d", len(ids), found, total)
	}
	api.stop(t)
}

// buyUntilSettled buys one clip with an Idempotency-Key, retrying with the
// same key on 503 (which must carry Retry-After), on a 409 in use (the
// first attempt still settling) and on a transport error, until it is
// answered 200 or failoverSettle has passed. Anything else fails the test.
func buyUntilSettled(t *testing.T, base, key, idem string, video uuid.UUID, st *failoverStats, killedAt *atomic.Pointer[time.Time]) bool {
	first := time.Now()
	body := map[string]any{"video_ids": []uuid.UUID{video}}
	for {
		sent := time.Now()
		st.attempts.Add(1)
		r, err := tryCallWith(base, "POST", "/api/v1/broll/purchase", key, body, map[string]string{"Idempotency-Key": idem})
		switch {
		case err != nil:
			st.transport.Add(1)
		case r.status == 200:
			st.ok.Add(1)
			st.answered(r, sent, first, killedAt)
			return true
		case r.status == 503:
			st.unavailable.Add(1)
			if ra, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || ra < 1 {
				t.Errorf("503 without Retry-After: %v %s", r.header, r.raw)
				return false
			}
		case r.status == 409 && r.body["code"] == "idempotency_key_in_use":
			st.inUse.Add(1)
		default:
			t.Errorf("purchase %s: %d %s", idem, r.status, r.raw)
			return false
		}
		if time.Since(first) > failoverSettle {
			t.Errorf("purchase %s not settled within %s (last: %d %s %v)", idem, failoverSettle, r.status, r.raw, err)
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// answered records a purchase answered 200.
func (st *failoverStats) answered(r reply, sent, first time.Time, killedAt *atomic.Pointer[time.Time]) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if k := killedAt.Load(); k != nil && sent.After(*k) && st.firstOKAfterKill.IsZero() {
		st.firstOKAfterKill = time.Now()
	}
	st.slowest = max(st.slowest, time.Since(first))
	for _, p := range r.body["purchases"].([]any) {
		line := p.(map[string]any)
		if line["already_owned"] == true {
			// A retry that ran anew found what its first attempt
			// bought before the switch: the same purchase, once.
			st.rerun.Add(1)
		}
		st.purchaseIDs[line["purchase_id"].(string)]++
	}
}

// tryCallWith is tryCall with extra request headers.
func tryCallWith(base, method, path, key string, body any, headers map[string]string) (reply, error) {
	raw, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(context.Background(), method, base+path, bytes.NewReader(raw))
	if err != nil {
		return reply{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := client.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer res.Body.Close()
	raw, err = io.ReadAll(res.Body)
	if err != nil {
		return reply{}, err
	}
	out := reply{status: res.StatusCode, header: res.Header, raw: raw}
	if len(raw) > 0 && raw[0] == '{' {
		_ = json.Unmarshal(raw, &out.body)
	}
	return out, nil
}

// standbyOn makes a streaming replica of c listening on port (the port of
// a host that went away and comes back as a standby).
func (c *pgCluster) standbyOn(t *testing.T, port int) *pgCluster {
	t.Helper()
	dir, err := os.MkdirTemp("", "broll-pg-rebuilt-")
	if err != nil {
		t.Fatal(err)
	}
	s := &pgCluster{t: t, port: port, dir: dir, bindir: c.bindir, asUser: c.asUser}
	t.Cleanup(func() {
		s.run("pg_ctl", "-D", s.data(), "-m", "immediate", "-w", "stop")
		os.RemoveAll(dir)
	})
	if len(c.asUser) > 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatal(err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := s.run("pg_basebackup", "-D", s.data(), "-h", "127.0.0.1", "-p", strconv.Itoa(c.port),
		"-U", "postgres", "-X", "stream", "-R", "-c", "fast", "--no-sync"); err != nil {
		t.Fatalf("pg_basebackup: %v\n%s", err, out)
	}
	s.start()
	return s
}
