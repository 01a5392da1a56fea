package admission

import (
	"go/ast"
	"go/parser"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"broll/internal/testkit/gosource"
)

// TestMarksStayBehindTheDoor: the marks (what a node may trust of its
// copies) are the admission's machinery; a package outside it that imported
// them would know a mark exists and could hold, read or trust one past the
// admission's interface.
func TestMarksStayBehindTheDoor(t *testing.T) {
	here, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	gosource.Walk(t, filepath.Join("..", ".."), parser.ImportsOnly,
		func(abs string) bool { return gosource.Within(abs, here) },
		func(path string, f *ast.File) {
			for _, imp := range f.Imports {
				p, err := strconv.Unquote(imp.Path.Value)
				if err != nil {
					t.Fatal(err)
				}
				if strings.HasPrefix(p, "broll/internal/admission/") {
					t.Errorf("%s imports %s: only the admission package uses its marks", path, p)
				}
			}
		})
}
