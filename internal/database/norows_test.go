package database

import (
	"go/ast"
	"go/parser"
	"path/filepath"
	"testing"

	"broll/internal/testkit/gosource"
)

// TestNoRowsReadInOnePlace: the driver's "no rows" sentinel is read by
// NoRows (and Interpret, which calls it) only. A package that tested
// pgx.ErrNoRows itself would be a second home of that rule (a driver
// change, or a wrapped error read differently, would reach it alone).
func TestNoRowsReadInOnePlace(t *testing.T) {
	here, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	gosource.Walk(t, filepath.Join("..", ".."), parser.SkipObjectResolution,
		func(abs string) bool { return filepath.Dir(abs) == here },
		func(path string, f *ast.File) {
			ast.Inspect(f, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "ErrNoRows" {
					if id, ok := sel.X.(*ast.Ident); ok && id.Name == "pgx" {
						t.Errorf("%s reads pgx.ErrNoRows: use database.NoRows or database.Interpret", path)
					}
				}
				return true
			})
		})
}
