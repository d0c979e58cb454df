package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
)

// TestRelativeReportGivesAbsoluteHome runs with a relative report
// directory, as `--report out/` gives it, and an app.dir elsewhere: the
// app and its tools start in app.dir, and their HOME is still the run's
// home inside the report directory, named by an absolute path, so nothing
// the app writes lands beside the scenario.
func TestRelativeReportGivesAbsoluteHome(t *testing.T) {
	t.Parallel()
	scriptNeed(t, "xterm", "openbox", "dbus-daemon")
	appDir := t.TempDir()
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	reportDir, err := filepath.Rel(cwd, filepath.Join(t.TempDir(), "out"))
	if err != nil || filepath.IsAbs(reportDir) {
		t.Fatalf("no relative path to a temporary report directory (%q, %v)", reportDir, err)
	}
	scenario := `name: relative report
app:
  command: [xterm, -class, KasmHome]
  dir: ` + appDir + `
  window: {class: KasmHome}
tools:
  tell_home:
    run: shell
    command: 'echo "$HOME" > home.txt'
steps:
  - tell_home: {}
`
	o := scriptRun(t, scriptRunSpec{scenario: scenario, reportDir: reportDir})
	o.want(t, events.VerdictPass, OutcomeCompleted)
	b, err := os.ReadFile(filepath.Join(appDir, "home.txt"))
	if err != nil {
		t.Fatalf("the tool's report of its HOME: %v", err)
	}
	want, _ := filepath.Abs(filepath.Join(reportDir, "home"))
	if got := strings.TrimSpace(string(b)); got != want {
		t.Errorf("HOME = %q, want %q (absolute, inside the report directory)", got, want)
	}
	if entries, _ := os.ReadDir(appDir); len(entries) != 1 {
		t.Errorf("app.dir holds %d entries, want only home.txt: the run wrote beside the scenario", len(entries))
	}
}
