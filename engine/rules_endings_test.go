package engine

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/drivers/atspi"
	"github.com/kasmrt/kasmrt/engine/events"
)

// The rule cases in this file moved here from the real-session tests
// (docs/dev/measurements.md, "Test time"): what they check is the engine's
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
		f := &fakeMachine{}
		r := loopRun(t, loopCase{scenario: rulesApp + "steps:\n  - observe_screen: {}\n  - wait: 20\n  - observe_screen: {}\n",
			operator: "runner: {}\n", env: env, machine: f})
		loopWant(t, r, events.VerdictTestError, OutcomeDeadline, 0, 0)
		loopWantSteps(t, r.rep, loopStep{"observe_screen", "ok", ""}, loopStep{"wait", "error", "wait interrupted"})
		// The rule in events: the cut step ends, no later step starts,
		// and only then do the final checks, the final capture, the
		// verdict and the run's end follow, in that order.
		var order []string
		for _, e := range r.events {
			switch e.Kind {
			case events.KindStepStarted, events.KindStepEnded:
				order = append(order, fmt.Sprintf("%s %d", e.Kind, e.Step))
			case events.KindFinal, events.KindVerdict, events.KindRunEnded:
				order = append(order, string(e.Kind))
			case events.KindCheck:
				if len(order) == 0 || order[len(order)-1] != "checks" {
					order = append(order, "checks")
				}
			}
		}
		want := []string{"step.started 1", "step.ended 1", "step.started 2", "step.ended 2", "checks", "final", "verdict", "run.ended"}
		if !slices.Equal(order, want) {
			t.Errorf("events in order %q, want %q", order, want)
		}
		// The work stops when the report's reserve (a third of 1.5 s)
		// begins, not at the deadline itself: the context the work
		// captured the screen in ends at the latest 1 s after the run
		// started (it was made just before run.started), where one that
		// ran to the deadline would end about 1.5 s after it. This compares
		// two instants the run fixed, not how long anything took, so a
		// loaded machine cannot upset it.
		started := loopEvents(r, events.KindRunStarted)
		work := f.captureDeadlines()
		if len(started) != 1 || len(work) == 0 {
			t.Fatalf("%d run.started events, %d captures with a deadline", len(started), len(work))
		}
		if reserveStarts := started[0].T.Add(time.Second); work[0].After(reserveStarts) {
			t.Errorf("the work's context ends %v after run.started: the work goes on into the report's reserve", work[0].Sub(started[0].T))
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
// of a run that expects it to exit. Its process may outlive its window, or
// the window the process, so the final checks can look between the two;
// either way the run passes. Both ending together is TestRulesExpectedExit's.
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

// TestRulesQueryOfMissingElement: a scripted cdp_query of a target that
// matches nothing fails the step and says so; the checks' wording is
// TestRulesExpectPage's.
func TestRulesQueryOfMissingElement(t *testing.T) {
	t.Parallel()
	r := loopRun(t, loopCase{scenario: "name: page query\nbrowser: {start_url: http://app.test/, headless: true}\n" +
		"cdp_targets: {nothing: \".nothing\"}\nsteps:\n  - cdp_query: nothing\n", operator: "runner: {}\n", machine: &fakeMachine{}})
	loopWant(t, r, events.VerdictAppFailed, OutcomeStepFailed, 0, 0)
	loopWantSteps(t, r.rep, loopStep{"cdp_query", "error", "nothing: not found"})
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

// answeredDialog is a dialog whose app ends once the script answers it
// with Return.
const answeredDialog = `name: dialog answered
app:
  command: [fake-app]
  success_exit_codes: [0]
steps:
  - observe_screen: {}
  - press_key: Return
`

// TestRulesDialogClosesBeforeItExits: an app that ends with a success exit
// code (a dialog answered) unmaps its window before its process has
// exited; the run waits for the exit instead of calling the window lost.
func TestRulesDialogClosesBeforeItExits(t *testing.T) {
	t.Parallel()
	f := &fakeMachine{on: func(f *fakeMachine, in string) {
		if in == "key Return" {
			f.loseWindow()
			time.AfterFunc(400*time.Millisecond, func() { f.exitApp(0) })
		}
	}}
	r := loopRun(t, loopCase{scenario: answeredDialog, operator: "runner: {}\n", machine: f})
	loopWant(t, r, events.VerdictPass, OutcomeCompleted, 0, 0)
}

// TestRulesDialogClosesAfterTheLastStepsChecks: the last step's answer
// ends the app, but its window goes only after that step's checks found it
// (a busy machine). The final checks too wait for the exit: a success code
// passes, a failing one is the app's exit, the outcome the step's checks
// would have named.
func TestRulesDialogClosesAfterTheLastStepsChecks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		code    int
		verdict events.Verdict
		outcome events.Outcome
	}{
		{"answered yes", 0, events.VerdictPass, OutcomeCompleted},
		{"answered no", 1, events.VerdictAppFailed, OutcomeAppExited},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var answered atomic.Bool
			f := &fakeMachine{pings: true,
				on: func(_ *fakeMachine, in string) { answered.Store(in == "key Return") },
				// The step's checks found the window and asked whether the
				// app answers: it answered, and then closed.
				onPing: func(f *fakeMachine) {
					if answered.CompareAndSwap(true, false) {
						f.loseWindow()
						time.AfterFunc(400*time.Millisecond, func() { f.exitApp(tc.code) })
					}
				}}
			r := loopRun(t, loopCase{scenario: answeredDialog, operator: "runner: {}\n", machine: f})
			loopWant(t, r, tc.verdict, tc.outcome, 0, 0)
		})
	}
}
