package engine

import (
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
	mt "github.com/kasmrt/kasmrt/engine/model/modeltest"
)

// rulesChecked is rulesGoal with a declared check the model can call and
// a tool that makes it hold: done.txt in the scenario's directory, where
// declared tools run.
const rulesChecked = rulesGoal + `tools:
  finish:
    run: shell
    command: touch done.txt
  done_file:
    run: shell
    command: test -f done.txt
`

// rulesWantReasons fails the test unless some reason contains each text.
func rulesWantReasons(t *testing.T, r loopResult, want ...string) {
	t.Helper()
	all := strings.Join(r.rep.Reasons, "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("no reason contains %q; reasons:\n%s", w, all)
		}
	}
}

// rulesWantConcerns fails the test unless some concern contains each text.
func rulesWantConcerns(t *testing.T, r loopResult, want ...string) {
	t.Helper()
	for _, w := range want {
		if !loopHasConcern(r.rep, w) {
			t.Errorf("no concern contains %q; concerns %q", w, r.rep.Concerns)
		}
	}
}

// TestRulesFalsePasses replays the goal runs that passed though the work
// was not done: a declared check that failed before goal-met, calls that
// were refused or failed and an input that never ran, and a pass with
// nothing declared to verify the goal. Each now ends app-failed or
// pass-with-concerns, and says why.
func TestRulesFalsePasses(t *testing.T) {
	t.Parallel()
	failingCheck := rulesGoal + `tools:
  clipboard_is_5535:
    description: Check that the clipboard holds 5535.
    run: shell
    command: echo "the clipboard holds 12" >&2; exit 1
`
	rulesRun(t, []rulesCase{
		{loopTurnCase: loopTurnCase{
			name:    "a declared tool failed, then goal-met: a concern naming the tool and its result",
			script:  []mt.Exchange{loopObserve, mt.Call("clipboard_is_5535", `{}`), loopGoalMet},
			verdict: events.VerdictPassConcerns, outcome: OutcomeCompleted, iterations: 3,
			steps: []loopStep{{"observe_screen", "ok", ""}, {"clipboard_is_5535", "error", "exited with status 1: the clipboard holds 12"}, {"record_verdict", "ok", ""}},
			check: func(t *testing.T, r loopResult) {
				rulesWantConcerns(t, r, "the model recorded goal-met, but the last call of clipboard_is_5535 did not succeed: clipboard_is_5535 exited with status 1: the clipboard holds 12")
				rulesWantReasons(t, r, "calls that did not succeed: 1 error (clipboard_is_5535)")
			},
		}, scenario: failingCheck},
		{loopTurnCase: loopTurnCase{
			name:    "a declared check: true tool failed, then goal-met: app-failed",
			script:  []mt.Exchange{loopObserve, mt.Call("clipboard_is_5535", `{}`), loopGoalMet},
			verdict: events.VerdictAppFailed, outcome: OutcomeCheckFailed, iterations: 3,
			steps: []loopStep{{"observe_screen", "ok", ""}, {"clipboard_is_5535", "error", ""}, {"record_verdict", "ok", ""}},
			check: func(t *testing.T, r loopResult) {
				rulesWantReasons(t, r, "tool_check.clipboard_is_5535 failed: its last call: clipboard_is_5535 exited with status 1",
					"the model recorded goal-met, which never upgrades a failed check")
				if ok, found := r.rep.Checks.Declared["tool_check.clipboard_is_5535"]; !found || ok {
					t.Errorf("report.json's checks.declared = %v, want tool_check.clipboard_is_5535 false", r.rep.Checks.Declared)
				}
			},
		}, scenario: failingCheck + "    check: true\n"},
		{loopTurnCase: loopTurnCase{
			name: "a check: true tool that failed, then held, holds",
			script: []mt.Exchange{loopObserve, mt.Call("done_file", `{}`), mt.Call("finish", `{}`), mt.Call("done_file", `{}`),
				loopGoalMet},
			verdict: events.VerdictPassConcerns, outcome: OutcomeCompleted, iterations: 5,
			steps: []loopStep{{"observe_screen", "ok", ""}, {"done_file", "error", ""}, {"finish", "ok", ""}, {"done_file", "ok", ""},
				{"record_verdict", "ok", ""}},
			check: func(t *testing.T, r loopResult) {
				if len(r.rep.Concerns) != 1 || r.rep.Concerns[0] != nothingVerified {
					t.Errorf("concerns %q, want only that nothing verified the goal", r.rep.Concerns)
				}
				if ok := r.rep.Checks.Declared["tool_check.done_file"]; !ok {
					t.Errorf("checks.declared = %v, want tool_check.done_file true", r.rep.Checks.Declared)
				}
			},
		}, scenario: strings.Replace(rulesChecked, "command: test -f done.txt\n", "command: test -f done.txt\n    check: true\n", 1)},
		{loopTurnCase: loopTurnCase{
			name: "three refused, one errored, the value never typed, then goal-met: a concern and the calls in the reasons",
			script: []mt.Exchange{
				mt.Call("type_text", `{"ref": "greeting"}`), // before observing: refused
				mt.Call("type_text", `{"ref": "greeting"}`),
				mt.Call("click", `{"target": "center"}`),
				loopObserve,
				mt.Call("press_key", `{"key": "F35"}`), // not on the layout: an error
				loopGoalMet,
			},
			verdict: events.VerdictPassConcerns, outcome: OutcomeCompleted, iterations: 6,
			steps: []loopStep{{"type_text", "refused", ""}, {"type_text", "refused", ""}, {"click", "refused", ""},
				{"observe_screen", "ok", ""}, {"press_key", "error", ""}, {"record_verdict", "ok", ""}},
			check: func(t *testing.T, r loopResult) {
				rulesWantConcerns(t, r, "the model recorded goal-met while its last 4 input actions were all refused or failed: type_text (refused), type_text (refused), click (refused), press_key (error)",
					nothingVerified)
				rulesWantReasons(t, r, "calls that did not succeed: 3 refused (type_text ×2, click), 1 error (press_key)")
			},
		}},
		{loopTurnCase: loopTurnCase{
			name:    "an input refused, then one that succeeded: no concern about input, the refusal in the reasons",
			script:  []mt.Exchange{mt.Call("click", `{"target": "center"}`), loopObserve, mt.Call("click", `{"target": "center"}`), loopGoalMet},
			verdict: events.VerdictPassConcerns, outcome: OutcomeCompleted, iterations: 4,
			steps: []loopStep{{"click", "refused", ""}, {"observe_screen", "ok", ""}, {"click", "ok", ""}, {"record_verdict", "ok", ""}},
			check: func(t *testing.T, r loopResult) {
				if len(r.rep.Concerns) != 1 || r.rep.Concerns[0] != nothingVerified {
					t.Errorf("concerns %q, want only %q", r.rep.Concerns, nothingVerified)
				}
				rulesWantReasons(t, r, "calls that did not succeed: 1 refused (click)")
			},
		}},
		{loopTurnCase: loopTurnCase{
			name:    "goal-met with nothing declared to verify the goal: a concern",
			script:  []mt.Exchange{loopObserve, mt.Call("type_text", `{"ref": "greeting"}`), loopGoalMet},
			verdict: events.VerdictPassConcerns, outcome: OutcomeCompleted, iterations: 3,
			steps: []loopStep{{"observe_screen", "ok", ""}, {"type_text", "ok", ""}, {"record_verdict", "ok", ""}},
			check: func(t *testing.T, r loopResult) {
				if len(r.rep.Concerns) != 1 || r.rep.Concerns[0] != nothingVerified {
					t.Errorf("concerns %q, want only %q", r.rep.Concerns, nothingVerified)
				}
				for _, reason := range r.rep.Reasons {
					if strings.Contains(reason, "did not succeed") {
						t.Errorf("every call succeeded, yet the reasons say %q", reason)
					}
				}
			},
		}},
	})
}

// TestRulesSuccessCriteria checks a goal's success: criteria: the runtime
// evaluates them after the loop ends by the model's verdict, a budget or
// a degraded loop, never after an escalation; one that fails makes the
// run app-failed whatever the model said, one that cannot be evaluated
// test-error.
func TestRulesSuccessCriteria(t *testing.T) {
	t.Parallel()
	withTools := func(success string) string { return rulesChecked + "success:\n" + success }
	titled := func() (*fakeMachine, []mt.Exchange) { return &fakeMachine{title: "Main"}, nil }
	rulesRun(t, []rulesCase{
		{loopTurnCase: loopTurnCase{
			name:    "criteria that hold: pass, with no concern",
			script:  []mt.Exchange{loopObserve, mt.Call("finish", `{}`), loopGoalMet},
			verdict: events.VerdictPass, outcome: OutcomeCompleted, iterations: 3,
			steps: []loopStep{{"observe_screen", "ok", ""}, {"finish", "ok", ""}, {"record_verdict", "ok", ""},
				{"done_file", "ok", "done_file succeeded"}},
			check: func(t *testing.T, r loopResult) {
				if len(r.rep.Concerns) != 0 {
					t.Errorf("concerns %q", r.rep.Concerns)
				}
				if r.rep.Steps[3].Source != sourceSuccess {
					t.Errorf("the criteria's run of done_file has source %q", r.rep.Steps[3].Source)
				}
				for _, name := range []string{"success.window_title", "success.tools.done_file"} {
					if !r.rep.Checks.Declared[name] {
						t.Errorf("checks.declared = %v, want %s true", r.rep.Checks.Declared, name)
					}
				}
			},
		}, scenario: withTools("  window_title: {contains: Main}\n  tools: [done_file]\n"), machine: titled},
		{loopTurnCase: loopTurnCase{
			name:    "a declared tool that fails: app-failed though the model said goal-met",
			script:  []mt.Exchange{loopObserve, loopGoalMet},
			verdict: events.VerdictAppFailed, outcome: OutcomeSuccessFailed, iterations: 2,
			steps: []loopStep{{"observe_screen", "ok", ""}, {"record_verdict", "ok", ""}, {"done_file", "error", "exited with status 1"}},
			check: func(t *testing.T, r loopResult) {
				rulesWantReasons(t, r, "success.tools.done_file failed: done_file exited with status 1",
					"the model recorded goal-met, which never upgrades a failed check")
			},
		}, scenario: withTools("  tools: [done_file]\n")},
		{loopTurnCase: loopTurnCase{
			name:    "a title that does not hold: app-failed, with what was seen",
			script:  []mt.Exchange{loopObserve, loopGoalMet},
			verdict: events.VerdictAppFailed, outcome: OutcomeSuccessFailed, iterations: 2,
			steps: []loopStep{{"observe_screen", "ok", ""}, {"record_verdict", "ok", ""}},
			check: func(t *testing.T, r loopResult) {
				rulesWantReasons(t, r, `success.window_title failed: expected the window title contains "Saved" (within 100ms); found the title "Main"`)
			},
		}, scenario: withTools("  within_s: 0.1\n  window_title: {contains: Saved}\n"), machine: titled},
		{loopTurnCase: loopTurnCase{
			name:    "a criterion that cannot be evaluated: test-error",
			script:  []mt.Exchange{loopObserve, loopGoalMet},
			verdict: events.VerdictTestError, outcome: OutcomeSuccessError, iterations: 2,
			steps: []loopStep{{"observe_screen", "ok", ""}, {"record_verdict", "ok", ""}},
			check: func(t *testing.T, r loopResult) {
				rulesWantReasons(t, r, "success.controls.Save cannot be evaluated")
			},
		}, scenario: withTools("  controls: {Save: {enabled: true}}\n")},
		{loopTurnCase: loopTurnCase{
			name:    "the loop's budget ends: the criteria still decide",
			script:  []mt.Exchange{loopObserve},
			verdict: events.VerdictAppFailed, outcome: OutcomeSuccessFailed, iterations: 1,
			steps: []loopStep{{"observe_screen", "ok", ""}, {"done_file", "error", ""}},
		}, scenario: strings.Replace(withTools("  tools: [done_file]\n"), "goal:", "agentic_max_iterations: 1\ngoal:", 1)},
		{loopTurnCase: loopTurnCase{
			name:    "the criteria's run of a check: true tool is its last call: a model's failed call before it is cleared",
			script:  []mt.Exchange{loopObserve, mt.Call("done_file", `{}`), mt.Call("finish", `{}`), loopGoalMet},
			verdict: events.VerdictPass, outcome: OutcomeCompleted, iterations: 4,
			steps: []loopStep{{"observe_screen", "ok", ""}, {"done_file", "error", ""}, {"finish", "ok", ""}, {"record_verdict", "ok", ""},
				{"done_file", "ok", ""}},
			check: func(t *testing.T, r loopResult) {
				if !r.rep.Checks.Declared["tool_check.done_file"] || !r.rep.Checks.Declared["success.tools.done_file"] {
					t.Errorf("checks.declared = %v, want both of done_file's checks to hold", r.rep.Checks.Declared)
				}
				rulesWantReasons(t, r, "calls that did not succeed: 1 error (done_file)")
			},
		}, scenario: strings.Replace(withTools("  tools: [done_file]\n"), "command: test -f done.txt\n", "command: test -f done.txt\n    check: true\n", 1)},
		{loopTurnCase: loopTurnCase{
			name:     "a degraded loop: the criteria still decide",
			operator: strings.Replace(loopOperator, "runner:\n", "runner:\n  max_retries_per_step: 1\n", 1),
			script:   []mt.Exchange{mt.Text("I am done.")},
			verdict:  events.VerdictAppFailed, outcome: OutcomeSuccessFailed, iterations: 1, malforms: 1,
			steps: []loopStep{{"done_file", "error", ""}},
		}, scenario: withTools("  tools: [done_file]\n")},
		{loopTurnCase: loopTurnCase{
			name:    "an app that quit with a success exit code: the criteria still decide",
			script:  []mt.Exchange{loopObserve, mt.Call("press_key", `{"key": "ctrl+q"}`)},
			verdict: events.VerdictAppFailed, outcome: OutcomeSuccessFailed, iterations: 2,
			steps: []loopStep{{"observe_screen", "ok", ""}, {"press_key", "ok", ""}, {"done_file", "error", "exited with status 1"}},
		}, scenario: strings.Replace(withTools("  tools: [done_file]\n"), "  command: [fake-app]\n", "  command: [fake-app]\n  success_exit_codes: [0]\n", 1),
			machine: func() (*fakeMachine, []mt.Exchange) {
				return &fakeMachine{on: func(f *fakeMachine, in string) {
					if in == "key ctrl+q" {
						f.loseWindow()
						f.exitApp(0)
					}
				}}, nil
			}},
		{loopTurnCase: loopTurnCase{
			name:    "an escalation stays locked: the criteria are not evaluated",
			script:  []mt.Exchange{loopObserve, mt.Call("escalate", `{"reason": "a licence key is asked"}`)},
			verdict: events.VerdictTestError, outcome: OutcomeEscalated, iterations: 2,
			steps: []loopStep{{"observe_screen", "ok", ""}, {"escalate", "ok", ""}},
		}, scenario: withTools("  tools: [done_file]\n")},
		{loopTurnCase: loopTurnCase{
			name:    "goal-not-met with criteria that hold: a concern, as before",
			script:  []mt.Exchange{loopObserve, mt.Call("finish", `{}`), mt.Call("record_verdict", `{"verdict": "goal-not-met", "reason": "unsure"}`)},
			verdict: events.VerdictPassConcerns, outcome: OutcomeCompleted, iterations: 3,
			steps: []loopStep{{"observe_screen", "ok", ""}, {"finish", "ok", ""}, {"record_verdict", "ok", ""}, {"done_file", "ok", ""}},
			check: func(t *testing.T, r loopResult) {
				rulesWantConcerns(t, r, "the model recorded goal-not-met: unsure")
				if loopHasConcern(r.rep, nothingVerified) {
					t.Errorf("concerns %q: the criteria verified the goal", r.rep.Concerns)
				}
			},
		}, scenario: withTools("  tools: [done_file]\n")},
	})
}

// TestRulesScriptNotSummarised: a script's failed step ends the run and is
// its reason; the summary of calls that did not succeed is for the calls a
// model or an agent chose, and a scripted run declares no goal to verify.
func TestRulesScriptNotSummarised(t *testing.T) {
	t.Parallel()
	r := loopRun(t, loopCase{scenario: rulesApp + "steps:\n  - observe_screen: {}\n  - press_key: F35\n", operator: "runner: {}\n", machine: &fakeMachine{}})
	loopWant(t, r, events.VerdictTestError, OutcomeStepError, 0, 0)
	for _, reason := range r.rep.Reasons {
		if strings.Contains(reason, "did not succeed") {
			t.Errorf("a scripted run's reasons summarise its calls: %q", r.rep.Reasons)
		}
	}
	ok := loopRun(t, loopCase{scenario: rulesApp + "steps:\n  - observe_screen: {}\n", operator: "runner: {}\n", machine: &fakeMachine{}})
	loopWant(t, ok, events.VerdictPass, OutcomeCompleted, 0, 0)
}
