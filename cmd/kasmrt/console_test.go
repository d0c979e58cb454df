package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kasmrt/kasmrt/internal/testkit"
)

// TestLiveConsoleInTmux runs `kasmrt run --tui` in a real terminal: the
// engine's events reach the live console, and the operator's abort reaches
// the engine, which still writes a complete report.
func TestLiveConsoleInTmux(t *testing.T) {
	t.Parallel()
	need(t, "tmux", "Xvfb", "xterm")
	dir := t.TempDir()
	scenario := testkit.WriteFile(t, dir, "live.yaml", "name: live console\napp:\n  command: [xterm, -e, sleep, 3600]\nsteps:\n  - observe_screen: {}\n  - wait: 25\n  - observe_screen: {}\n")
	out := filepath.Join(dir, "report")
	term := testkit.StartTerminal(t, "live", 140, 40,
		"DISPLAY=", kasmrtBinary(t), "run", scenario, "--tui", "--graphics", "blocks", "--report", out)
	term.Screen("live console")
	term.Screen("1 observe_screen")
	term.Screen("2 wait")
	term.Keys("x")
	term.Screen("abort the run?")
	term.Keys("y")
	term.Screen("test-error (aborted)")
	term.Keys("q")
	testkit.Eventually(t, testkit.ScreenWait, "report.json after the console was closed", func() bool {
		_, err := os.Stat(filepath.Join(out, "report.json"))
		return err == nil
	})
	rep, _ := readReport(t, out)
	if rep.Verdict != "test-error" || rep.Outcome != "aborted" || len(rep.Steering) == 0 || rep.Steering[0].Action != "abort" {
		t.Errorf("report: verdict %s (%s), steering %+v", rep.Verdict, rep.Outcome, rep.Steering)
	}
}
