package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestChattyAppLogIsCapped runs an app that prints 8 MB before opening its
// window, with app.log capped at 100 kB in the operator file: app.log keeps
// the first and the last lines, says how much it left out, and stays
// within the cap.
func TestChattyAppLogIsCapped(t *testing.T) {
	t.Parallel()
	need(t, "Xvfb", "xterm")
	path, dir := runScenarioFile(t, `name: chatty app
app:
  command: [sh, -c, 'echo FIRST-LINE; yes "chatty log line" | head -c 8000000; echo LAST-LINE; exec xterm -class KasmChatty -e sleep 3600']
  window: {class: KasmChatty}
  startup_timeout_s: 10
steps:
  - observe_screen: {}
`)
	operator := filepath.Join(dir, "operator.yaml")
	if err := os.WriteFile(operator, []byte("runner:\n  app_log_max_bytes: 100000\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	reportDir := filepath.Join(dir, "report")
	code, out, errs := kasmrt(t, "run", path, "-o", operator, "--headless", "--display", "-", "--report", reportDir)
	if code != exitPass {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	b, err := os.ReadFile(filepath.Join(reportDir, "app.log"))
	if err != nil {
		t.Fatal(err)
	}
	log := string(b)
	if len(b) > 100000+200 || !strings.HasPrefix(log, "FIRST-LINE\n") || !strings.Contains(log, "LAST-LINE\n") ||
		!strings.Contains(log, "bytes left out; the last 50000 bytes follow]") {
		t.Errorf("app.log is %d bytes; head %q, tail %q", len(b), log[:min(len(log), 40)], log[max(0, len(log)-200):])
	}
}
