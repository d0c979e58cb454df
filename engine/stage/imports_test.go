package stage

import (
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// x11Importers are the only non-test files outside drivers/x11 allowed to
// import it: the stage's X11 adapter, and the benchmark that measures an
// X11 step against another tool on a display of its own.
var x11Importers = map[string]bool{
	"engine/stage/x11.go":          true,
	"scripts/benchcompare/main.go": true,
}

// TestOnlyTheStageAdapterImportsX11 keeps the engine, the suite, the
// console and the servers desktop-neutral: they reach the X11 driver only
// through the stage, so a second desktop is a second adapter beside
// x11.go, not a change to every room. Tests may still start a real Xvfb.
func TestOnlyTheStageAdapterImportsX11(t *testing.T) {
	root := moduleRoot(t)
	const x11Path = "github.com/kasmrt/kasmrt/drivers/x11"
	fset := token.NewFileSet()
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			name := d.Name()
			if rel == "drivers/x11" || name == "testdata" || name == "node_modules" || rel != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		if ok, err := build.Default.MatchFile(filepath.Dir(path), d.Name()); err != nil || !ok {
			// A file no build of this platform compiles (a generator
			// behind "ignore") is not part of the runtime.
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == x11Path {
				found = append(found, rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("read the module's imports: %v", err)
	}
	adapter := false
	for _, rel := range found {
		if rel == "engine/stage/x11.go" {
			adapter = true
		}
		if !x11Importers[rel] {
			t.Errorf("%s imports drivers/x11: use the desktop contract (drivers/desktop) and the stage (engine/stage) instead; only the stage's X11 adapter (engine/stage/x11.go) names the driver", rel)
		}
	}
	if !adapter {
		t.Errorf("engine/stage/x11.go no longer imports drivers/x11: the check would pass for nothing; update x11Importers")
	}
}

// moduleRoot is the directory holding go.mod, above this package.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}
