package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/report"
)

// runSaveAsExample runs the bundled Save As example, unchanged, against
// Debian's mousepad, as its own process, and returns its report, the
// directory it saved in and the report directory.
func runSaveAsExample(t *testing.T) (report.Report, string, string) {
	t.Helper()
	demo := t.TempDir()
	out := filepath.Join(t.TempDir(), "report")
	cmd := exec.Command(kasmrtBinary(t), "run", "../../scenarios/examples/mousepad-save-as.yaml",
		"--headless", "--display", "-", "--report", out)
	cmd.Env = append(os.Environ(), "KASM_DEMO_DIR="+demo)
	if output, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, output)
	}
	rep, _ := readReport(t, out)
	return rep, demo, out
}

// TestSaveAsDialogExample saves a file through mousepad's Save As dialog,
// twice: the window manager gives the dialog the focus, the keys reach
// it, the file holds the typed line, and quitting with ctrl+q is the exit
// the scenario expects. Each run's mousepad keeps its recent files in a
// HOME of its own under the report directory, so the second run never
// sees the file the first one saved. Ten repeats give the same verdicts:
// go test -count=10 -run TestSaveAsDialogExample ./cmd/kasmrt/
func TestSaveAsDialogExample(t *testing.T) {
	t.Parallel()
	need(t, "Xvfb", "openbox", "mousepad", "dbus-daemon")
	firstRep, firstDemo, firstOut := runSaveAsExample(t)
	secondRep, secondDemo, secondOut := runSaveAsExample(t)
	for i, run := range []struct {
		rep  report.Report
		demo string
	}{{firstRep, firstDemo}, {secondRep, secondDemo}} {
		rep := run.rep
		if rep.Verdict != "pass" {
			t.Fatalf("run %d: verdict %s (%s): %v", i+1, rep.Verdict, rep.Outcome, rep.Reasons)
		}
		b, err := os.ReadFile(filepath.Join(run.demo, "greeting.txt"))
		if err != nil || strings.TrimSpace(string(b)) != "Saved through a dialog" {
			t.Errorf("run %d: greeting.txt = %q, %v", i+1, b, err)
		}
		var sawDialog bool
		for _, s := range rep.Steps {
			if s.Tool == "switch_window" && s.Status == "ok" && strings.Contains(s.Message, `"Save As"`) {
				sawDialog = true
			}
		}
		if !sawDialog {
			t.Errorf("run %d: no switch_window step reached the Save As dialog", i+1)
		}
		if c := rep.Checks.ExpectedExit; c == nil || !*c {
			t.Errorf("run %d: the expected_exit check did not pass: %v", i+1, rep.Checks.Evidence)
		}
	}
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
