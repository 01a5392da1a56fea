package clients_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"broll/api"
	"broll/billing/billingtest"
	"broll/clients/go/brollclient"
	"broll/internal/config"
	"broll/internal/testkit"
	"broll/wiring"
)

// liveNode is an API node on a free loopback port over a fresh database,
// with an account that has credit and clips to buy.
type liveNode struct {
	url     string
	rootKey string
	pool    *pgxpool.Pool
	media   string // BROLL_MEDIA_DIR
}

func startNode(t *testing.T) liveNode {
	t.Helper()
	pool, dbURL := testkit.NewPool(t)
	rds := testkit.Redis(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	media := t.TempDir()
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"DATABASE_URL": dbURL, "REDIS_URL": rds.URL, "BROLL_REDIS_PREFIX": rds.Prefix, "BROLL_MEDIA_DIR": media,
			"BROLL_IMPORT_DIR": t.TempDir(), "BROLL_SIGNING_KEY": config.GenerateSecret(), "BROLL_PUBLIC_URL": base,
			"BROLL_EMBED_PROVIDER": "builtin"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	g, err := wiring.Open(context.Background(), cfg, wiring.Options{Parts: wiring.APIParts, Pool: pool, Redis: rds.Client})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	node, err := api.NewNode(g)
	if err != nil {
		t.Fatal(err)
	}
	app := node.App
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() { _ = app.Shutdown() })
	acct := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: 100_000})
	n := liveNode{url: base, rootKey: acct.RootKey.Secret, pool: pool, media: media}
	n.videos(t, 3, "easy")
	return n
}

// videos adds n clips of tier, each with a small full-quality file to
// download.
func (n liveNode) videos(t *testing.T, count int, tier string) []uuid.UUID {
	t.Helper()
	ids := billingtest.Videos(t, n.pool, count, tier)
	for _, id := range ids {
		dir := filepath.Join(n.media, "clips", id.String())
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "full.avi"), []byte("RIFF clip "+id.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ids
}

// customerEnv is the environment of a program run with a new customer key
// of the node's account, labelled label: BROLL_URL and BROLL_API_KEY.
func (n liveNode) customerEnv(t *testing.T, label string) []string {
	t.Helper()
	root, err := brollclient.New(brollclient.Options{APIKey: n.rootKey, BaseURL: n.url})
	if err != nil {
		t.Fatal(err)
	}
	k, err := root.CreateKey(context.Background(), brollclient.KeyCreate{CustomerLabel: label})
	if err != nil {
		t.Fatalf("customer key for %s: %v", label, err)
	}
	return []string{"BROLL_URL=" + n.url, "BROLL_API_KEY=" + k.ApiKey}
}

func bearer(key string) brollclient.ClientOption {
	return brollclient.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+key)
		return nil
	})
}

// tsBuilt is the TypeScript client built once per test binary (npm ci runs
// its prepare script, tsc) and packed (npm pack, as its README says): the
// tests that drive it run in parallel, and two npm runs in one folder
// collide.
type tsBuilt struct {
	dir     string // clients/ts
	tarball string // the packed client, in packDir
}

// packDir holds the tarball; TestMain removes it.
var packDir = filepath.Join(os.TempDir(), fmt.Sprintf("broll-client-pack-%d", os.Getpid()))

var tsOnce = sync.OnceValues(func() (tsBuilt, error) {
	dir, err := filepath.Abs("ts")
	if err != nil {
		return tsBuilt{}, err
	}
	if err := os.MkdirAll(packDir, 0o755); err != nil {
		return tsBuilt{}, err
	}
	if _, err := runOut(dir, nil, "npm", "ci", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"); err != nil {
		return tsBuilt{}, err
	}
	out, err := runOut(dir, nil, "npm", "pack", "--silent", "--pack-destination", packDir)
	if err != nil {
		return tsBuilt{}, err
	}
	lines := strings.Fields(strings.TrimSpace(string(out)))
	if len(lines) == 0 {
		return tsBuilt{}, fmt.Errorf("npm pack named no tarball")
	}
	return tsBuilt{dir: dir, tarball: filepath.Join(packDir, lines[len(lines)-1])}, nil
})

// distMu keeps the scripts that import clients/ts/dist from running while
// an npm install of the folder runs its prepare script (tsc rewrites dist).
var distMu sync.RWMutex

// tsClient returns the built TypeScript client.
func tsClient(t *testing.T) tsBuilt {
	t.Helper()
	b, err := tsOnce()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// runOut runs name with args in dir (env added to the test's) and returns
// its standard output; the error carries both outputs.
func runOut(dir string, env []string, name string, args ...string) ([]byte, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), &cmdError{cmd: name + " " + strings.Join(args, " "), err: err, out: append(stdout.Bytes(), stderr.Bytes()...)}
	}
	return stdout.Bytes(), nil
}

// run is runOut that fails the test.
func run(t *testing.T, dir string, env []string, name string, args ...string) []byte {
	t.Helper()
	out, err := runOut(dir, env, name, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// node runs a script of clients/ts/test with env added and returns its
// standard output; the test fails on a non-zero exit.
func node(t *testing.T, script string, env ...string) []byte {
	t.Helper()
	distMu.RLock()
	defer distMu.RUnlock()
	return run(t, tsClient(t).dir, env, "node", filepath.Join("test", script))
}

type cmdError struct {
	cmd string
	err error
	out []byte
}

func (e *cmdError) Error() string { return e.cmd + ": " + e.err.Error() + "\n" + string(e.out) }
func (e *cmdError) Unwrap() error { return e.err }
