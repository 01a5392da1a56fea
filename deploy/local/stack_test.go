// Package local holds the scripts of the local stack; this test checks that
// re-running them is safe and cheap.
package local

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

func runStack(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.Command("bash", append([]string{"stack.sh"}, args...)...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

// TestUpIsIdempotent re-runs `stack.sh up` on the running stack: it must
// succeed, install, build and initialise nothing, and write the same env.
func TestUpIsIdempotent(t *testing.T) {
	if os.Getenv("BROLL_STACK_DIR") != "" {
		t.Skip("a custom stack dir is in use")
	}
	var envs []string
	for i := 0; i < 2; i++ {
		out, stderr, err := runStack(t, "up")
		if err != nil {
			t.Fatalf("up #%d: %v\n%s", i+1, err, stderr)
		}
		for _, word := range []string{"installing", "building", "initdb", "fetching", "shared_buffers"} {
			if strings.Contains(stderr, word) {
				t.Errorf("up #%d on a running stack did work (%q): %s", i+1, word, stderr)
			}
		}
		if !strings.Contains(out, "DATABASE_URL=postgres://") || !strings.Contains(out, "REDIS_URL=redis://") {
			t.Fatalf("up #%d printed %q", i+1, out)
		}
		envs = append(envs, out)
	}
	if envs[0] != envs[1] {
		t.Fatalf("env changed between runs: %q vs %q", envs[0], envs[1])
	}
	if out, _, err := runStack(t, "status"); err != nil || !strings.Contains(out, "postgres: running") || !strings.Contains(out, "redis: running") {
		t.Fatalf("status: %v %s", err, out)
	}
	if _, stderr, err := runStack(t, "bogus"); err == nil || !strings.Contains(stderr, "usage") {
		t.Fatalf("unknown subcommand accepted: %v %s", err, stderr)
	}
}

// TestPostgresMemory checks the memory settings `up` gives the stack's
// Postgres: shared_buffers (BROLL_PG_SHARED_BUFFERS, 2 GB by default) and
// glibc's malloc settings in the server's environment, which its backends
// inherit (docs/deploy.md, Postgres memory). It reads the server's files and
// /proc, so it needs the stack's superuser role and the same machine.
func TestPostgresMemory(t *testing.T) {
	url := os.Getenv("DATABASE_URL")
	if url == "" || os.Getenv("BROLL_STACK_DIR") != "" {
		t.Skip("not on the local stack (run through make test)")
	}
	want := os.Getenv("BROLL_PG_SHARED_BUFFERS")
	if want == "" {
		want = "2GB"
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var sized bool
	var pid int
	// The postmaster's own environment: backends are forked from it (and
	// write their status over their own copy of it).
	if err := conn.QueryRow(ctx, `SELECT setting::bigint * 8192 = pg_size_bytes($1),
		split_part(pg_read_file('postmaster.pid'), E'\n', 1)::int
		FROM pg_settings WHERE name = 'shared_buffers'`, want).Scan(&sized, &pid); err != nil {
		t.Fatal(err)
	}
	if !sized {
		t.Errorf("shared_buffers is not %s", want)
	}
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Fatalf("the server's environment: %v", err)
	}
	for _, v := range []string{"MALLOC_MMAP_THRESHOLD_=", "MALLOC_TRIM_THRESHOLD_=", "MALLOC_TOP_PAD_="} {
		if !strings.Contains(string(env), v) {
			t.Errorf("the server runs without %s...", v)
		}
	}
}
