// Package gosource walks the module's Go files for the tests that hold a
// rule to one home by reading the source (who may import a package, who
// may read a sentinel). It imports nothing of the module, so that any
// package's own tests can use it.
package gosource

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Walk parses with mode every Go file of the module whose root is root,
// except the generated clients and the folders of tools, and calls visit
// with each file's path and syntax, skipping the files skip reports (given
// their absolute path). It fails t if the walk reached fewer than 100
// files: a test that read nothing would pass.
func Walk(t *testing.T, root string, mode parser.Mode, skip func(abs string) bool, visit func(path string, f *ast.File)) {
	t.Helper()
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", ".stack", "node_modules", "clients":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		abs, err := filepath.Abs(path)
		if err != nil {
			return err
		}
		if skip != nil && skip(abs) {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, src, mode)
		if err != nil {
			return err
		}
		checked++
		visit(path, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked %d Go files: the walk did not reach the module", checked)
	}
}

// Within reports whether abs is dir or inside it.
func Within(abs, dir string) bool {
	return abs == dir || strings.HasPrefix(abs, dir+string(filepath.Separator))
}
