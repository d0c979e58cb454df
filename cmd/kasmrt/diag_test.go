package main

import (
	"path/filepath"
	"testing"
)

// TestRunWrongWindowClass checks that a scenario whose app.window names a
// class the application does not have ends as test-error (exit 2), and that
// the headless output lists the window that did appear with a matcher to
// use instead. The bound leaves a loaded machine time to map xterm's
// window: one that is not mapped yet when the bound passes is a startup
// timeout, not a wrong class.
func TestRunWrongWindowClass(t *testing.T) {
	t.Parallel()
	need(t, "Xvfb", "xterm")
	path, dir := runScenarioFile(t, `name: cmd wrong class
app:
  command: [xterm, -class, KasmRight, -title, the right one, -e, sleep, "3600"]
  window: {class: KasmWrong}
  startup_timeout_s: 8
steps: [{observe_screen: {}}]
`)
	code, out, errs := kasmrt(t, "run", path, "--headless", "--display", "-", "--report", filepath.Join(dir, "report"))
	if code != 2 {
		t.Errorf("exit %d, want 2\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	wantIn(t, "stdout", out, []string{"verdict: test-error (window-unmatched)", `"the right one" (class "KasmRight"`, "try app.window: {class: KasmRight}"})
}
