package engine

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/drivers/atspi"
	"github.com/kasmrt/kasmrt/drivers/cdp"
	"github.com/kasmrt/kasmrt/engine/events"
)

// The rule cases in this file moved here from the real-session tests
// (docs/architecture.md, "Test time"): what they check is the engine's
// rule, which the double reaches in milliseconds and without the timing
// a busy machine upsets. One real-session case of each stays as
// integration.

// TestRulesScriptedDeadline checks a scripted run the deadline cuts short:
// while the window is still awaited, and in the middle of a step, where
// the app is still healthy and the checks must not blame it.
func TestRulesScriptedDeadline(t *testing.T) {
	t.Parallel()
	env := map[string]string{"KASM_RUNTIME_DEADLINE_S": "1.5"}
	t.Run("while the window is awaited", func(t *testing.T) {
		t.Parallel()
		r := loopRun(t, loopCase{scenario: "name: deadline at startup\napp: {command: [fake-app], startup_timeout_s: 20}\nsteps: [{observe_screen: {}}]\n",
			operator: "runner: {}\n", env: env, machine: &fakeMachine{noWindow: true}})
		loopWant(t, r, events.VerdictTestError, OutcomeDeadline, 0, 0)
		loopWantSteps(t, r.rep)
		if !strings.Contains(strings.Join(r.rep.Reasons, " "), "the 1.5s deadline was reached") {
			t.Errorf("reasons = %q", r.rep.Reasons)
		}
	})
	t.Run("mid-step", func(t *testing.T) {
		t.Parallel()
		r := loopRun(t, loopCase{scenario: rulesApp + "steps:\n  - observe_screen: {}\n  - wait: 20\n  - observe_screen: {}\n",
			operator: "runner: {}\n", env: env, machine: &fakeMachine{}})
		loopWant(t, r, events.VerdictTestError, OutcomeDeadline, 0, 0)
		loopWantSteps(t, r.rep, loopStep{"observe_screen", "ok", ""}, loopStep{"wait", "error", "wait interrupted"})
		if d := r.rep.Steps[1].DurationMS; d > 1500 {
			t.Errorf("the cut wait took %d ms, longer than the whole deadline", d)
		}
		if c := r.rep.Checks; c.ProcessAlive == nil || !*c.ProcessAlive || c.WindowPresent == nil || !*c.WindowPresent {
			t.Errorf("final checks %+v: the app was healthy when the run was cut short", c)
		}
		if !strings.Contains(strings.Join(r.rep.Reasons, " "), "the 1.5s deadline was reached") || strings.Contains(strings.Join(r.rep.Reasons, " "), "failed") {
			t.Errorf("reasons = %q: want the deadline, and nothing that blames the app", r.rep.Reasons)
		}
		if r.rep.Timing.DeadlineS != 1.5 {
			t.Errorf("timing.deadline_s = %v", r.rep.Timing.DeadlineS)
		}
	})
}

// TestRulesQuitAsLastStep quits the app with its own key as the last step
// of a run that expects it to exit. Its process may outlive its window, so
// the final checks can look between the two; either way the run passes.
func TestRulesQuitAsLastStep(t *testing.T) {
	t.Parallel()
	const scenario = `name: quit race
app:
  command: [fake-app]
  expect_exit: {codes: [0], within_s: 10}
steps:
  - observe_screen: {}
  - press_key: Return
`
	cases := []struct {
		name string
		quit func(f *fakeMachine)
	}{
		{"the window and the process end together", func(f *fakeMachine) { f.loseWindow(); f.exitApp(0) }},
		{"the process outlives its window", func(f *fakeMachine) {
			f.loseWindow()
			time.AfterFunc(400*time.Millisecond, func() { f.exitApp(0) })
		}},
		{"the window outlives the process a moment", func(f *fakeMachine) {
			f.exitApp(0)
			time.AfterFunc(100*time.Millisecond, f.loseWindow)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := &fakeMachine{on: func(f *fakeMachine, in string) {
				if in == "key Return" {
					c.quit(f)
				}
			}}
			r := loopRun(t, loopCase{scenario: scenario, operator: "runner: {}\n", machine: f})
			loopWant(t, r, events.VerdictPass, OutcomeCompleted, 0, 0)
			if e := r.rep.Checks.ExpectedExit; e == nil || !*e {
				t.Errorf("checks %+v: want expected_exit to hold", r.rep.Checks)
			}
		})
	}
}

// TestRulesPageChecks checks how an expect on cdp targets words what it
// found when the page disagrees: each property the check compares, a
// target that matches nothing, and a scripted query of one.
func TestRulesPageChecks(t *testing.T) {
	t.Parallel()
	const head = `name: page checks
browser: {start_url: http://app.test/, headless: true}
cdp_targets: {heading: h1, qty: "#qty", items: li, never: "#never", nothing: ".nothing"}
steps:
`
	page := map[string]cdp.ElementState{
		"h1":     {Found: true, Visible: true, Text: "Open orders", Count: 1},
		"#qty":   {Found: true, Visible: true, Value: "3", Count: 1},
		"li":     {Found: true, Visible: true, Text: "a", Count: 3},
		"#never": {Found: true, Count: 1},
	}
	cases := []struct {
		name, step, outcome, message string
	}{
		{"all hold", "  - expect:\n      cdp:\n        heading: {text: Open orders, visible: true}\n        qty: {value: \"3\"}\n" +
			"        items: {count: 3, text_contains: a}\n        never: {visible: false}\n        nothing: {present: false, count: 0}\n",
			OutcomeCompleted, `cdp target never: hidden`},
		{"text differs", "  - expect: {within_s: 0.3, cdp: {heading: {text: Closed orders}}}\n",
			OutcomeStepFailed, `expected cdp target heading: text "Closed orders" (within 300ms); found heading: found, visible, text "Open orders" (1 match)`},
		{"value differs", "  - expect: {within_s: 0.3, cdp: {qty: {value: \"4\"}}}\n", OutcomeStepFailed, `value "3"`},
		{"count differs", "  - expect: {within_s: 0.3, cdp: {items: {count: 2}}}\n", OutcomeStepFailed, "(3 matches)"},
		{"never visible", "  - expect: {within_s: 0.3, cdp: {never: {visible: true}}}\n", OutcomeStepFailed, "never: found, hidden"},
		{"missing element", "  - expect: {within_s: 0.3, cdp: {nothing: {present: true}}}\n", OutcomeStepFailed, "nothing: not found (0 matches)"},
		{"scripted query of a missing element", "  - cdp_query: nothing\n", OutcomeStepFailed, "nothing: not found"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := loopRun(t, loopCase{scenario: head + c.step, operator: "runner: {}\n", machine: &fakeMachine{page: page}})
			verdict := events.VerdictAppFailed
			if c.outcome == OutcomeCompleted {
				verdict = events.VerdictPass
			}
			loopWant(t, r, verdict, c.outcome, 0, 0)
			if n := len(r.rep.Steps); n != 1 || !strings.Contains(r.rep.Steps[0].Message, c.message) {
				t.Errorf("steps %+v, want one whose message has %q", r.rep.Steps, c.message)
			}
		})
	}
}

// TestRulesWindowAndExitChecks checks how the window-title and exit-code
// checks word a disagreement: a title that differs, one an input did not
// change, an app still running and one that exited with another code.
func TestRulesWindowAndExitChecks(t *testing.T) {
	t.Parallel()
	exitsWith3 := func() *fakeMachine {
		return &fakeMachine{title: "kasm exit", on: func(f *fakeMachine, in string) {
			if in == "key Return" {
				f.exitApp(3)
			}
		}}
	}
	cases := []struct {
		name, steps string
		machine     func() *fakeMachine
		message     string
	}{
		{"title differs", "  - expect: {within_s: 0.3, window_title: {equals: other}}\n", nil,
			`expected the window title equals "other" (within 300ms); found the title "kasm checks"`},
		{"title never changes", "  - press_key: Return\n    expect: {within_s: 0.3, window_title: {contains: report}}\n", nil,
			`found the title "kasm checks"`},
		{"app still running", "  - expect: {within_s: 0.3, exit_code: 3}\n", exitsWith3,
			"found the application is still running"},
		{"another exit code", "  - press_key: Return\n    expect: {exit_code: 4}\n", exitsWith3,
			"found the application exited with status 3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := &fakeMachine{title: "kasm checks"}
			if c.machine != nil {
				f = c.machine()
			}
			r := loopRun(t, loopCase{scenario: rulesApp + "steps:\n" + c.steps, operator: "runner: {}\n", machine: f})
			loopWant(t, r, events.VerdictAppFailed, OutcomeStepFailed, 0, 0)
			if n := len(r.rep.Steps); n == 0 || !strings.Contains(r.rep.Steps[n-1].Message, c.message) {
				t.Errorf("steps %+v, want the last one's message to have %q", r.rep.Steps, c.message)
			}
		})
	}
}

// TestRulesControlAtClickTarget checks an expect on a click target whose
// point shows another control than the one named: the message names the
// control that is there.
func TestRulesControlAtClickTarget(t *testing.T) {
	t.Parallel()
	// The window is at (20, 20): (60, 195) in it is the OK button.
	r := loopRun(t, loopCase{scenario: rulesApp + "click_targets:\n  ok_button: {x: 60, y: 195, description: the OK button}\n" +
		"steps:\n  - expect: {within_s: 0.3, click_targets: {ok_button: {name: Cancel}}}\n", operator: "runner: {}\n", machine: fakeDialog()})
	loopWant(t, r, events.VerdictAppFailed, OutcomeStepFailed, 0, 0)
	loopWantSteps(t, r.rep, loopStep{"expect", "error", `is the push button "OK" (enabled`})
}

// TestRulesNoControlsSaysWhy: an application that registers on the
// accessibility bus but shows no named control with an action gets no
// click_element, and the tools event and a scripted click_element step say
// why.
func TestRulesNoControlsSaysWhy(t *testing.T) {
	t.Parallel()
	const reason = "registered but shows no named controls with an action"
	r := loopRun(t, loopCase{scenario: rulesApp + "steps:\n  - click_element: {name: OK}\n", operator: "runner: {}\n",
		machine: &fakeMachine{controls: []atspi.Control{}}})
	loopWant(t, r, events.VerdictTestError, OutcomeStepError, 0, 0)
	if slices.Contains(r.rep.Tools, "click_element") {
		t.Errorf("click_element offered: %v", r.rep.Tools)
	}
	tools := loopEvents(r, events.KindTools)
	if len(tools) != 1 {
		t.Fatalf("%d tools events, want 1 saying why: %+v", len(tools), tools)
	}
	d, _ := tools[0].Data.(events.ToolList)
	if !strings.HasPrefix(tools[0].Message, "click_element is not offered: ") || !strings.Contains(tools[0].Message, reason) || !strings.Contains(d.NoClickElement, reason) {
		t.Errorf("tools event %q (no_click_element %q), want the reason %q", tools[0].Message, d.NoClickElement, reason)
	}
	loopWantSteps(t, r.rep, loopStep{"click_element", "malformed", "click_element is not offered: the application " + reason})
}

// TestRulesUnquotedExpectationNeedsTheModel: a scripted check_expectation
// that quotes no text cannot be judged by reading the screen, so with the
// model unreachable it stays unjudged, a concern, and the run goes on.
func TestRulesUnquotedExpectationNeedsTheModel(t *testing.T) {
	t.Parallel()
	// The endpoint refuses every connection.
	const unreachable = "model:\n  endpoint: http://127.0.0.1:9/v1\n  retry: 0\n  timeout: 2\n"
	r := loopRun(t, loopCase{scenario: rulesApp + "steps:\n  - check_expectation: {expectation: the dialog asks a question}\n",
		operator: unreachable, machine: &fakeMachine{}})
	loopWant(t, r, events.VerdictPassConcerns, OutcomeCompleted, 0, 0)
	loopWantSteps(t, r.rep, loopStep{"check_expectation", "ok", "unavailable: "})
	if !loopHasConcern(r.rep, `check_expectation "the dialog asks a question" was not judged`) {
		t.Errorf("concerns = %q", r.rep.Concerns)
	}
}
