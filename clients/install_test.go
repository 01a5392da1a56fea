package clients_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Both clients installed from an empty folder outside the repository exactly
// as their READMEs say, the READMEs' and docs/api.md's examples compiled
// (go vet, tsc), and each README's two quickstarts run against a live node:
// balance, search, dry run, purchase, download, a typed error, pagination;
// then a collection made, filled, read back and bought whole (with a
// customer key of its own, which owns nothing yet).
// The TypeScript client is installed twice: from its folder and from the
// tarball npm pack makes of it.
func TestClientsInstallFromAnEmptyFolder(t *testing.T) {
	t.Parallel()
	n := startNode(t)
	env := []string{"BROLL_URL=" + n.url, "BROLL_API_KEY=" + n.rootKey}

	t.Run("go", func(t *testing.T) {
		t.Parallel()
		client, err := filepath.Abs("go")
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		goEnv := []string{"GOWORK=off", "GOFLAGS=-mod=mod"}
		run(t, dir, goEnv, "go", "mod", "init", "example.com/quickstart")
		run(t, dir, goEnv, "go", "mod", "edit", "-replace", "broll/clients/go="+client)
		run(t, dir, goEnv, "go", "get", "broll/clients/go/brollclient")
		quick := codeBlocks(t, "go/README.md", "go", "package main")
		if len(quick) != 2 {
			t.Fatalf("clients/go/README.md has %d Go programs, want the two quickstarts", len(quick))
		}
		write(t, filepath.Join(dir, "main.go"), quick[0])
		write(t, filepath.Join(dir, "collections", "main.go"), quick[1])
		for i, b := range codeBlocks(t, "../docs/api.md", "go", "brollclient") {
			write(t, filepath.Join(dir, "docs", fmt.Sprint(i), "main.go"), b)
		}
		run(t, dir, goEnv, "go", "vet", "./...")
		out := run(t, dir, append(goEnv, env...), "go", "run", ".")
		quickstartRan(t, out)
		collectionsQuickstartRan(t, run(t, dir, append(goEnv, n.customerEnv(t, "go collections quickstart")...), "go", "run", "./collections"))
	})

	ts := func(t *testing.T, install func(b tsBuilt) string) {
		b := tsClient(t)
		dir := t.TempDir()
		// The README's development dependencies (npm install -D typescript@5
		// @types/node@20) at the versions the client itself builds with, in
		// the same npm run as the client.
		write(t, filepath.Join(dir, "package.json"), `{"name": "quickstart", "private": true, "type": "module",
  "devDependencies": {"typescript": "5.9.3", "@types/node": "^20"}}`+"\n")
		tsconfig := codeBlocks(t, "ts/README.md", "json", "compilerOptions")
		if len(tsconfig) != 1 {
			t.Fatalf("clients/ts/README.md has %d tsconfig blocks, want 1", len(tsconfig))
		}
		write(t, filepath.Join(dir, "tsconfig.json"), tsconfig[0])
		npmArgs := []string{"install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"}
		run(t, dir, nil, "npm", append(npmArgs, install(b))...)
		quick := codeBlocks(t, "ts/README.md", "ts", "@broll/client")
		if len(quick) != 2 {
			t.Fatalf("clients/ts/README.md has %d TypeScript programs, want the two quickstarts", len(quick))
		}
		write(t, filepath.Join(dir, "quickstart.ts"), quick[0])
		write(t, filepath.Join(dir, "collections.ts"), quick[1])
		for i, b := range codeBlocks(t, "../docs/api.md", "ts", "@broll/client") {
			write(t, filepath.Join(dir, "docs", fmt.Sprintf("example%d.ts", i)), b)
		}
		run(t, dir, nil, "npx", "--no-install", "tsc")
		quickstartRan(t, run(t, dir, env, "node", "dist/quickstart.js"))
		collectionsQuickstartRan(t, run(t, dir, n.customerEnv(t, "ts collections quickstart "+t.Name()), "node", "dist/collections.js"))
	}
	t.Run("typescript from its folder", func(t *testing.T) {
		t.Parallel()
		distMu.Lock() // npm installs a folder by running its prepare script
		t.Cleanup(distMu.Unlock)
		ts(t, func(b tsBuilt) string { return b.dir })
	})
	t.Run("typescript from its tarball", func(t *testing.T) {
		t.Parallel()
		ts(t, func(b tsBuilt) string { return b.tarball })
	})
}

// quickstartRan checks the lines each quickstart prints on its way.
func quickstartRan(t *testing.T, out []byte) {
	t.Helper()
	for _, want := range []string{"balance:", "found:", "charged:", "downloaded", "refused as expected: not_found", "purchases"} {
		if !strings.Contains(string(out), want) {
			t.Fatalf("the quickstart printed no %q:\n%s", want, out)
		}
	}
}

// collectionsQuickstartRan checks the lines of the collections quickstart,
// run with a key that owns none of the node's 3 clips: all three added,
// listed in order and bought, none skipped.
func collectionsQuickstartRan(t *testing.T, out []byte) {
	t.Helper()
	s := string(out)
	if !strings.Contains(s, "collection:") || !strings.Contains(s, "added: 3 clips") || strings.Count(s, "item:") != 3 ||
		!strings.Contains(s, "bought collection: 3 clips for 15.00 USD; 0 skipped") {
		t.Fatalf("the collections quickstart printed:\n%s", out)
	}
}

// codeBlocks returns the fenced blocks of lang in the Markdown file that
// contain mark.
func codeBlocks(t *testing.T, file, lang, mark string) []string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var blocks []string
	var cur *strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case cur == nil && strings.TrimSpace(line) == "```"+lang:
			cur = &strings.Builder{}
		case cur != nil && strings.TrimSpace(line) == "```":
			if strings.Contains(cur.String(), mark) {
				blocks = append(blocks, cur.String())
			}
			cur = nil
		case cur != nil:
			cur.WriteString(line + "\n")
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return blocks
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
