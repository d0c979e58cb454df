package main

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine"
)

// writeTree writes files (by slash path relative to root; a name ending in
// "/" is an empty directory) under root.
func writeTree(t *testing.T, root string, files []string) {
	t.Helper()
	for _, name := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		content := "kept\n"
		if filepath.Base(name) == engine.ManifestFile {
			content = `{"schema": "` + engine.ManifestSchema + `"}` + "\n"
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// listTree returns every path under root, relative and slash-separated,
// directories with a trailing "/".
func listTree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			rel += "/"
		}
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// aReport is what a run leaves in its report directory.
var aReport = []string{"events.jsonl", "report.json", "report.html", "app.log", engine.ManifestFile,
	"screens/0001.png", "screens/0002.png.tmp", "home/.config/app/settings.ini", ".report-123.json"}

// TestOverwriteDeletesOnlyWhatKasmrtWrote gives --overwrite directories
// that hold an events.jsonl among other people's files, or a report with
// something added: each is refused with exit 3 before anything is touched
// or launched, and nothing in it is deleted.
func TestOverwriteDeletesOnlyWhatKasmrtWrote(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		files []string
		errs  string
	}{
		{"a thesis beside an events.jsonl", []string{"events.jsonl", "thesis.tex", "photos/one.jpg"},
			"holds no kasmrt report (no readable manifest.json)"},
		{"a report with a file added", append([]string{"thesis.tex"}, aReport...),
			"holds files kasmrt did not write (thesis.tex)"},
		{"a report with a directory added", append([]string{"photos/one.jpg"}, aReport...),
			"holds files kasmrt did not write (photos/)"},
		{"a report with a file among its screens", append([]string{"screens/holiday.jpg"}, aReport...),
			"holds files kasmrt did not write (screens/)"},
		{"a manifest that is not kasmrt's", []string{"events.jsonl", "manifest.json.txt", "manifest.json/"},
			"holds no kasmrt report"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path, dir := runScenarioFile(t, "name: refused\napp: {command: [sh, -c, 'touch $DIR/launched']}\nsteps: [{observe_screen: {}}]\n")
			report := filepath.Join(t.TempDir(), "report")
			writeTree(t, report, tc.files)
			before := listTree(t, report)
			for _, sub := range []string{"validate", "run"} {
				code, out, errs := kasmrt(t, sub, path, "--report", report, "--overwrite", "--display", "-")
				if code != 3 || !strings.Contains(errs, tc.errs) {
					t.Errorf("%s: exit %d, want 3 and %q\nstdout:\n%s\nstderr:\n%s", sub, code, tc.errs, out, errs)
				}
			}
			if after := listTree(t, report); strings.Join(after, " ") != strings.Join(before, " ") {
				t.Errorf("the directory changed:\nbefore %v\nafter  %v", before, after)
			}
			if _, err := os.Stat(filepath.Join(dir, "launched")); err == nil {
				t.Error("the app was launched")
			}
		})
	}
}

// TestOverwriteRemovesAReport prepares --overwrite on a directory kasmrt
// wrote: every file of the earlier report is gone, the directory stays.
func TestOverwriteRemovesAReport(t *testing.T) {
	t.Parallel()
	report := filepath.Join(t.TempDir(), "report")
	writeTree(t, report, aReport)
	d, err := prepareReportDir(report, true)
	if err != nil {
		t.Fatal(err)
	}
	if d.created {
		t.Error("an existing directory counted as created")
	}
	if left := listTree(t, report); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}
