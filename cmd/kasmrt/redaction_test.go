package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/report"
)

// TestSecretsThatLookLikeStructure runs a real scripted run whose secrets
// are a number the runtime also writes (the screen width 1280), a year in
// every timestamp (2026), one letter and JSON syntax, then replays it:
// events.jsonl and report.json stay valid JSON with their numbers and
// times intact, and replay --print reads the whole run and its verdict.
func TestSecretsThatLookLikeStructure(t *testing.T) {
	t.Parallel()
	need(t, "Xvfb", "xterm")
	env := []string{"KASM_SECRET_WIDTH=1280", "KASM_SECRET_YEAR=2026", "KASM_SECRET_LETTER=t", `KASM_SECRET_SYNTAX=":`}
	path, dir := runScenarioFile(t, `name: odd shapes`+runTestXterm+`provides:
  width: {secret: {env: KASM_SECRET_WIDTH}}
  year: {secret: {env: KASM_SECRET_YEAR}}
  letter: {secret: {env: KASM_SECRET_LETTER}}
  syntax: {secret: {env: KASM_SECRET_SYNTAX}}
steps:
  - observe_screen: {}
  - type_text: width
  - press_key: Return
  - wait: 0.5
`)
	reportDir := filepath.Join(dir, "report")
	code, stdout, stderr := kasmrtProcess(t, env, "run", path, "--headless", "--display", "-", "--report", reportDir)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	f, err := os.Open(filepath.Join(reportDir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		if !json.Valid(sc.Bytes()) {
			t.Errorf("events.jsonl line %d is not JSON: %s", n, sc.Bytes())
		}
	}
	raw, err := os.ReadFile(filepath.Join(reportDir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep report.Report
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatalf("report.json is not valid: %v\n%s", err, raw)
	}
	if rep.Verdict != "pass" || rep.Display.Width != 1280 || rep.Timing.Started.Year() != 2026 || len(rep.Steps) != 4 || rep.Schema != report.Schema {
		t.Errorf("report.json lost its structure: verdict %q, session %+v, started %v, %d steps", rep.Verdict, rep.Display, rep.Timing.Started, len(rep.Steps))
	}
	if got, err := os.ReadFile(filepath.Join(dir, "typed.txt")); err != nil || strings.TrimSpace(string(got)) != "1280" {
		t.Errorf("the app read %q (%v), want the secret", got, err)
	}
	code, out, errs := kasmrt(t, "replay", reportDir, "--print")
	if code != 0 || errs != "" {
		t.Fatalf("replay --print: exit %d\n%s\n%s", code, out, errs)
	}
	// The screen's size is the runtime's own number, not the secret's.
	wantIn(t, "the replay", out, []string{"session :", " 1280x800 owned=true", "verdict: pass (completed)", "step 4 wai[REDACTED] {\"seconds\":0.5} → OK"})
}
