package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"broll/internal/config"
	"broll/internal/testkit"
	"broll/wiring"
)

type ctl struct {
	env  map[string]string
	pool *pgxpool.Pool
	rdb  *redis.Client // the database of REDIS_URL
	// prefix is the test's BROLL_REDIS_PREFIX.
	prefix string
}

func newCtl(t *testing.T) *ctl {
	t.Helper()
	pool, dbURL := testkit.NewPool(t)
	rds := testkit.Redis(t)
	return &ctl{pool: pool, rdb: rds.Client, prefix: rds.Prefix, env: map[string]string{
		"DATABASE_URL": dbURL, "REDIS_URL": rds.URL, "BROLL_REDIS_PREFIX": rds.Prefix,
		"BROLL_MEDIA_DIR": t.TempDir(), "BROLL_EMBED_PROVIDER": "builtin",
	}}
}

// run executes brollctl and returns exit code, parsed stdout and stderr.
func (c *ctl) run(t *testing.T, stdin string, args ...string) (int, map[string]any, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, func(k string) string { return c.env[k] }, strings.NewReader(stdin), &out, &errb)
	var body map[string]any
	if code == 0 {
		if err := json.Unmarshal(out.Bytes(), &body); err != nil {
			t.Fatalf("brollctl %v: stdout is not JSON: %q", args, out.String())
		}
	} else if out.Len() != 0 {
		t.Fatalf("brollctl %v failed but wrote stdout: %q", args, out.String())
	}
	return code, body, errb.String()
}

// mustRun runs brollctl without stdin, stops the test unless it exits 0,
// and returns its output.
func (c *ctl) mustRun(t *testing.T, args ...string) map[string]any {
	t.Helper()
	code, out, stderr := c.run(t, "", args...)
	if code != 0 {
		t.Fatalf("brollctl %v: %d %s", args, code, stderr)
	}
	return out
}

// mustFail runs brollctl and fails the test unless it exits non-zero with a
// message on stderr that mentions want.
func (c *ctl) mustFail(t *testing.T, want string, args ...string) {
	t.Helper()
	if code, _, stderr := c.run(t, "", args...); code == 0 || stderr == "" || !strings.Contains(stderr, want) {
		t.Errorf("brollctl %v: exit %d, stderr %q; want failure mentioning %q", args, code, stderr, want)
	}
}

// graph opens, over the test's database and Redis, the graph a process
// with the CLI's environment and parts would build (the API's side of what
// a command changes); it closes when the test ends.
func (c *ctl) graph(t *testing.T, parts wiring.Parts) *wiring.Services {
	t.Helper()
	cfg, err := config.Load(func(k string) string { return c.env[k] })
	if err != nil {
		t.Fatal(err)
	}
	g, err := wiring.Open(context.Background(), cfg, wiring.Options{Parts: parts, Pool: c.pool, Redis: c.rdb})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	return g
}

func (c *ctl) count(t *testing.T, table string) int {
	t.Helper()
	var n int
	if err := c.pool.QueryRow(context.Background(), "SELECT count(*) FROM "+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestAccountKeysAndCredits(t *testing.T) {
	t.Parallel()
	c := newCtl(t)
	acct := c.mustRun(t, "account", "create", "--name", "Acme Video", "--source", "acme", "--credits", "250.50")
	if acct["source"] != "acme" || acct["balance"].(float64) != 250.5 || !strings.HasPrefix(acct["root_key"].(string), "dsk_") ||
		acct["account_id"] == "" || acct["root_key_id"] == "" {
		t.Fatalf("account create output: %v", acct)
	}
	id := acct["account_id"].(string)

	code, out, _ := c.run(t, "", "credits", "add", "--account", id, "--amount", "49.5")
	if code != 0 || out["balance"].(float64) != 300 {
		t.Fatalf("credits add: %d %v", code, out)
	}
	var ledger int64
	if err := c.pool.QueryRow(context.Background(), `SELECT sum(amount_cents) FROM ledger WHERE account_id = $1`, id).Scan(&ledger); err != nil || ledger != 30000 {
		t.Fatalf("ledger sum %d %v", ledger, err)
	}

	code, root2, _ := c.run(t, "", "key", "create-root", "--account", id, "--label", "second")
	if code != 0 || !strings.HasPrefix(root2["api_key"].(string), "dsk_") {
		t.Fatalf("create-root: %v", root2)
	}
	code, ops, _ := c.run(t, "", "key", "create-ops", "--label", "content team")
	if code != 0 || !strings.HasPrefix(ops["api_key"].(string), "dsk_") {
		t.Fatalf("create-ops: %v", ops)
	}
	code, rev, _ := c.run(t, "", "key", "revoke", "--id", root2["id"].(string))
	if code != 0 || rev["id"] != root2["id"] || rev["revoked_at"] == nil {
		t.Fatalf("revoke: %v", rev)
	}

	// Bad input: one clear line on stderr, non-zero exit, nothing changed.
	accounts, ledgerRows, keys := c.count(t, "accounts"), c.count(t, "ledger"), c.count(t, "api_keys")
	for _, b := range []struct {
		args []string
		want string
	}{
		{[]string{"account", "create", "--name", "Dup", "--source", "acme"}, "already taken"},
		{[]string{"account", "create", "--name", "X", "--source", "Bad Source!"}, "source must be"},
		{[]string{"account", "create", "--name", "X", "--source", "x", "--credits", "-5"}, "not a dollar amount"},
		{[]string{"account", "create", "--name", "X", "--source", "y", "--credits", "1.234"}, "not a dollar amount"},
		{[]string{"account", "create", "--source", "z"}, "--name and --source"},
		{[]string{"credits", "add", "--account", id, "--amount", "abc"}, "not a dollar amount"},
		{[]string{"credits", "add", "--account", id, "--amount", "0"}, "more than 0"},
		{[]string{"credits", "add", "--account", "not-a-uuid", "--amount", "5"}, "not a UUID"},
		{[]string{"credits", "add", "--account", "6f1c2a8e-8e53-4c1a-9d55-2f7f0c1f0a11", "--amount", "5"}, "account not found"},
		{[]string{"key", "create-root", "--account", "6f1c2a8e-8e53-4c1a-9d55-2f7f0c1f0a11"}, "account not found"},
		{[]string{"key", "revoke", "--id", "6f1c2a8e-8e53-4c1a-9d55-2f7f0c1f0a11"}, "key not found"},
		{[]string{"key", "explode"}, "unknown command"},
		{[]string{"frobnicate"}, "unknown command"},
		{[]string{"credits", "add", "--bogus"}, "flag provided but not defined"},
	} {
		c.mustFail(t, b.want, b.args...)
	}
	if c.count(t, "accounts") != accounts || c.count(t, "ledger") != ledgerRows || c.count(t, "api_keys") != keys {
		t.Fatal("a failed command changed the database")
	}
}

func TestBadConfigIsOneLine(t *testing.T) {
	t.Parallel()
	c := &ctl{env: map[string]string{"DATABASE_URL": "postgres://x@127.0.0.1:1/x", "REDIS_URL": "redis://127.0.0.1:1/0",
		"BROLL_RATE_LIMIT_PER_MINUTE": "lots"}}
	code, _, stderr := c.run(t, "", "tiers", "list")
	if code == 0 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "BROLL_RATE_LIMIT_PER_MINUTE") {
		t.Fatalf("exit %d stderr %q", code, stderr)
	}
}

// TestUsage: a mistake in the command line exits 2 with its message and the
// usage text (the command table's), before any configuration is read; and
// docs/operations.md shows every command of the table.
func TestUsage(t *testing.T) {
	t.Parallel()
	c := &ctl{} // no configuration: a usage error needs none
	for args, want := range map[string]string{
		"":               "usage: brollctl COMMAND [ARGS]",
		"frobnicate":     `brollctl: unknown command "frobnicate"`,
		"key --id x":     "brollctl: key needs a subcommand",
		"key explode":    `brollctl: unknown command "key explode"`,
		"migrate now":    `brollctl: migrate: unexpected argument "now"`,
		"tiers set easy": "brollctl: tiers set: expected 2 argument(s), got 1",
		"key revoke":     "brollctl: --id is required",
	} {
		code, _, stderr := c.run(t, "", strings.Fields(args)...)
		if code != 2 || !strings.Contains(stderr, want) || !strings.Contains(stderr, (&cli{}).usage()) {
			t.Errorf("brollctl %s: exit %d, stderr %q; want 2, %q and the usage text", args, code, stderr, want)
		}
	}
	doc, err := os.ReadFile("../../docs/operations.md")
	for _, cmd := range (&cli{}).commands() {
		if err != nil || !strings.Contains(string(doc), "\nbrollctl "+cmd.words) {
			t.Errorf("docs/operations.md shows no brollctl %s (%v)", cmd.words, err)
		}
	}
}

func TestTiers(t *testing.T) {
	t.Parallel()
	c := newCtl(t)
	code, out, _ := c.run(t, "", "tiers", "list")
	tiers, _ := out["tiers"].([]any)
	if code != 0 || len(tiers) != 3 {
		t.Fatalf("tiers list: %v", out)
	}
	first := tiers[0].(map[string]any)
	if first["name"] != "easy" || first["price"].(float64) != 5 {
		t.Fatalf("default tiers: %v", tiers)
	}
	code, out, _ = c.run(t, "", "tiers", "set", "premium", "49.99")
	if code != 0 || out["name"] != "premium" || out["price"].(float64) != 49.99 {
		t.Fatalf("tiers set: %d %v", code, out)
	}
	for _, args := range [][]string{{"tiers", "set", "Bad Name", "5"}, {"tiers", "set", "easy", "five"}, {"tiers", "set", "easy"}} {
		c.mustFail(t, "", args...)
	}
}

func TestClipsImportStatusAndSeed(t *testing.T) {
	t.Parallel()
	c := newCtl(t)
	dir := t.TempDir()
	media := filepath.Join(dir, "clip.mp4")
	if err := os.WriteFile(media, []byte("not really a video"), 0o644); err != nil {
		t.Fatal(err)
	}
	good := `{"title":"Woman laughing in a car","emotion":"laughing","gender":"female","difficulty":"easy","media_file":"clip.mp4"}
{"title":"Man cooking","emotion":"happy","gender":"male","difficulty":"hard","media_file":"clip.mp4","tags":["kitchen"]}
`
	file := filepath.Join(dir, "clips.jsonl")
	if err := os.WriteFile(file, []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := c.run(t, "", "clips", "import", file)
	if code != 0 || out["created"].(float64) != 2 || out["updated"].(float64) != 0 {
		t.Fatalf("import: %d %v %s", code, out, stderr)
	}

	bad := strings.ReplaceAll(`{"title":"ok","emotion":"happy","gender":"male","difficulty":"easy","media_file":"MEDIA"}
{"title":"bad emotion","emotion":"meh","gender":"male","difficulty":"easy","media_file":"MEDIA"}
not json
{"title":"missing file","emotion":"happy","gender":"male","difficulty":"easy","media_file":"nope.mp4"}
`, "MEDIA", media)
	before := c.count(t, "videos")
	code, _, stderr = c.run(t, bad, "clips", "import", "-")
	if code == 0 || !strings.Contains(stderr, "line 2") || !strings.Contains(stderr, "line 3") || !strings.Contains(stderr, "line 4") ||
		strings.Contains(stderr, "line 1:") {
		t.Fatalf("bad import: %d %q", code, stderr)
	}
	if c.count(t, "videos") != before {
		t.Fatal("bad import changed the catalog")
	}

	code, status, _ := c.run(t, "", "clips", "status")
	if code != 0 || status["total"].(float64) != 2 || status["model"] == "" {
		t.Fatalf("status: %v", status)
	}
	code, seeded, stderr := c.run(t, "", "seed-demo", "--count", "30")
	if code != 0 || seeded["created"].(float64) != 30 {
		t.Fatalf("seed-demo: %d %v %s", code, seeded, stderr)
	}
	c.mustFail(t, "--count", "seed-demo", "--count", "0")
	code, re, _ := c.run(t, "", "clips", "reembed", "--failed")
	if code != 0 || re["queued"].(float64) != 0 {
		t.Fatalf("reembed --failed: %v", re)
	}
	c.mustFail(t, "not both", "clips", "reembed", "--all", "--failed")
}

func TestMigrateIsIdempotent(t *testing.T) {
	t.Parallel()
	c := newCtl(t)
	c.env["DATABASE_URL"] = testkit.NewEmptyDatabase(t)
	code, first, stderr := c.run(t, "", "migrate")
	if code != 0 || len(first["applied"].([]any)) == 0 {
		t.Fatalf("first migrate: %v %s", first, stderr)
	}
	code, second, _ := c.run(t, "", "migrate")
	if code != 0 || len(second["applied"].([]any)) != 0 || second["version"] != first["version"] {
		t.Fatalf("second migrate: %v", second)
	}
}

func TestAuditAndStatement(t *testing.T) {
	t.Parallel()
	c := newCtl(t)
	acct := c.mustRun(t, "account", "create", "--name", "Stmt", "--source", "stmt", "--credits", "10")
	code, st, stderr := c.run(t, "", "billing", "statement", "--account", acct["account_id"].(string), "--month", "2026-11")
	if code != 0 || st["month"] != "2026-11" || st["start_date"] != "2026-11-01" || st["end_date"] != "2026-11-30" || st["amount"].(float64) != 0 {
		t.Fatalf("statement: %d %v %s", code, st, stderr)
	}
	code, rep, _ := c.run(t, "", "audit", "downloads", "--since", "7d", "--threshold", "2")
	if code != 0 || rep["threshold"].(float64) != 2 || rep["purchases"] == nil {
		t.Fatalf("audit: %v", rep)
	}
	for _, args := range [][]string{
		{"billing", "statement", "--account", acct["account_id"].(string), "--month", "Nov"},
		{"billing", "statement", "--month", "2026-11"},
		{"audit", "downloads", "--since", "forever"},
		{"audit", "downloads", "--threshold", "0"},
	} {
		c.mustFail(t, "", args...)
	}
}
