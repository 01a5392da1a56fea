// Package testkit gives tests real Postgres and Redis from the local stack:
// a fresh database cloned from a migrated template, and a Redis key prefix
// of their own, so tests run in parallel without seeing each other.
package testkit

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"broll/internal/database"
	"broll/migrations"
)

// DatabaseURL returns the admin URL of the test cluster: TEST_DATABASE_URL,
// else DATABASE_URL, else the local stack's env file. Tests fail (not skip)
// when none is set: they need the real database.
func DatabaseURL(t testing.TB) string {
	t.Helper()
	return envOrStack(t, "DATABASE_URL")
}

// RedisURL is DatabaseURL's counterpart for Redis.
func RedisURL(t testing.TB) string {
	t.Helper()
	return envOrStack(t, "REDIS_URL")
}

func envOrStack(t testing.TB, name string) string {
	if v := os.Getenv("TEST_" + name); v != "" {
		return v
	}
	if v := os.Getenv(name); v != "" {
		return v
	}
	if v := stackEnv()[name]; v != "" {
		return v
	}
	t.Fatalf("%s is not set and no local stack is running: run `make test` or `deploy/local/stack.sh up`", name)
	return ""
}

func stackEnv() map[string]string {
	dir, err := os.Getwd()
	if err != nil {
		return nil
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, ".stack", "env"))
		if err == nil {
			env := map[string]string{}
			for _, line := range strings.Split(string(b), "\n") {
				if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok {
					env[k] = v
				}
			}
			return env
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil
		}
		dir = parent
	}
}

var dbSeq atomic.Int64

// NewDatabase creates an empty, migrated database for this test and drops it
// when the test ends. It returns the database's URL.
func NewDatabase(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin := DatabaseURL(t)
	tmpl := ensureTemplate(t, ctx, admin)

	return createDatabase(t, ctx, admin, "TEMPLATE "+tmpl)
}

// NewEmptyDatabase creates a database with no schema at all (for migration
// tests) and drops it when the test ends.
func NewEmptyDatabase(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return createDatabase(t, ctx, DatabaseURL(t), "")
}

// DatabaseAt creates a database migrated up to schema version (no function
// files: a release's own are the test's to create), for a test of what
// migrating a database of an earlier release does. It returns its URL and
// a database/sql handle, closed and dropped when the test ends.
func DatabaseAt(t testing.TB, version int64) (string, *sql.DB) {
	t.Helper()
	url := NewEmptyDatabase(t)
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	db := stdlib.OpenDB(*cfg)
	t.Cleanup(func() { _ = db.Close() })
	p, err := goose.NewProvider(goose.DialectPostgres, db, migrations.FS, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := p.UpTo(ctx, version); err != nil {
		t.Fatalf("migrate to version %d: %v", version, err)
	}
	return url, db
}

func createDatabase(t testing.TB, ctx context.Context, admin, options string) string {
	t.Helper()
	name := fmt.Sprintf("broll_test_%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9, dbSeq.Add(1))
	conn := connect(t, ctx, admin)
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, fmt.Sprintf(`CREATE DATABASE %s %s`, name, options)); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, admin)
		if err != nil {
			return
		}
		defer c.Close(ctx)
		_, _ = c.Exec(ctx, fmt.Sprintf(`DROP DATABASE IF EXISTS %s WITH (FORCE)`, name))
	})
	return withDatabase(t, admin, name)
}

// NewPool is NewDatabase plus an open pool, closed when the test ends.
func NewPool(t testing.TB) (*pgxpool.Pool, string) {
	t.Helper()
	url := NewDatabase(t)
	pool, err := database.Open(context.Background(), url)
	if err != nil {
		t.Fatalf("open test database: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool, url
}

func connect(t testing.TB, ctx context.Context, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connect to test cluster (is the stack up? `deploy/local/stack.sh up`): %v", err)
	}
	return conn
}

func withDatabase(t testing.TB, url, name string) string {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatalf("parse database url: %v", err)
	}
	q := ""
	if i := strings.Index(url, "?"); i >= 0 {
		q = url[i:]
	}
	return fmt.Sprintf("postgres://%s@%s:%d/%s%s", cfg.User, cfg.Host, cfg.Port, name, q)
}

// ensureTemplate migrates a template database once per migration set; its
// name carries a hash of every file in migrations.FS, the function files
// under functions/ included, so a changed migration or rule makes a new
// template. An advisory lock serialises parallel test packages.
func ensureTemplate(t testing.TB, ctx context.Context, admin string) string {
	t.Helper()
	h := sha256.New()
	_ = fs.WalkDir(migrations.FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := fs.ReadFile(migrations.FS, path)
		h.Write([]byte(path))
		h.Write(b)
		return nil
	})
	name := "broll_tmpl_" + hex.EncodeToString(h.Sum(nil))[:12]

	conn := connect(t, ctx, admin)
	defer conn.Close(ctx)
	exec := func(what, sql string) {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	exec("lock", `SELECT pg_advisory_lock(872341)`)
	defer func() { _, _ = conn.Exec(context.Background(), `SELECT pg_advisory_unlock(872341)`) }()

	var ready bool
	err := conn.QueryRow(ctx, `SELECT datistemplate FROM pg_database WHERE datname = $1`, name).Scan(&ready)
	if err == nil && ready {
		return name
	}
	if err == nil {
		// A previous run died half way; start over.
		exec("drop stale template", fmt.Sprintf(`DROP DATABASE %s WITH (FORCE)`, name))
	}
	exec("create template", fmt.Sprintf(`CREATE DATABASE %s`, name))
	if _, err := database.Migrate(ctx, withDatabase(t, admin, name), slog.New(slog.DiscardHandler)); err != nil {
		t.Fatalf("migrate template: %v", err)
	}
	exec("mark template", fmt.Sprintf(`ALTER DATABASE %s IS_TEMPLATE true`, name))
	return name
}
