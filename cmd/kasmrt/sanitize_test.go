package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/model/modeltest"
)

// hostileSeq is what a hostile source writes: a window title change, a
// screen clear, a C1 CSI and reversed text.
const hostileSeq = "\x1b]0;pwned\x07\x1b[2J\u009b31m\u202eliaf"

// rawControls fails the test if out holds a control sequence raw.
func rawControls(t *testing.T, where, out string) {
	t.Helper()
	for _, raw := range []string{"\x1b", "\x07", "\x7f", "\u009b", "\u202e"} {
		if strings.Contains(out, raw) {
			t.Errorf("%s: %q reached the terminal raw:\n%q", where, raw, out)
		}
	}
}

// TestHeadlessNeutralisesHostileText runs a goal run --headless against
// a real xterm in Xvfb whose every untrusted source carries a control
// sequence — a model error body, a tool name from the model, an ask_human
// question, a declared tool's output and an application line matched by
// a fatal pattern — and checks that the terminal gets none of them raw.
func TestHeadlessNeutralisesHostileText(t *testing.T) {
	t.Parallel()
	need(t, "Xvfb", "xterm")
	hostileJSON, _ := json.Marshal(hostileSeq)
	body, _ := json.Marshal(map[string]any{"error": map[string]any{"message": "overloaded " + hostileSeq}})
	srv := modeltest.New(t,
		modeltest.StatusBody(500, string(body)),
		modeltest.Call("clik"+hostileSeq, `{}`),
		modeltest.Call("ask_human", `{"question": `+string(hostileJSON)+`}`),
		modeltest.Call("show", `{}`),
		// show makes the app print its fatal line; the wait sees it.
		modeltest.Call("wait", `{"seconds": 3}`),
		modeltest.Call("record_verdict", `{"verdict": "goal-met", "reason": "done"}`),
	)
	path, dir := runScenarioFile(t, `name: hostile text
app:
  command: [sh, -c, 'xterm -class KasmCmd -geometry 60x10+0+0 -e sleep 3600 & while [ ! -e $DIR/trigger ]; do sleep 0.1; done; printf "\033]0;pwned\007 Segmentation fault\n" >&2; wait']
  window: {class: KasmCmd}
  startup_timeout_s: 10
  fatal_patterns: [Segmentation fault]
goal: Show the text.
tools:
  show:
    description: print the text
    run: shell
    command: touch $DIR/trigger; printf '\033]0;pwned\007\033[2J'
`)
	op := filepath.Join(dir, "operator.yaml")
	if err := os.WriteFile(op, []byte("model:\n  retry: 0\n  disable_after: 3\ninbox:\n  session_token: local-console\n  answer_timeout_s: 0.3\nsession: {width: 640, height: 400}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := kasmrtProcess(t, []string{"KASM_RUNTIME_VISION_ENDPOINT=" + srv.URL()}, "run", path, "-o", op, "--headless", "--display", "-", "--report", filepath.Join(dir, "report"))
	if code != exitAppFailed {
		t.Errorf("exit %d, want 1 (the fatal pattern)\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	wantIn(t, "stdout", stdout, []string{"model failed", "MALFORMED", "QUESTION", "show succeeded", "check fatal_pattern ok=false", "pwned"})
	rawControls(t, "stdout", stdout)
	rawControls(t, "stderr", stderr)
}

// TestReplayPrintNeutralisesHostileText: replay --print of a report whose
// events carry control sequences, and whose damaged line quotes one,
// prints none of them raw, on stdout or in its warning.
func TestReplayPrintNeutralisesHostileText(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var lines []string
	for _, e := range []events.Event{
		{Seq: 1, Kind: events.KindRunStarted, Data: events.RunStarted{Scenario: hostileSeq, Mode: "goal", Goal: hostileSeq}},
		{Seq: 2, Kind: events.KindStepEnded, Step: 1, Tool: hostileSeq, Status: events.StatusMalformed, Message: hostileSeq},
		{Seq: 3, Kind: events.KindQuestion, Question: &events.Question{ID: "q1", Text: hostileSeq}},
		{Seq: 4, Kind: events.KindModelFailed, Message: hostileSeq, Data: events.ModelFailed{Consecutive: 1}},
		{Seq: 5, Kind: events.KindCheck, Check: &events.Check{Name: "fatal_pattern", Evidence: hostileSeq}},
		{Seq: 6, Kind: events.KindVerdict, Verdict: &events.Decision{Verdict: "app-failed", Outcome: "completed", Reasons: []string{hostileSeq}}},
	} {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	lines = append(lines[:3], append([]string{"{\"kind\":\"\u202e" + hostileSeq}, lines[3:]...)...)
	if err := os.WriteFile(filepath.Join(dir, "events.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := kasmrt(t, "replay", dir, "--print")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "line 4 is not an event") || !strings.Contains(stdout, "verdict: app-failed") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	rawControls(t, "stdout", stdout)
	rawControls(t, "stderr", stderr)
}

// TestValidateNeutralisesHostileText: validate's tool list quotes the
// scenario's parameter values, and a run's error message quotes the
// --report path; neither reaches the terminal raw.
func TestValidateNeutralisesHostileText(t *testing.T) {
	t.Parallel()
	path, _ := runScenarioFile(t, `name: hostile values
app: {command: [xterm]}
steps: [{observe_screen: {}}]
tools:
  greet:
    run: shell
    parameters:
      who: {values: {"\e]0;pwned\a\e[2Jbob": "echo hi"}}
`)
	code, stdout, stderr := kasmrt(t, "validate", path)
	if code != 0 || !strings.Contains(stdout, "pwned") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	rawControls(t, "tool list", stdout+stderr)

	// /proc refuses new directories: the run is refused before it begins.
	code, stdout, stderr = kasmrt(t, "run", path, "--headless", "--report", "/proc/"+hostileSeq+"/report")
	if code != exitBadInput || !strings.Contains(stderr, "pwned") {
		t.Errorf("exit %d, want 3 naming the directory\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	rawControls(t, "run error", stdout+stderr)
}

// TestJSONSinkNeutralisesHostileText: --json lines stay the same JSON and
// carry no control character raw, including the ones encoding/json leaves
// alone (DEL, C1, bidi overrides).
func TestJSONSinkNeutralisesHostileText(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	sink := jsonSink(&out)
	in := []events.Event{
		{Seq: 1, Kind: events.KindStepEnded, Tool: hostileSeq + "\x7f", Message: hostileSeq, Args: map[string]any{"text": hostileSeq}},
		{Seq: 2, Kind: events.KindAppWindow, Data: events.AppWindow{Title: hostileSeq}},
	}
	for _, e := range in {
		sink(e)
	}
	rawControls(t, "--json", out.String())
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != len(in) {
		t.Fatalf("%d lines for %d events:\n%s", len(lines), len(in), out.String())
	}
	for i, l := range lines {
		var e events.Event
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("line %d is not JSON: %v\n%s", i+1, err, l)
		}
		if e.Message != in[i].Message || e.Tool != in[i].Tool {
			t.Errorf("line %d decodes to %+v, want %+v", i+1, e, in[i])
		}
	}
}
