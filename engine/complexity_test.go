package engine

import (
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
	fset := token.NewFileSet()
	var stats []gocognit.Stat
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
		stats = gocognit.ComplexityStats(f, fset, stats)
		return nil
	})
	if err != nil {
		t.Fatalf("walk the engine's sources: %v", err)
	}
	var over []gocognit.Stat
	for _, st := range stats {
		if st.Complexity > limit {
			over = append(over, st)
		}
	}
	return over
}
