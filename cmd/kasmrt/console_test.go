package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/engine/report"
)

// TestLiveConsoleInTmux runs `kasmrt run --tui` in a real terminal: the
// engine's events reach the live console, and the operator's abort reaches
// the engine, which still writes a complete report.
func TestLiveConsoleInTmux(t *testing.T) {
	need(t, "tmux", "Xvfb", "xterm")
	dir := t.TempDir()
	bin := kasmrtBinary(t)
	scenario := filepath.Join(dir, "live.yaml")
	if err := os.WriteFile(scenario, []byte("name: live console\napp:\n  command: [xterm, -e, sleep, 3600]\nsteps:\n  - observe_screen: {}\n  - wait: 25\n  - observe_screen: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "report")
	socket := filepath.Join(dir, "tmux.sock")
	tmux := func(args ...string) (string, error) {
		b, err := exec.Command("tmux", append([]string{"-S", socket}, args...)...).CombinedOutput()
		return string(b), err
	}
	if o, err := tmux("new-session", "-d", "-x", "140", "-y", "40", "-s", "live",
		"env", "TERM=tmux-256color", "DISPLAY=", bin, "run", scenario, "--tui", "--graphics", "blocks", "--report", out); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, o)
	}
	t.Cleanup(func() { _, _ = tmux("kill-server") })
	screen := func(want string) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for {
			o, err := tmux("capture-pane", "-p", "-t", "live")
			if err == nil && strings.Contains(o, want) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the console never showed %q; last screen:\n%s", want, o)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	screen("live console")
	screen("1 observe_screen")
	screen("2 wait")
	for _, keys := range []string{"x", "y"} {
		if o, err := tmux("send-keys", "-t", "live", keys); err != nil {
			t.Fatalf("send-keys %s: %v\n%s", keys, err, o)
		}
		time.Sleep(200 * time.Millisecond)
	}
	screen("test-error (aborted)")
	if o, err := tmux("send-keys", "-t", "live", "q"); err != nil {
		t.Fatalf("send-keys q: %v\n%s", err, o)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(out, "report.json")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no report.json after the console was closed")
		}
		time.Sleep(100 * time.Millisecond)
	}
	b, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep report.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Verdict != "test-error" || rep.Outcome != "aborted" || len(rep.Steering) == 0 || rep.Steering[0].Action != "abort" {
		t.Errorf("report: verdict %s (%s), steering %+v", rep.Verdict, rep.Outcome, rep.Steering)
	}
}
