package cluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"broll/internal/freeport"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
)

// The fault tests stop and restart Postgres and Redis, so they get
// instances of their own rather than the shared local stack's.

// redisServer is a redis-server process of the test's own.
type redisServer struct {
	t    *testing.T
	port int
	dir  string
	cmd  *exec.Cmd
	// volatile runs without any persistence: a restart comes back empty,
	// as a cache-only Redis or a failover to an empty replica does.
	volatile bool
}

func startRedis(t *testing.T) *redisServer { return startRedisServer(t, false) }

// startRedisServer starts a redis-server; volatile ones keep nothing
// across a restart.
func startRedisServer(t *testing.T, volatile bool) *redisServer {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatal("redis-server not installed (deploy/local/stack.sh up installs it)")
	}
	r := &redisServer{t: t, port: freeport.Must(t), dir: t.TempDir(), volatile: volatile}
	r.start()
	t.Cleanup(r.stop)
	return r
}

func (r *redisServer) URL() string { return fmt.Sprintf("redis://127.0.0.1:%d/0", r.port) }

// start runs redis-server on the instance's port with an append-only file,
// as production runs it (docs/deploy.md): the queue and the usage counters
// not yet flushed survive a restart.
func (r *redisServer) start() {
	r.t.Helper()
	aof := "yes"
	if r.volatile {
		aof = "no"
	}
	r.cmd = exec.Command("redis-server", "--bind", "127.0.0.1", "--port", strconv.Itoa(r.port),
		"--dir", r.dir, "--save", "", "--appendonly", aof, "--appendfsync", "everysec")
	if err := r.cmd.Start(); err != nil {
		r.t.Fatalf("redis-server: %v", err)
	}
	c := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", r.port)})
	defer c.Close()
	eventually(r.t, 10*time.Second, "redis answers", func() error {
		return c.Ping(context.Background()).Err()
	})
}

// stop shuts the server down as an orchestrator does (SIGTERM: Redis
// syncs its append-only file and exits).
func (r *redisServer) stop() {
	if r.cmd != nil && r.cmd.Process != nil {
		_ = r.cmd.Process.Signal(syscall.SIGTERM)
		_ = r.cmd.Wait()
		r.cmd = nil
	}
}

// pgCluster is a Postgres cluster of the test's own, run as the postgres
// system user when the test runs as root (Postgres refuses root).
type pgCluster struct {
	t      *testing.T
	port   int
	dir    string
	bindir string
	asUser []string // command prefix that runs as the cluster's owner
}

func startPostgres(t *testing.T) *pgCluster {
	t.Helper()
	bindirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	if len(bindirs) == 0 {
		t.Fatal("no Postgres server binaries (deploy/local/stack.sh up installs them)")
	}
	dir, err := os.MkdirTemp("", "broll-pg-")
	if err != nil {
		t.Fatal(err)
	}
	c := &pgCluster{t: t, port: freeport.Must(t), dir: dir, bindir: bindirs[len(bindirs)-1]}
	t.Cleanup(func() {
		c.run("pg_ctl", "-D", c.data(), "-m", "immediate", "-w", "stop")
		os.RemoveAll(dir)
	})
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("running as root needs the postgres system user: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		c.asUser = []string{"runuser", "-u", "postgres", "--"}
	}
	if out, err := c.run("initdb", "-D", c.data(), "-U", "postgres", "--auth=trust", "-E", "UTF8",
		"--locale=C.UTF-8", "--no-sync"); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	c.start()
	conn, err := pgx.Connect(context.Background(), c.url("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), "CREATE DATABASE broll"); err != nil {
		t.Fatal(err)
	}
	return c
}

func (c *pgCluster) data() string { return filepath.Join(c.dir, "data") }

func (c *pgCluster) url(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.port, db)
}

// URL is the service's database.
func (c *pgCluster) URL() string { return c.url("broll") }

func (c *pgCluster) run(program string, args ...string) (string, error) {
	argv := append(append([]string{}, c.asUser...), filepath.Join(c.bindir, program))
	cmd := exec.Command(argv[0], append(argv[1:], args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (c *pgCluster) start() {
	c.t.Helper()
	opts := strings.Join([]string{"-p", strconv.Itoa(c.port), "-k", c.dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "max_connections=100"}, " ")
	if out, err := c.run("pg_ctl", "-D", c.data(), "-o", opts, "-l", filepath.Join(c.dir, "log"), "-w", "-t", "60", "start"); err != nil {
		c.t.Fatalf("pg_ctl start: %v\n%s", err, out)
	}
}

// stop shuts the server down the way a restart does: existing connections
// are terminated.
func (c *pgCluster) stop() {
	c.t.Helper()
	if out, err := c.run("pg_ctl", "-D", c.data(), "-m", "fast", "-w", "stop"); err != nil {
		c.t.Fatalf("pg_ctl stop: %v\n%s", err, out)
	}
}
