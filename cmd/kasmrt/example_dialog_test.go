package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/report"
)

// runSaveAsExample runs the bundled Save As example, unchanged, against
// Debian's mousepad and returns its report and the directory it saved in.
func runSaveAsExample(t *testing.T) (report.Report, string, string) {
	t.Helper()
	need(t, "Xvfb", "openbox", "mousepad", "dbus-daemon")
	demo := t.TempDir()
	t.Setenv("KASM_DEMO_DIR", demo)
	out := filepath.Join(t.TempDir(), "report")
	code, stdout, stderr := kasmrt(t, "run", "../../scenarios/examples/mousepad-save-as.yaml",
		"--headless", "--display", "-", "--report", out)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	b, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep report.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	return rep, demo, out
}

// TestSaveAsDialogExample saves a file through mousepad's Save As dialog:
// the window manager gives the dialog the focus, the keys reach it, the
// file holds the typed line, and quitting with ctrl+q is the exit the
// scenario expects. Ten repeats give the same verdict:
// go test -count=10 -run TestSaveAsDialogExample ./cmd/kasmrt/
func TestSaveAsDialogExample(t *testing.T) {
	rep, demo, _ := runSaveAsExample(t)
	if rep.Verdict != "pass" {
		t.Fatalf("verdict %s (%s): %v", rep.Verdict, rep.Outcome, rep.Reasons)
	}
	b, err := os.ReadFile(filepath.Join(demo, "greeting.txt"))
	if err != nil || strings.TrimSpace(string(b)) != "Saved through a dialog" {
		t.Errorf("greeting.txt = %q, %v", b, err)
	}
	var sawDialog bool
	for _, s := range rep.Steps {
		if s.Tool == "switch_window" && s.Status == "ok" && strings.Contains(s.Message, `"Save As"`) {
			sawDialog = true
		}
	}
	if !sawDialog {
		t.Error("no switch_window step reached the Save As dialog")
	}
	if c := rep.Checks.ExpectedExit; c == nil || !*c {
		t.Errorf("the expected_exit check did not pass: %v", rep.Checks.Evidence)
	}
}

// TestRunsDoNotShareHome runs the Save As example twice: each run's
// mousepad keeps its recent files in a HOME of its own under the report
// directory, so the second run never sees the file the first one saved.
func TestRunsDoNotShareHome(t *testing.T) {
	_, firstDemo, firstOut := runSaveAsExample(t)
	_, secondDemo, secondOut := runSaveAsExample(t)
	recent := func(out string) string {
		b, err := os.ReadFile(filepath.Join(out, "home", ".local", "share", "recently-used.xbel"))
		if err != nil {
			t.Fatalf("the run's own recent files: %v", err)
		}
		return string(b)
	}
	first, second := recent(firstOut), recent(secondOut)
	if !strings.Contains(first, firstDemo) {
		t.Errorf("the first run's recent files do not list its own save:\n%s", first)
	}
	if !strings.Contains(second, secondDemo) || strings.Contains(second, firstDemo) {
		t.Errorf("the second run's recent files should list only its own save (%s), not the first run's (%s):\n%s",
			secondDemo, firstDemo, second)
	}
}
