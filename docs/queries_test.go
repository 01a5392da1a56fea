package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// statement is how a string literal that is a whole SQL statement begins.
var statement = regexp.MustCompile(`(?s)^\s*(SELECT\s|INSERT\s+INTO\s|UPDATE\s+\w+\s+SET\s|DELETE\s+FROM\s|WITH\s+(RECURSIVE\s+)?\w+\s+AS\s*\()`)

// notYet are the folders the rule of architecture.md ("Where SQL lives")
// does not reach: programs and test kits that are no part of the service,
// and the generated client.
var notYet = []string{"clients", "deploy", "internal/testkit", "billing/billingtest", "catalog/catalogtest"}

// builders are the files that put a statement together per request: the
// one search builder (its keyword walk included).
var builders = []string{"catalog/search/sql.go", "catalog/search/keyword.go"}

// TestSQLLivesInQueries: outside the folders in notYet, no production Go
// file but a package's queries.go holds an SQL statement, so that what a
// package sends Postgres is read in one file and an adapter holds none.
func TestSQLLivesInQueries(t *testing.T) {
	root := ".."
	scanned := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			for _, n := range notYet {
				if rel == n {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || d.Name() == "queries.go" || slices.Contains(builders, rel) {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		scanned++
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err == nil && statement.MatchString(s) {
				first, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
				t.Errorf("%s: SQL outside queries.go: %q", rel, first)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if scanned < 50 {
		t.Fatalf("only %d Go files scanned: is the walk starting at the repository's root?", scanned)
	}
}
