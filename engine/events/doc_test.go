package events

import (
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The checks that keep docs/architecture.md true live here, beside the
// event table's, since they read files rather than the package's code.

// TestArchitectureEventTable keeps the event table of docs/architecture.md
// ("The event stream") and the Kind constants of this package together: a
// kind added without its row, or a row left for a kind that is gone,
// fails. The constants are read from the package's source, so a new one
// needs no list to be kept by hand.
func TestArchitectureEventTable(t *testing.T) {
	t.Parallel()
	consts := kindConstants(t)
	rows := documentedKinds(t, filepath.Join("..", "..", "docs", "architecture.md"))
	for _, k := range consts {
		if !slices.Contains(rows, k) {
			t.Errorf("kind %q has no row in docs/architecture.md's event table", k)
		}
	}
	for _, k := range rows {
		if !slices.Contains(consts, k) {
			t.Errorf("docs/architecture.md's event table lists %q, which is no Kind constant of engine/events", k)
		}
	}
}

// kindConstants returns the values of the package's constants of type
// Kind, read from its non-test files (kindNames).
func kindConstants(t *testing.T) []string {
	t.Helper()
	return slices.Sorted(maps.Values(kindNames(t)))
}

// documentedKinds returns the kinds named in the first column of the
// table under path's "## The event stream" heading.
func documentedKinds(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## The event stream\n")
	if !ok {
		t.Fatalf("%s has no \"## The event stream\" section", path)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	code := regexp.MustCompile("`([^`]+)`")
	var kinds []string
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if !strings.HasPrefix(line, "| `") || len(cells) < 3 {
			continue
		}
		for _, m := range code.FindAllStringSubmatch(cells[1], -1) {
			kinds = append(kinds, m[1])
		}
	}
	if len(kinds) == 0 {
		t.Fatalf("%s: no table rows under \"## The event stream\"", path)
	}
	return kinds
}

// TestArchitecturePackageMap keeps docs/architecture.md's package map ("The
// rooms") complete: every directory of the module that holds Go files
// has its line, and every line names a directory that exists. It walks
// the tree rather than asking go list, so it needs no go command.
func TestArchitecturePackageMap(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	mapped := packageMap(t, filepath.Join(root, "docs", "architecture.md"))
	var missing []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		// Another module below this one (make mutate-stage's snapshot of
		// the tree under reports/) is not this module's package.
		if d.IsDir() && path != root {
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir
			}
		}
		if d.IsDir() || !strings.HasSuffix(name, ".go") {
			return nil
		}
		dir, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		dir = filepath.ToSlash(dir)
		if !slices.Contains(mapped, dir) && !slices.Contains(missing, dir) {
			missing = append(missing, dir)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range missing {
		t.Errorf("package %s has no line in docs/architecture.md's package map", dir)
	}
	for _, dir := range mapped {
		if st, err := os.Stat(filepath.Join(root, dir)); err != nil || !st.IsDir() {
			t.Errorf("docs/architecture.md's package map names %s/, which is no directory", dir)
		}
	}
}

// packageMap returns the directories the code block under path's
// "## The rooms" heading names: a line's first word ends in a slash, and
// two spaces of indentation put it below the line above it with less.
func packageMap(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## The rooms\n")
	if !ok {
		t.Fatalf("%s has no \"## The rooms\" section", path)
	}
	_, block, _ := strings.Cut(section, "```\n")
	block, _, _ = strings.Cut(block, "```")
	var dirs, parents []string
	for _, line := range strings.Split(block, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || !strings.HasSuffix(fields[0], "/") {
			continue
		}
		depth := (len(line) - len(strings.TrimLeft(line, " "))) / 2
		if depth > len(parents) {
			t.Fatalf("%s: %q is indented below no line", path, line)
		}
		parents = append(parents[:depth], strings.TrimSuffix(fields[0], "/"))
		dirs = append(dirs, strings.Join(parents, "/"))
	}
	if len(dirs) < 10 {
		t.Fatalf("%s: only %d directories in the package map (%v): the reading is broken", path, len(dirs), dirs)
	}
	return dirs
}
