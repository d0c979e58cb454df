package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
)

// runScenarioFile writes a scenario into a fresh directory and returns its
// path and the directory.
func runScenarioFile(t *testing.T, yaml string) (path, dir string) {
	t.Helper()
	dir = t.TempDir()
	path = filepath.Join(dir, "scenario.yaml")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(yaml, "$DIR", dir)), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, dir
}

const runTestXterm = `
app:
  command: [xterm, -class, KasmCmd, -geometry, 60x10+0+0, -e, sh, -c, 'stty -echo; IFS= read -r pw; printf "%s\n" "$pw" > typed.txt; exec sleep 3600']
  window: {class: KasmCmd}
  startup_timeout_s: 10
`

// TestRunExitCodes runs `kasmrt run --headless` against real apps in an
// embedded Xvfb and checks the exit code, the headless output and the
// report directory for each verdict. Each case is its own process with
// the secret in its environment, so the cases run in parallel.
func TestRunExitCodes(t *testing.T) {
	t.Parallel()
	need(t, "Xvfb", "xterm")
	const secret = "hunter2-Secret!"
	env := []string{"KASM_CMD_TEST_SECRET=" + secret, "KASM_RUNTIME_DEADLINE_S=60"}
	tests := []struct {
		name     string
		scenario string
		code     int
		out      []string
	}{
		{"pass", `name: cmd pass` + runTestXterm + `provides:
  pw: {secret: {env: KASM_CMD_TEST_SECRET}}
steps:
  - observe_screen: {}
  - type_text: pw
  - press_key: Return
  - wait: 0.5
  - show: {}
tools:
  show:
    description: print what the app read
    run: shell
    command: cat typed.txt
`, 0, []string{`step 1 observe_screen {} → OK in `, `type_text {"ref":"pw"}`, `typed the secret value "pw" (15 characters)`, "show succeeded: [REDACTED]", "verdict: pass (completed)", "report: "}},
		{"app failed", `name: cmd app failed
app: {command: [sh, -c, 'echo "$KASM_CMD_TEST_SECRET"; exit 5']}
provides:
  pw: {secret: {env: KASM_CMD_TEST_SECRET}}
steps: [{observe_screen: {}}]
`, 1, []string{"verdict: app-failed (app-exited)", "exited with status 5"}},
		{"test error", `name: cmd test error` + runTestXterm + `wait_conditions:
  never_written: {file_missing: /nonexistent/kasmrt-marker, timeout_s: 0.5}
steps:
  - wait_while: never_written
`, 2, []string{"ERROR", "verdict: test-error (step-error)", "never_written still holds"}},
		{"no click_element", `name: cmd no click_element` + runTestXterm + `steps:
  - click_element: {name: OK}
`, 2, []string{"tools: click_element is not offered: the application did not connect to the accessibility bus",
			"→ MALFORMED", "verdict test-error (step-error)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path, dir := runScenarioFile(t, tt.scenario)
			reportDir := filepath.Join(dir, "report")
			code, out, errs := kasmrtProcess(t, env, "run", path, "--headless", "--display", "-", "--report", reportDir)
			if code != tt.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, out, errs)
			}
			wantIn(t, "stdout", out, tt.out)
			if strings.Contains(out+errs, secret) {
				t.Errorf("the secret was printed:\n%s\n%s", out, errs)
			}
			for _, name := range []string{"report.json", "events.jsonl", "app.log"} {
				b, err := os.ReadFile(filepath.Join(reportDir, name))
				if err != nil {
					t.Errorf("report: %v", err)
				}
				if strings.Contains(string(b), secret) {
					t.Errorf("%s contains the secret", name)
				}
			}
		})
	}
}

// TestRunJSON checks that --json prints every event as one JSON line, in
// order, from run.started to run.ended, and nothing else.
func TestRunJSON(t *testing.T) {
	t.Parallel()
	need(t, "Xvfb", "xterm")
	path, dir := runScenarioFile(t, `name: cmd json`+runTestXterm+`steps:
  - observe_screen: {}
  - press_key: ctrl+c
`)
	reportDir := filepath.Join(dir, "report")
	code, out, errs := kasmrt(t, "run", path, "--json", "--display", "-", "--report", reportDir)
	// ctrl+c ends the read in xterm's shell, so the app exits: app-failed.
	if code != 1 {
		t.Errorf("exit %d, want 1\nstderr:\n%s", code, errs)
	}
	var evs []events.Event
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e events.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("stdout line %d is not an event: %v\n%s", len(evs)+1, err, sc.Text())
		}
		if e.Seq != int64(len(evs)+1) {
			t.Errorf("line %d has seq %d", len(evs)+1, e.Seq)
		}
		evs = append(evs, e)
	}
	if len(evs) < 4 || evs[0].Kind != events.KindRunStarted || evs[len(evs)-1].Kind != events.KindRunEnded {
		t.Fatalf("%d events on stdout, want run.started ... run.ended:\n%s", len(evs), out)
	}
	var verdict *events.Decision
	for _, e := range evs {
		if e.Kind == events.KindVerdict {
			verdict = e.Verdict
		}
	}
	if verdict == nil || verdict.Verdict != events.VerdictAppFailed {
		t.Errorf("verdict %+v", verdict)
	}
	// The same stream is in the report.
	b, err := os.ReadFile(filepath.Join(reportDir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n != len(evs) {
		t.Errorf("events.jsonl has %d lines, stdout %d events", n, len(evs))
	}
}

// TestRunBadInput checks that bad input exits 3 before anything launches:
// the app (which would leave a file) never runs and no report directory
// is made.
func TestRunBadInput(t *testing.T) {
	t.Parallel()
	const app = `app: {command: [sh, -c, 'touch $DIR/launched']}
`
	tests := []struct {
		name     string
		scenario string
		flags    []string
		errs     string
	}{
		{"unknown key", "name: bad\n" + app + "steps: [{observe_screen: {}}]\ncolour: red\n", nil, "colour: unknown key"},
		{"unknown tool", "name: bad\n" + app + "steps: [{teleport: {}}]\n", nil, `unknown tool "teleport"`},
		{"missing secret", "name: bad\n" + app + "provides: {pw: {secret: {env: KASM_CMD_TEST_UNSET_VAR}}}\nsteps: [{type_text: pw}]\n", nil, "KASM_CMD_TEST_UNSET_VAR"},
		{"conflicting flags", "name: good\n" + app + "steps: [{observe_screen: {}}]\n", []string{"--tui", "--json"}, "cannot be combined"},
		{"unknown flag", "name: good\n" + app + "steps: [{observe_screen: {}}]\n", []string{"--bogus"}, "nknown flag"},
		{"missing operator file", "name: good\n" + app + "steps: [{observe_screen: {}}]\n", []string{"-o", "/nonexistent/operator.yaml"}, "operator.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path, dir := runScenarioFile(t, tt.scenario)
			reportDir := filepath.Join(dir, "report")
			args := append([]string{"run", path, "--headless", "--display", "-", "--report", reportDir}, tt.flags...)
			code, out, errs := kasmrt(t, args...)
			if code != 3 {
				t.Errorf("exit %d, want 3\nstdout:\n%s\nstderr:\n%s", code, out, errs)
			}
			if !strings.Contains(errs, tt.errs) {
				t.Errorf("stderr lacks %q:\n%s", tt.errs, errs)
			}
			if _, err := os.Stat(reportDir); !os.IsNotExist(err) {
				t.Errorf("a report directory was made (%v)", err)
			}
			if _, err := os.Stat(filepath.Join(dir, "launched")); !os.IsNotExist(err) {
				t.Errorf("the app was launched (%v)", err)
			}
		})
	}
}
