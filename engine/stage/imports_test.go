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

// driverImporters are, for each desktop driver, the only non-test files
// outside it allowed to import it: the stage's adapter for that desktop,
// and the benchmark that measures a step of that desktop against another
// tool on a session of its own.
var driverImporters = []struct {
	driver, adapter string
	allowed         map[string]bool
}{
	{"drivers/x11", "engine/stage/x11.go", map[string]bool{
		"engine/stage/x11.go":          true,
		"scripts/benchcompare/main.go": true,
	}},
	{"drivers/wayland", "engine/stage/wayland.go", map[string]bool{
		"engine/stage/wayland.go":         true,
		"scripts/benchcompare/wayland.go": true,
	}},
}

// TestOnlyTheStageAdaptersImportTheirDrivers keeps the engine, the suite,
// the console and the servers desktop-neutral: they reach a desktop driver
// only through the stage, so each desktop is one adapter beside the
// others (x11.go, wayland.go), not a change to every room. Tests may still
// start a real Xvfb or compositor.
func TestOnlyTheStageAdaptersImportTheirDrivers(t *testing.T) {
	root := moduleRoot(t)
	const module = "github.com/kasmrt/kasmrt/"
	fset := token.NewFileSet()
	found := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			name := d.Name()
			if name == "testdata" || name == "node_modules" || rel != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
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
			p, _ := strconv.Unquote(imp.Path.Value)
			for _, d := range driverImporters {
				if p == module+d.driver && !strings.HasPrefix(rel, d.driver+"/") {
					found[d.driver] = append(found[d.driver], rel)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("read the module's imports: %v", err)
	}
	for _, d := range driverImporters {
		adapter := false
		for _, rel := range found[d.driver] {
			if rel == d.adapter {
				adapter = true
			}
			if !d.allowed[rel] {
				t.Errorf("%s imports %s: use the desktop contract (drivers/desktop) and the stage (engine/stage) instead; only the stage's adapter (%s) names the driver", rel, d.driver, d.adapter)
			}
		}
		if !adapter {
			t.Errorf("%s no longer imports %s: the check would pass for nothing; update driverImporters", d.adapter, d.driver)
		}
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
