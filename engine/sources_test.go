package engine

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEventSourcesAreConstants fails when a non-test file of the engine
// spells a call's or an event's source as a string ("model") rather than
// one of the events.Source constants: as a Source field's value, compared
// with a source, or converted to one. A misspelled string would be a
// source no consumer knows, and the compiler could not say so.
func TestEventSourcesAreConstants(t *testing.T) {
	t.Parallel()
	for _, at := range sourceLiterals(t, ".") {
		t.Errorf("%s: a source spelled as a string; use the events.Source constants", at)
	}
}

// TestEventSourcesAreConstantsSees checks that the search finds a source
// spelled as a string in each of the three places it looks.
func TestEventSourcesAreConstantsSees(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := `package engine

import "github.com/kasmrt/kasmrt/engine/events"

func planted(c call) bool {
	_ = call{Tool: "wait", Source: "model"}
	_ = events.Source("cache")
	return c.Source == "script"
}
`
	if err := os.WriteFile(filepath.Join(dir, "planted.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := sourceLiterals(t, dir); len(got) != 3 {
		t.Errorf("found %d planted string sources %v, want 3", len(got), got)
	}
}

// sourceLiterals returns where the non-test Go files in dir spell a source
// as a non-empty string literal.
func sourceLiterals(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var at []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("parse %s: %v", name, err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var lit ast.Expr
			switch x := n.(type) {
			case *ast.KeyValueExpr:
				if id, ok := x.Key.(*ast.Ident); ok && id.Name == "Source" {
					lit = x.Value
				}
			case *ast.BinaryExpr:
				if x.Op == token.EQL || x.Op == token.NEQ {
					if namesSource(x.X) {
						lit = x.Y
					} else if namesSource(x.Y) {
						lit = x.X
					}
				}
			case *ast.CallExpr:
				if sel, ok := x.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Source" && len(x.Args) == 1 {
					lit = x.Args[0]
				}
			}
			if bl, ok := lit.(*ast.BasicLit); ok && bl.Kind == token.STRING && bl.Value != `""` {
				at = append(at, fset.Position(bl.Pos()).String())
			}
			return true
		})
	}
	return at
}

// namesSource reports whether e reads a source: a Source field or a
// variable named source.
func namesSource(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.SelectorExpr:
		return x.Sel.Name == "Source"
	case *ast.Ident:
		return x.Name == "source"
	}
	return false
}
