package wiring_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// constructors are the services' constructors (by import path) that only
// the composition root calls; depguard cannot see calls, so this test
// keeps them there.
var constructors = map[string][]string{
	"broll/tenancy":              {"New", "NewAuthenticator", "NewUsage", "NewSessions", "NewKeyChanges"},
	"broll/billing":              {"New", "NewSigner", "NewDownloadLimiter"},
	"broll/billing/license":      {"New", "NewStamper", "NewLookupLimiter", "NewKeyring", "LoadFonts"},
	"broll/catalog":              {"NewService"},
	"broll/collections":          {"New"},
	"broll/catalog/media":        {"Open", "NewUploads"},
	"broll/catalog/mediajobs":    {"New"},
	"broll/catalog/imports":      {"New"},
	"broll/catalog/search":       {"New", "NewService"},
	"broll/webhook":              {"New", "NewDeliverer"},
	"broll/embed":                {"Select", "NewCachedQueryEmbedder"},
	"broll/internal/idempotency": {"New"},
	"broll/internal/seal":        {"New"},
	"broll/internal/tasks":       {"NewAsynqQueue"},
	"broll/internal/replica":     {"New"},
	"broll/internal/admission":   {"NewGate"},
	"broll/internal/telemetry":   {"NewProvider"},
}

// TestServicesAreBuiltOnlyByTheRoot: outside package wiring, a service's
// constructor is called only by the tests of its own package, and by the
// in-package tests (and test kits, such as catalog/catalogtest, which
// those tests import) of the packages the root imports, which cannot
// import the root back (Go refuses the cycle). Everything else, the
// binaries, the adapters, test set-ups and benchmarks included, takes its
// services from a graph.
func TestServicesAreBuiltOnlyByTheRoot(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	underRoot := rootImports(t, root)
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata" ||
				fileExists(filepath.Join(path, "go.mod"))) {
				return filepath.SkipDir // hidden folders, fixtures, other modules (clients/go)
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || filepath.Dir(rel) == "wiring" {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, c := range constructorCalls(t, rel, src) {
			dir := strings.TrimPrefix(c.pkg, "broll/")
			test := strings.HasSuffix(rel, "_test.go")
			switch {
			case test && filepath.Dir(rel) == dir: // the package's own tests
			case test && !strings.HasSuffix(c.file.Name.Name, "_test") && underRoot["broll/"+filepath.Dir(rel)]:
				// An in-package test of a package the root imports.
			case strings.HasSuffix(filepath.Dir(rel), "test") && underRoot["broll/"+filepath.Dir(filepath.Dir(rel))]:
				// A test kit of a package the root imports.
			default:
				found = append(found, c.where)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) > 0 {
		t.Errorf("services built outside the composition root (package wiring); take them from the root "+
			"(wiring.Open, wiringtest.Open, wiringtest.Over):\n%s", strings.Join(found, "\n"))
	}
}

// The check finds what it looks for, whatever the import is called, and
// only that.
func TestConstructorCallsAreFound(t *testing.T) {
	t.Parallel()
	src := `package p

import (
	ten "broll/tenancy"
	"broll/billing"
	"broll/internal/seal"
)

var hook = ten.NewKeyChanges

func f() {
	_ = ten.New(nil, ten.ServiceOptions{})
	_ = billing.New(nil, billing.ServiceOptions{})
	_, _ = seal.New("k", "")
	_ = billing.DownloadPath
	_ = ten.RootScopes()
}
`
	var got []string
	for _, c := range constructorCalls(t, "p/p.go", []byte(src)) {
		got = append(got, c.where)
	}
	want := []string{"p/p.go:9: broll/tenancy.NewKeyChanges", "p/p.go:12: broll/tenancy.New",
		"p/p.go:13: broll/billing.New", "p/p.go:14: broll/internal/seal.New"}
	if !slices.Equal(got, want) {
		t.Fatalf("found %q, want %q", got, want)
	}
}

type constructorCall struct {
	file  *ast.File
	pkg   string
	where string
}

// constructorCalls lists every reference to a watched constructor in src
// (a call or a function value).
func constructorCalls(t *testing.T, name string, src []byte) []constructorCall {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	imported := map[string]string{} // local name -> watched import path
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if _, ok := constructors[path]; !ok {
			continue
		}
		local := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			local = imp.Name.Name
		}
		imported[local] = path
	}
	var out []constructorCall
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		id, ok := sel.X.(*ast.Ident)
		if !ok {
			return true
		}
		if path, ok := imported[id.Name]; ok && slices.Contains(constructors[path], sel.Sel.Name) {
			out = append(out, constructorCall{file: f, pkg: path,
				where: name + ":" + strconv.Itoa(fset.Position(sel.Pos()).Line) + ": " + path + "." + sel.Sel.Name})
		}
		return true
	})
	return out
}

// rootImports are the module's packages that package wiring imports,
// directly or not (their production files).
func rootImports(t *testing.T, root string) map[string]bool {
	t.Helper()
	seen := map[string]bool{}
	var visit func(pkg string)
	visit = func(pkg string) {
		if seen[pkg] {
			return
		}
		seen[pkg] = true
		dir := filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(pkg, "broll/")))
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, e.Name()), nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				if path, _ := strconv.Unquote(imp.Path.Value); strings.HasPrefix(path, "broll/") {
					visit(path)
				}
			}
		}
	}
	visit("broll/wiring")
	return seen
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err != nil || !strings.HasPrefix(string(b), "module broll\n") {
		t.Fatalf("the module root is not %s: %v", dir, err)
	}
	return dir
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// TestTheRootsConstructorsAreWatched: every service constructor the root
// calls (a function of a package of the module named New..., Open, Load...
// or Select) is on the list TestServicesAreBuiltOnlyByTheRoot watches, so
// that a service added to the root cannot be built elsewhere unnoticed.
func TestTheRootsConstructorsAreWatched(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(moduleRoot(t), "wiring", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		imported := map[string]string{} // local name -> import path in the module
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if !strings.HasPrefix(path, "broll/") {
				continue
			}
			local := path[strings.LastIndex(path, "/")+1:]
			if imp.Name != nil {
				local = imp.Name.Name
			}
			imported[local] = path
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			id, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			path, ok := imported[id.Name]
			fn := sel.Sel.Name
			if ok && (strings.HasPrefix(fn, "New") || fn == "Open" || strings.HasPrefix(fn, "Load") || fn == "Select") &&
				!slices.Contains(constructors[path], fn) && !slices.Contains(plumbing, path+"."+fn) {
				missing = append(missing, filepath.Base(name)+": "+path+"."+fn)
			}
			return true
		})
	}
	if len(missing) > 0 {
		t.Errorf("constructors the root calls that the list of constructors lacks (add them to constructors):\n%s",
			strings.Join(missing, "\n"))
	}
}

// plumbing are the functions the root calls that build no service: the
// pool, the Redis client, the logger and the metrics registry are opened
// by anyone who needs one (tests open their own).
var plumbing = []string{"broll/internal/database.Open", "broll/internal/redisx.Open", "broll/internal/logging.New",
	"broll/internal/metrics.NewRegistry"}
