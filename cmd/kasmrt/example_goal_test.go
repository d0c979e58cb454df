package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/model/modeltest"
)

// TestGoalExampleEndToEnd runs the bundled goal example, unchanged, with
// its operator file against the model test server: the scripted model
// observes the real zenity dialog, types the provided item and confirms;
// zenity prints the entry and exits 0, which the scenario declares a
// successful end.
func TestGoalExampleEndToEnd(t *testing.T) {
	t.Parallel()
	need(t, "Xvfb", "zenity", "dbus-daemon")
	srv := modeltest.New(t,
		modeltest.Call("observe_screen", `{}`),
		modeltest.Call("type_text", `{"ref": "item"}`),
		modeltest.Call("observe_screen", `{}`),
		modeltest.Call("press_key", `{"key": "Return"}`),
		// zenity exits a moment after Return; a turn that starts before
		// it has gone waits, and the wait ends when it exits.
		modeltest.Call("wait", `{"seconds": 5}`),
	)
	env := []string{"KASM_RUNTIME_VISION_ENDPOINT=" + srv.URL(), "DBUS_SESSION_BUS_ADDRESS="}
	out := filepath.Join(t.TempDir(), "report")
	code, stdout, stderr := kasmrtProcess(t, env, "run", "../../scenarios/examples/goal-text-editor.yaml",
		"-o", "../../scenarios/examples/operator-goal.yaml", "--headless", "--display", "-", "--report", out)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	rep, _ := readReport(t, out)
	if rep.Verdict != "pass" || rep.Loop.Ended != "the application exited successfully" || rep.Loop.Iterations < 4 || rep.Loop.Iterations > 5 {
		t.Errorf("verdict %s (%s), loop %+v", rep.Verdict, rep.Outcome, rep.Loop)
	}
	if rep.Goal == "" || len(rep.Plan) != 4 {
		t.Errorf("the report lacks the goal or the plan: %q %v", rep.Goal, rep.Plan)
	}
	for _, tool := range []string{"click_element", "ask_human", "respond", "wait_while", "click_grounded"} {
		if !slices.Contains(rep.Tools, tool) {
			t.Errorf("tool list %v lacks %s", rep.Tools, tool)
		}
	}
	if slices.Contains(rep.Tools, "escalate") {
		t.Error("escalate is offered though the operator file disables it")
	}
	// zenity printed the entry into the run's HOME, where the success
	// criteria read it.
	if bought, _ := os.ReadFile(filepath.Join(out, "home", "bought.txt")); strings.TrimSpace(string(bought)) != "oat milk" {
		t.Errorf("zenity did not print the typed item; home/bought.txt: %q", bought)
	}
	if !rep.Checks.Declared["success.exit_code"] || !rep.Checks.Declared["success.tools.bought"] {
		t.Errorf("checks.declared = %v, want the success criteria held", rep.Checks.Declared)
	}
	reqs := srv.Requests()
	if len(reqs) < 4 || len(reqs) > 5 || srv.Exhausted() > 0 {
		t.Fatalf("%d model requests, want 4 or 5", len(reqs))
	}
	first := reqs[0].Text()
	for _, want := range []string{"Type the provided shopping item", "Press Return to confirm", "input_image_1"} {
		if !strings.Contains(first, want) {
			t.Errorf("the first request lacks %q:\n%s", want, first)
		}
	}
	if n := len(reqs[0].ImageURLs()); n != 1 {
		t.Errorf("the first request carries %d images, want the reference image", n)
	}
	if m := reqs[0].Model(); m != "Qwen/Qwen3-VL-8B-Instruct" {
		t.Errorf("served model %q, want the operator file's model.name", m)
	}
}

// TestGoalDemoReplay runs the goal example as `make demo` does: the model's
// turns come from the bundled recording, with no endpoint, and the real
// zenity dialog decides the verdict.
func TestGoalDemoReplay(t *testing.T) {
	t.Parallel()
	need(t, "Xvfb", "zenity", "dbus-daemon")
	out := filepath.Join(t.TempDir(), "report")
	code, stdout, stderr := kasmrtProcess(t, []string{"KASM_RUNTIME_VISION_ENDPOINT=", "DBUS_SESSION_BUS_ADDRESS="}, "run", "../../scenarios/examples/goal-text-editor.yaml",
		"-o", "../../scenarios/examples/operator-goal.yaml",
		"--replay-model", "../../scenarios/examples/goal-text-editor.model.jsonl",
		"--headless", "--display", "-", "--report", out)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	wantIn(t, "the demo output", stdout, []string{"clicked entry", "check_expectation", "true: the entry field reads oat milk",
		`check success.tools.bought ok=true: bought succeeded: the dialog returned "oat milk"`,
		"loop ended: the application exited successfully", "verdict: pass (completed)"})
}

// TestGoalExampleEmptyEntryFails runs the goal example with a model that
// confirms the dialog without typing: zenity exits 0 with an empty entry,
// which once passed as "the application exited successfully". The success
// criteria read what the dialog returned, so the run is app-failed.
func TestGoalExampleEmptyEntryFails(t *testing.T) {
	t.Parallel()
	need(t, "Xvfb", "zenity", "dbus-daemon")
	srv := modeltest.New(t,
		modeltest.Call("observe_screen", `{}`),
		modeltest.Call("press_key", `{"key": "Return"}`),
		modeltest.Call("wait", `{"seconds": 5}`),
		modeltest.Call("record_verdict", `{"verdict": "goal-met", "reason": "the dialog is confirmed"}`),
	)
	env := []string{"KASM_RUNTIME_VISION_ENDPOINT=" + srv.URL(), "DBUS_SESSION_BUS_ADDRESS="}
	out := filepath.Join(t.TempDir(), "report")
	code, stdout, stderr := kasmrtProcess(t, env, "run", "../../scenarios/examples/goal-text-editor.yaml",
		"-o", "../../scenarios/examples/operator-goal.yaml", "--headless", "--display", "-", "--report", out)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (app-failed)\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	rep, _ := readReport(t, out)
	if rep.Verdict != "app-failed" || rep.Outcome != "success-failed" {
		t.Errorf("verdict %s (%s), want app-failed (success-failed); reasons %q", rep.Verdict, rep.Outcome, rep.Reasons)
	}
	wantIn(t, "the reasons", strings.Join(rep.Reasons, "\n"), []string{`success.tools.bought failed: bought exited with status 1: the dialog returned "", not "oat milk"`})
}
