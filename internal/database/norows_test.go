package database

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

// TestNoRowsReadInOnePlace: the driver's "no rows" sentinel is read by
// NoRows (and Interpret, which calls it) only. A package that tested
// pgx.ErrNoRows itself would be a second home of that rule (a driver
// change, or a wrapped error read differently, would reach it alone).
func TestNoRowsReadInOnePlace(t *testing.T) {
	root := filepath.Join("..", "..")
	here, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
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
		if filepath.Dir(abs) == here {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "ErrNoRows" {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == "pgx" {
					t.Errorf("%s reads pgx.ErrNoRows: use database.NoRows or database.Interpret", path)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked %d Go files; the walk did not reach the module", checked)
	}
}
