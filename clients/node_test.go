package clients_test

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"broll/api"
	"broll/billing/billingtest"
	"broll/clients/go/brollclient"
	"broll/internal/config"
	"broll/internal/testkit"
)

// liveNode is an API node on a free loopback port over a fresh database,
// with an account that has credit and clips to buy.
type liveNode struct {
	url     string
	rootKey string
	pool    *pgxpool.Pool
}

func startNode(t *testing.T) liveNode {
	t.Helper()
	pool, dbURL := testkit.NewPool(t)
	rdb, redisURL := testkit.Redis(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"DATABASE_URL": dbURL, "REDIS_URL": redisURL, "BROLL_MEDIA_DIR": t.TempDir(),
			"BROLL_IMPORT_DIR": t.TempDir(), "BROLL_SIGNING_KEY": config.GenerateSecret(), "BROLL_PUBLIC_URL": base,
			"BROLL_EMBED_PROVIDER": "builtin"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	node, err := api.NewNode(context.Background(), cfg, api.NodeOptions{Pool: pool, Redis: rdb})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(node.Close)
	app := node.App
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() { _ = app.Shutdown() })
	acct := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: 100_000})
	billingtest.Videos(t, pool, 3, "easy")
	return liveNode{url: base, rootKey: acct.RootKey.Secret, pool: pool}
}

func bearer(key string) brollclient.ClientOption {
	return brollclient.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+key)
		return nil
	})
}

// tsOnce builds the TypeScript client once per test binary: the tests that
// drive it run in parallel, and two npm ci runs in one folder collide.
var tsOnce = sync.OnceValues(func() (string, error) {
	dir, err := filepath.Abs("ts")
	if err != nil {
		return "", err
	}
	for _, args := range [][]string{{"ci", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"}, {"run", "--silent", "build"}} {
		cmd := exec.Command("npm", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", &cmdError{cmd: "npm " + args[0], err: err, out: out}
		}
	}
	return dir, nil
})

// tsClient returns the folder of the built TypeScript client.
func tsClient(t *testing.T) string {
	t.Helper()
	dir, err := tsOnce()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// node runs a script of clients/ts/test with env added and returns its
// standard output; the test fails on a non-zero exit.
func node(t *testing.T, script string, env ...string) []byte {
	t.Helper()
	dir := tsClient(t)
	cmd := exec.Command("node", filepath.Join("test", script))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node test/%s: %v\n%s\n%s", script, err, stdout.Bytes(), stderr.Bytes())
	}
	return stdout.Bytes()
}

type cmdError struct {
	cmd string
	err error
	out []byte
}

func (e *cmdError) Error() string { return e.cmd + ": " + e.err.Error() + "\n" + string(e.out) }
func (e *cmdError) Unwrap() error { return e.err }
