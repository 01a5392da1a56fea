package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/user"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"broll/billing/billingtest"
	"broll/embed/embedtest"
	"broll/internal/database"
	"broll/internal/freeport"
	"broll/internal/testkit"
)

// standby makes a streaming replica of c with pg_basebackup and starts it.
func (c *pgCluster) standby(t *testing.T) *pgCluster {
	t.Helper()
	dir, err := os.MkdirTemp("", "broll-pg-standby-")
	if err != nil {
		t.Fatal(err)
	}
	s := &pgCluster{t: t, port: freeport.Must(t), dir: dir, bindir: c.bindir, asUser: c.asUser}
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

// transactions counts the transactions the server ran in the service's
// database: on a standby, the reads sent to it.
func transactions(t *testing.T, pool *pgxpool.Pool) int64 {
	t.Helper()
	var n int64
	if err := pool.QueryRow(context.Background(), `
		SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestReadReplica runs the API with BROLL_DATABASE_READ_URL pointing at a
// real streaming replica: catalog reads go to it while it keeps up, to
// the primary while it lags or is down, and no read is refused.
func TestReadReplica(t *testing.T) {
	t.Parallel()
	pg := startPostgres(t)
	rds := testkit.Redis(t)
	env := sharedEnv(t, pg.URL(), rds, embedtest.NewOllama(t, embedtest.Options{}).URL)
	ctl(t, env, "migrate")
	standby := pg.standby(t)
	env["BROLL_DATABASE_READ_URL"] = standby.URL()
	// The test reads in loops until the API turns to the replica and back.
	env["BROLL_RATE_LIMIT_PER_MINUTE"] = "100000"
	ctx := context.Background()
	pool, err := database.Open(ctx, pg.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	replicaConn, err := pgx.Connect(ctx, standby.url("broll"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { replicaConn.Close(context.Background()) })
	replicaPool, err := pgxpool.New(ctx, standby.url("broll"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(replicaPool.Close)

	// Lists here are page statements, whose reads are what this test
	// routes: a node answering them from its own order of the catalog
	// reads no replica, and the clips below are written by hand, which
	// moves no catalog version (see catalog/search/listings.go).
	api := startAPI(t, with(env, map[string]string{"BROLL_LISTINGS_QUIET": "0"}))
	acct := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: 5000})
	billingtest.Videos(t, pool, 3, "easy")
	newest := func() (string, error) {
		r, err := tryCall(api.url, "GET", "/api/v1/broll?limit=1", acct.RootKey.Secret, nil)
		if err != nil {
			return "", err
		}
		if r.status != 200 {
			t.Fatalf("list: %d %s", r.status, r.raw)
		}
		var out struct {
			Videos []struct {
				ID string `json:"id"`
			} `json:"videos"`
		}
		if err := json.Unmarshal(r.raw, &out); err != nil {
			return "", fmt.Errorf("list: %w %s", err, r.raw)
		}
		if len(out.Videos) == 0 {
			return "", fmt.Errorf("list: no videos %s", r.raw)
		}
		return out.Videos[0].ID, nil
	}

	// Reads go to the replica once a check found it caught up.
	eventually(t, 20*time.Second, "lists are read on the replica", func() error {
		before := transactions(t, replicaPool)
		for range 10 {
			if _, err := newest(); err != nil {
				return err
			}
		}
		if after := transactions(t, replicaPool); after-before < 10 {
			return fmt.Errorf("%d transactions on the replica for 10 lists", after-before)
		}
		return nil
	})

	// The replica stops replaying: a clip written now is on the primary
	// only, and the API lists it once it notices the lag.
	if _, err := replicaConn.Exec(ctx, `SELECT pg_wal_replay_pause()`); err != nil {
		t.Fatal(err)
	}
	fresh := billingtest.Videos(t, pool, 1, "easy")[0].String()
	eventually(t, 20*time.Second, "a lagging replica leaves reads to the primary", func() error {
		id, err := newest()
		if err == nil && id != fresh {
			err = fmt.Errorf("newest clip %s, want the one just written %s", id, fresh)
		}
		return err
	})
	if r := call(t, api.url, "GET", "/api/v1/broll/"+fresh, acct.RootKey.Secret, nil); r.status != 200 {
		t.Fatalf("details of the fresh clip: %d %s", r.status, r.raw)
	}
	if _, err := replicaConn.Exec(ctx, `SELECT pg_wal_replay_resume()`); err != nil {
		t.Fatal(err)
	}

	// The replica goes away: every read is still answered.
	replicaConn.Close(ctx)
	replicaPool.Close()
	standby.stop()
	for i := range 20 {
		id, err := newest()
		if err != nil || id != fresh {
			t.Fatalf("read %d without the replica: %s %v", i, id, err)
		}
	}
	if r := call(t, api.url, "GET", "/api/v1/broll/filters", acct.RootKey.Secret, nil); r.status != 200 {
		t.Fatalf("filters without the replica: %d %s", r.status, r.raw)
	}
	api.stop(t)
}
