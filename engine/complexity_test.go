package engine

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/uudashr/gocognit"
)

// maxCognitiveComplexity bounds how hard any function of the engine is to
// follow: past it, a function mixes concerns that deserve names of their
// own (the agentic loop once scored 104). Tests are not bound.
const maxCognitiveComplexity = 40

// TestCognitiveComplexityBound fails when a non-test function anywhere
// under engine/ is more complex than maxCognitiveComplexity, as gocognit
// scores it.
func TestCognitiveComplexityBound(t *testing.T) {
	t.Parallel()
	over := overComplex(t, ".", maxCognitiveComplexity)
	for _, st := range over {
		t.Errorf("%s: %s has cognitive complexity %d (at most %d): split it into functions that each do one thing",
			st.Pos, st.FuncName, st.Complexity, maxCognitiveComplexity)
	}
}

// TestCognitiveComplexityBoundSees checks that the bound's walk finds the
// package's functions and scores them, so a walk that finds nothing cannot
// pass the bound by accident.
func TestCognitiveComplexityBoundSees(t *testing.T) {
	t.Parallel()
	over := overComplex(t, ".", 5)
	if len(over) == 0 {
		t.Fatal("no function under engine/ scores over 5: the walk saw nothing")
	}
	dirs := map[string]bool{}
	for _, st := range over {
		dirs[filepath.Dir(st.Pos.Filename)] = true
	}
	for _, want := range []string{".", "report", filepath.Join("report", "page"), "model"} {
		if !dirs[want] {
			t.Errorf("no function in %s scores over 5: the walk missed the directory (saw %v)", want, dirs)
		}
	}
}

// overComplex scores every function in the non-test Go files under root
// and returns those above limit.
func overComplex(t *testing.T, root string, limit int) []gocognit.Stat {
	t.Helper()
	var stats []gocognit.Stat
	walkSources(t, root, func(fset *token.FileSet, _ string, f *ast.File) {
		stats = gocognit.ComplexityStats(f, fset, stats)
	})
	var over []gocognit.Stat
	for _, st := range stats {
		if st.Complexity > limit {
			over = append(over, st)
		}
	}
	return over
}

// walkSources parses every non-test Go file under root, outside testdata,
// and hands it to visit with its path.
func walkSources(t *testing.T, root string, visit func(fset *token.FileSet, path string, f *ast.File)) {
	t.Helper()
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		visit(fset, path, f)
		return nil
	})
	if err != nil {
		t.Fatalf("walk the engine's sources: %v", err)
	}
}

// maxMethodsPerType bounds how many methods any type of the engine has:
// past it, a type holds parts of a run that deserve owners of their own
// (runState once had 200, on one receiver for every part of the run).
// Tests' types are not bound.
const maxMethodsPerType = 60

// TestMethodsPerTypeBound fails when a type anywhere under engine/ has
// more than maxMethodsPerType methods in its non-test files.
func TestMethodsPerTypeBound(t *testing.T) {
	t.Parallel()
	for typ, n := range methodsPerType(t, ".") {
		if n > maxMethodsPerType {
			t.Errorf("%s has %d methods (at most %d): give the parts it holds owned types of their own", typ, n, maxMethodsPerType)
		}
	}
}

// TestMethodsPerTypeBoundSees checks that the count finds the run's types
// and their methods, so a walk that finds nothing cannot pass the bound by
// accident.
func TestMethodsPerTypeBoundSees(t *testing.T) {
	t.Parallel()
	counts := methodsPerType(t, ".")
	for _, typ := range []string{"runState", "environment", "actor", "checker", "goalLoop", "modelState", "planner", filepath.Join("report", "Writer")} {
		if counts[typ] < 5 {
			t.Errorf("%s has %d methods by the count: the walk missed it (saw %v)", typ, counts[typ], counts)
		}
	}
}

// methodsPerType counts the methods declared in the non-test Go files
// under root by receiver type, named by the type's directory and name
// ("runState", "report/Writer").
func methodsPerType(t *testing.T, root string) map[string]int {
	t.Helper()
	counts := map[string]int{}
	walkSources(t, root, func(_ *token.FileSet, path string, f *ast.File) {
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || len(fd.Recv.List) == 0 {
				continue
			}
			typ := fd.Recv.List[0].Type
			if star, ok := typ.(*ast.StarExpr); ok {
				typ = star.X
			}
			if idx, ok := typ.(*ast.IndexExpr); ok { // a generic type's receiver
				typ = idx.X
			}
			if id, ok := typ.(*ast.Ident); ok {
				counts[filepath.Join(filepath.Dir(path), id.Name)]++
			}
		}
	})
	return counts
}
