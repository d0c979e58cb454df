package main

// Hostile input and misconfiguration: each test here replays one way an
// adversarial or careless user broke the command line, and fails without
// the fix that stops it.

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/drivers/x11"
	"github.com/kasmrt/kasmrt/engine/events"
)

// TestEmbeddedSessionIsTheDefault sets DISPLAY to a live X server, as every
// desktop terminal does, and checks that a run without --display starts its
// own Xvfb instead of launching the app on that server.
func TestEmbeddedSessionIsTheDefault(t *testing.T) {
	need(t, "Xvfb", "xterm")
	operatorDesktop, err := x11.StartSession(context.Background(), x11.SessionOptions{Width: 640, Height: 480})
	if err != nil {
		t.Fatalf("start the stand-in for the operator's desktop: %v", err)
	}
	t.Cleanup(func() { operatorDesktop.Close() })
	t.Setenv("DISPLAY", operatorDesktop.Display())
	t.Setenv("KASM_RUNTIME_DEADLINE_S", "60")
	path, dir := runScenarioFile(t, `name: embedded default
app:
  command: [xterm, -class, KasmEmbedded, -e, sh, -c, 'echo "$DISPLAY" > shown.txt; exec sleep 3600']
  window: {class: KasmEmbedded}
  startup_timeout_s: 10
steps:
  - observe_screen: {}
`)
	reportDir := filepath.Join(dir, "report")
	code, out, errs := kasmrt(t, "run", path, "--headless", "--report", reportDir)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	shown, err := os.ReadFile(filepath.Join(dir, "shown.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(shown)); got == operatorDesktop.Display() || got == "" {
		t.Errorf("the app ran on DISPLAY=%q; the operator's display is %s", got, operatorDesktop.Display())
	}
	var started *events.Event
	for _, e := range readEventsFile(t, reportDir) {
		if e.Kind == events.KindSessionStarted {
			started = &e
		}
	}
	if started == nil || started.Data["owned"] != true {
		t.Errorf("session.started %+v: want an owned (embedded) session", started)
	}
}

// TestHelpNamesRealFiles checks that every example path --help mentions
// exists and that it says which display a run uses.
func TestHelpNamesRealFiles(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--help"}, {"run", "--help"}} {
		code, out, errs := kasmrt(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		paths := regexp.MustCompile(`scenarios/examples/[\w.-]+`).FindAllString(out, -1)
		for _, p := range paths {
			if _, err := os.Stat(filepath.Join("../..", p)); err != nil {
				t.Errorf("%v names %s: %v", args, p, err)
			}
		}
		if !strings.Contains(out, "$DISPLAY") || !strings.Contains(out, "never") {
			t.Errorf("%v does not say that $DISPLAY alone is never used:\n%s", args, out)
		}
	}
}

// readEventsFile reads a report's events.jsonl.
func readEventsFile(t *testing.T, reportDir string) []events.Event {
	t.Helper()
	evs, err := events.ReadFile(filepath.Join(reportDir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// TestShellPlaceholderIsNotCode runs the injection from the hostile-input
// report: WHO='x; touch pwned' must never run touch. Written as ${WHO} in
// the command it is refused before anything launches; passed through the
// tool's env: a real declared tool prints it as data.
func TestShellPlaceholderIsNotCode(t *testing.T) {
	need(t, "Xvfb", "xterm")
	t.Setenv("WHO", "x; touch pwned")
	t.Setenv("KASM_RUNTIME_DEADLINE_S", "60")
	const app = `app:
  command: [xterm, -class, KasmInject, -e, sh, -c, 'exec sleep 3600']
  window: {class: KasmInject}
  startup_timeout_s: 10
steps:
  - observe_screen: {}
  - greet: {}
`
	t.Run("placeholder in the command", func(t *testing.T) {
		path, dir := runScenarioFile(t, "name: inject refused\n"+app+`tools:
  greet:
    run: shell
    command: echo hello ${WHO}
`)
		code, out, errs := kasmrt(t, "run", path, "--headless", "--report", filepath.Join(dir, "report"))
		if code != 3 {
			t.Errorf("exit %d, want 3\nstdout:\n%s\nstderr:\n%s", code, out, errs)
		}
		if !strings.Contains(errs, "scenario.yaml:12:14: tools.greet.command: ${WHO} in a run: shell command") {
			t.Errorf("stderr does not point at the placeholder:\n%s", errs)
		}
		if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
			t.Error("the value ran as a command")
		}
	})
	t.Run("placeholder in env", func(t *testing.T) {
		path, dir := runScenarioFile(t, "name: inject as data\n"+app+`tools:
  greet:
    run: shell
    env: {WHO: "${WHO}"}
    command: echo hello "$WHO"
`)
		code, out, errs := kasmrt(t, "run", path, "--headless", "--report", filepath.Join(dir, "report"))
		if code != 0 {
			t.Errorf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, out, errs)
		}
		if !strings.Contains(out, "greet succeeded: hello x; touch pwned") {
			t.Errorf("the tool did not print the value as data:\n%s", out)
		}
		if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
			t.Error("the value ran as a command")
		}
	})
}
