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

// domainDirs are the folders whose packages hold the services the root
// builds: the domain packages (with every package under them) and the
// internal packages the root builds a service of.
var domainDirs = []string{"tenancy", "billing", "catalog", "webhook", "embed",
	"internal/idempotency", "internal/seal", "internal/tasks", "internal/replica", "internal/admission", "internal/telemetry"}

// TestConstructorOptionsAreNamedForWhatTheyBuild holds every domain
// package to the one way a constructor takes its options (docs/architecture.md,
// "The composition root"): NewT(deps..., opts TOptions), the struct named
// for the type it builds and passed last. A struct of the package passed by value, or a
// parameter whose type is named like options (Options, Opts, Config,
// Settings, Limits, Params), is taken for an options struct.
func TestConstructorOptionsAreNamedForWhatTheyBuild(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	var found []string
	for _, dir := range domainDirs {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if d.Name() == "testdata" || (path != filepath.Join(root, dir) && strings.HasSuffix(d.Name(), "test")) {
					return filepath.SkipDir // fixtures and test kits
				}
				found = append(found, misnamedOptions(t, root, path)...)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(found) > 0 {
		t.Errorf("constructors that take their options another way than NewT(deps..., opts TOptions):\n%s",
			strings.Join(found, "\n"))
	}
}

// The check finds a misnamed or misplaced options struct, and only that.
func TestMisnamedOptionsAreFound(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := `package p

import "time"

type Service struct{}
type Gate struct{}
type Limiter struct{}
type Sessions struct{}
type Allow struct{ Hosts []string }
type ServiceOptions struct{}
type GateOptions struct{}
type Limits struct{}
type LimiterOptions struct{}

func New(s *Sessions, o ServiceOptions) *Service { return nil }
func NewGate(o GateOptions, s *Service) (*Gate, error) { return nil, nil }
func NewLimiter(prefix string, l Limits) *Limiter { return nil }
func NewSessions(s *Service, allow Allow) *Sessions { return nil }
func NewOther(s *Service, o *LimiterOptions) *Sessions { return nil }
func newHidden(o Limits) *Service { return nil }
func NewID() string { return "" }
func NewClock(now func() int, ttl time.Duration) *Gate { return nil }
func (s *Service) NewThing(o Limits) *Gate { return nil }
`
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	got := misnamedOptions(t, dir, dir)
	want := []string{"p.go:16: NewGate takes GateOptions before its last parameter",
		"p.go:17: NewLimiter takes Limits, not LimiterOptions",
		"p.go:18: NewSessions takes Allow, not SessionsOptions",
		"p.go:19: NewOther takes LimiterOptions, not SessionsOptions",
		"p.go:22: NewClock takes a setting (func) outside its options"}
	if !slices.Equal(got, want) {
		t.Fatalf("found\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// misnamedOptions lists the exported constructors (New...) of the package
// in dir that take a setting as an argument, or whose options struct is
// not TOptions, T the type they return, or is not their last parameter.
func misnamedOptions(t *testing.T, root, dir string) []string {
	t.Helper()
	fset, files := parseDir(t, dir)
	structs := structTypes(files)
	var out []string
	for _, f := range files {
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Recv != nil || !fd.Name.IsExported() || !strings.HasPrefix(fd.Name.Name, "New") ||
				fd.Type.Results == nil {
				continue
			}
			rel, _ := filepath.Rel(root, fset.Position(fd.Pos()).Filename)
			where := filepath.ToSlash(rel) + ":" + strconv.Itoa(fset.Position(fd.Pos()).Line) + ": " + fd.Name.Name
			exempt := slices.Contains(positionalSettings, fd.Name.Name+" of "+filepath.Base(dir))
			out = append(out, constructorFaults(fd, structs, exempt, where)...)
		}
	}
	return out
}

// constructorFaults are what is wrong with how fd takes its options;
// structs are its package's struct types.
func constructorFaults(fd *ast.FuncDecl, structs map[string]bool, exempt bool, where string) []string {
	built := typeName(fd.Type.Results.List[0].Type)
	var params []ast.Expr
	for _, p := range fd.Type.Params.List {
		for range max(len(p.Names), 1) {
			params = append(params, p.Type)
		}
	}
	var out []string
	for _, p := range params {
		if setting(p) && !exempt {
			out = append(out, where+" takes a setting ("+exprString(p)+") outside its options")
			break
		}
	}
	for i, p := range params {
		name := typeName(p)
		_, byValue := p.(*ast.Ident)
		if !(byValue && structs[name]) && !looksLikeOptions(name) {
			continue
		}
		switch {
		case name != built+"Options":
			out = append(out, where+" takes "+name+", not "+built+"Options")
		case i != len(params)-1:
			out = append(out, where+" takes "+name+" before its last parameter")
		}
	}
	return out
}

// parseDir parses the production files of the package in dir.
func parseDir(t *testing.T, dir string) (*token.FileSet, []*ast.File) {
	t.Helper()
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return fset, files
}

// structTypes are the struct types the files declare.
func structTypes(files []*ast.File) map[string]bool {
	structs := map[string]bool{}
	for _, f := range files {
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, spec := range gd.Specs {
				if ts := spec.(*ast.TypeSpec); ts.Assign == 0 {
					if _, ok := ts.Type.(*ast.StructType); ok {
						structs[ts.Name.Name] = true
					}
				}
			}
		}
	}
	return structs
}

// typeName is the name of a type expression without its pointer and
// package: *tenancy.Service is Service.
func typeName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return typeName(x.X)
	case *ast.SelectorExpr:
		return x.Sel.Name
	case *ast.Ident:
		return x.Name
	}
	return ""
}

// setting reports whether a parameter's type is a setting's rather than
// a dependency's: a number, a flag, a duration, a function (a hook or a
// clock) or a logger.
func setting(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.FuncType:
		return true
	case *ast.Ident:
		return slices.Contains([]string{"int", "int64", "int32", "uint", "float64", "bool"}, x.Name)
	case *ast.SelectorExpr:
		return exprString(x) == "time.Duration"
	case *ast.StarExpr:
		return exprString(x) == "*slog.Logger"
	}
	return false
}

// positionalSettings are the constructors (name of package) still taking
// settings as arguments.
var positionalSettings = []string{}

func exprString(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return "*" + exprString(x.X)
	case *ast.SelectorExpr:
		return exprString(x.X) + "." + x.Sel.Name
	case *ast.Ident:
		return x.Name
	case *ast.FuncType:
		return "func"
	}
	return "?"
}

func looksLikeOptions(name string) bool {
	for _, s := range []string{"Options", "Opts", "Config", "Settings", "Limits", "Params"} {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}
