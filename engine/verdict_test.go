package engine

import (
	"slices"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
)

// TestDecideVerdict tables the verdict rules on facts alone: no session,
// no model, no report.
func TestDecideVerdict(t *testing.T) {
	t.Parallel()
	passed := []events.Check{{Name: "process_alive", OK: true}, {Name: "window_present", OK: true}, {Name: "fatal_pattern", OK: true}}
	windowGone := []events.Check{{Name: "process_alive", OK: true}, {Name: "window_present", OK: false, Evidence: "window 0x1 is no longer mapped"}}
	deadline := &ending{verdict: events.VerdictTestError, outcome: OutcomeDeadline, reason: "the 600s deadline was reached"}
	stepFailed := &ending{verdict: events.VerdictAppFailed, outcome: OutcomeStepFailed, reason: "step 2 (probe) failed: probe exited with status 1"}
	escalation := &ending{verdict: events.VerdictTestError, outcome: OutcomeEscalated, reason: "escalated: a licence key is asked"}
	cases := []struct {
		name         string
		facts        verdictFacts
		verdict      events.Verdict
		outcome      events.Outcome
		reasons      []string
		wantConcerns []string
	}{
		{
			name:    "checks pass",
			facts:   verdictFacts{checks: passed},
			verdict: events.VerdictPass, outcome: OutcomeCompleted,
			reasons: []string{"the deterministic checks passed"},
		},
		{
			name:    "no checks at all (nothing launched) and no end passes",
			facts:   verdictFacts{},
			verdict: events.VerdictPass, outcome: OutcomeCompleted,
			reasons: []string{"the deterministic checks passed"},
		},
		{
			// The outcome is the one the check names after a step: the
			// final checks may be the first to see what the last step did.
			name:    "a failed check is app-failed with its evidence and its outcome",
			facts:   verdictFacts{checks: windowGone},
			verdict: events.VerdictAppFailed, outcome: OutcomeWindowLost,
			reasons: []string{"window_present failed: window 0x1 is no longer mapped"},
		},
		{
			name:    "goal-met never upgrades a failed check",
			facts:   verdictFacts{checks: windowGone, modelVerdict: events.ModelGoalMet},
			verdict: events.VerdictAppFailed, outcome: OutcomeWindowLost,
			reasons: []string{"window_present failed: window 0x1 is no longer mapped", "the model recorded goal-met, which never upgrades a failed check"},
		},
		{
			name:    "goal-met with passing checks passes",
			facts:   verdictFacts{checks: passed, modelVerdict: events.ModelGoalMet, modelReason: "done"},
			verdict: events.VerdictPass, outcome: OutcomeCompleted,
			reasons: []string{"the deterministic checks passed"},
		},
		{
			name:    "goal-not-met alone is a concern the caller publishes",
			facts:   verdictFacts{checks: passed, modelVerdict: events.ModelGoalNotMet, modelReason: "no greeting"},
			verdict: events.VerdictPassConcerns, outcome: OutcomeCompleted,
			reasons:      []string{"the deterministic checks passed, with concerns", "the model recorded goal-not-met: no greeting"},
			wantConcerns: []string{"the model recorded goal-not-met: no greeting"},
		},
		{
			name: "goal-not-met already a concern is not listed twice",
			facts: verdictFacts{checks: passed, modelVerdict: events.ModelGoalNotMet, modelReason: "no greeting",
				concerns: []string{"the model recorded goal-not-met: no greeting"}},
			verdict: events.VerdictPassConcerns, outcome: OutcomeCompleted,
			reasons:      []string{"the deterministic checks passed, with concerns", "the model recorded goal-not-met: no greeting"},
			wantConcerns: []string{"the model recorded goal-not-met: no greeting"},
		},
		{
			name:    "goal-not-met after a false check_expectation is app-failed",
			facts:   verdictFacts{checks: passed, modelVerdict: events.ModelGoalNotMet, modelReason: "no greeting", checkFalse: true},
			verdict: events.VerdictAppFailed, outcome: OutcomeCompleted,
			reasons: []string{"the model recorded goal-not-met: no greeting", "and a check_expectation during the loop came back false"},
		},
		{
			name:    "a false check_expectation alone does not fail a goal-met run",
			facts:   verdictFacts{checks: passed, modelVerdict: events.ModelGoalMet, checkFalse: true},
			verdict: events.VerdictPass, outcome: OutcomeCompleted,
			reasons: []string{"the deterministic checks passed"},
		},
		{
			name:    "concerns make pass-with-concerns and are listed in order",
			facts:   verdictFacts{checks: passed, concerns: []string{"the loop looked stuck", "a grounded click is unverified"}},
			verdict: events.VerdictPassConcerns, outcome: OutcomeCompleted,
			reasons: []string{"the deterministic checks passed, with concerns", "the loop looked stuck", "a grounded click is unverified"},
		},
		{
			name:    "a degraded loop keeps its outcome",
			facts:   verdictFacts{checks: passed, loopOutcome: OutcomeDegraded, concerns: []string{"the loop degraded: 3 malformed replies"}},
			verdict: events.VerdictPassConcerns, outcome: OutcomeDegraded,
			reasons: []string{"the deterministic checks passed, with concerns", "the loop degraded: 3 malformed replies"},
		},
		{
			name:    "no model verdict with failing checks is app-failed under that outcome",
			facts:   verdictFacts{checks: windowGone, loopOutcome: OutcomeNoModelVerdict},
			verdict: events.VerdictAppFailed, outcome: OutcomeNoModelVerdict,
			reasons: []string{"window_present failed: window 0x1 is no longer mapped"},
		},
		{
			name:    "escalate locks test-error even with failed checks and goal-met",
			facts:   verdictFacts{checks: windowGone, escalated: true, end: escalation, modelVerdict: events.ModelGoalMet},
			verdict: events.VerdictTestError, outcome: OutcomeEscalated,
			reasons: []string{"escalated: a licence key is asked"},
		},
		{
			name:    "a runtime end is test-error and lists the failed checks after its reason",
			facts:   verdictFacts{checks: windowGone, end: deadline, modelVerdict: events.ModelGoalMet},
			verdict: events.VerdictTestError, outcome: OutcomeDeadline,
			reasons: []string{"the 600s deadline was reached", "window_present failed: window 0x1 is no longer mapped"},
		},
		{
			name:    "a runtime end wins over concerns",
			facts:   verdictFacts{checks: passed, end: deadline, concerns: []string{"the loop looked stuck"}},
			verdict: events.VerdictTestError, outcome: OutcomeDeadline,
			reasons: []string{"the 600s deadline was reached"},
		},
		{
			name:    "an app-failed end keeps its own outcome, not the loop's",
			facts:   verdictFacts{checks: passed, end: stepFailed, loopOutcome: OutcomeDegraded},
			verdict: events.VerdictAppFailed, outcome: OutcomeStepFailed,
			reasons: []string{"step 2 (probe) failed: probe exited with status 1"},
		},
		{
			name:    "an app-failed end lists the failed checks after its reason",
			facts:   verdictFacts{checks: windowGone, end: stepFailed},
			verdict: events.VerdictAppFailed, outcome: OutcomeStepFailed,
			reasons: []string{"step 2 (probe) failed: probe exited with status 1", "window_present failed: window 0x1 is no longer mapped"},
		},
	}
	failedTool := callTally{lastDeclared: map[string]declaredCall{"clipboard_is_5535": {failed: true, message: "clipboard_is_5535 exited with status 1"}},
		declaredOrder: []string{"clipboard_is_5535"}, notDone: map[events.Status][]string{events.StatusError: {"clipboard_is_5535"}}}
	refused := callTally{failedInputs: 2, failedInput: []string{"type_text (refused)", "click (error)"},
		notDone: map[events.Status][]string{events.StatusRefused: {"type_text", "type_text", "type_text"}, events.StatusError: {"click"}}}
	successFailed := &ending{verdict: events.VerdictAppFailed, outcome: OutcomeSuccessFailed, reason: "success.tools.saved failed: saved exited with status 1"}
	cases = append(cases, []struct {
		name         string
		facts        verdictFacts
		verdict      events.Verdict
		outcome      events.Outcome
		reasons      []string
		wantConcerns []string
	}{
		{
			name:    "a goal run with no success criteria passes only with the concern that nothing verified the goal",
			facts:   verdictFacts{checks: passed, goal: true, by: "the model", modelVerdict: events.ModelGoalMet},
			verdict: events.VerdictPassConcerns, outcome: OutcomeCompleted,
			reasons:      []string{"the deterministic checks passed, with concerns", nothingVerified},
			wantConcerns: []string{nothingVerified},
		},
		{
			name:    "a goal run whose success criteria held passes",
			facts:   verdictFacts{checks: passed, goal: true, success: true, by: "the model", modelVerdict: events.ModelGoalMet},
			verdict: events.VerdictPass, outcome: OutcomeCompleted,
			reasons: []string{"the deterministic checks passed"},
		},
		{
			name:    "failed success criteria are app-failed, and goal-met never upgrades them",
			facts:   verdictFacts{checks: passed, goal: true, success: true, by: "the agent", end: successFailed, modelVerdict: events.ModelGoalMet},
			verdict: events.VerdictAppFailed, outcome: OutcomeSuccessFailed,
			reasons: []string{"success.tools.saved failed: saved exited with status 1", "the agent recorded goal-met, which never upgrades a failed check"},
		},
		{
			name:    "goal-met after a declared tool's failed last call is a concern naming it, and the calls are summarised",
			facts:   verdictFacts{checks: passed, goal: true, success: true, by: "the agent", modelVerdict: events.ModelGoalMet, calls: failedTool},
			verdict: events.VerdictPassConcerns, outcome: OutcomeCompleted,
			reasons: []string{"the deterministic checks passed, with concerns",
				"the agent recorded goal-met, but the last call of clipboard_is_5535 did not succeed: clipboard_is_5535 exited with status 1",
				"calls that did not succeed: 1 error (clipboard_is_5535)"},
			wantConcerns: []string{"the agent recorded goal-met, but the last call of clipboard_is_5535 did not succeed: clipboard_is_5535 exited with status 1"},
		},
		{
			name: "a check: true tool's failed last call is a failed check",
			facts: verdictFacts{checks: append(slices.Clone(passed), events.Check{Name: "tool_check.clipboard_is_5535", Evidence: "its last call: clipboard_is_5535 exited with status 1"}),
				goal: true, success: true, by: "the model", modelVerdict: events.ModelGoalMet, calls: failedTool},
			verdict: events.VerdictAppFailed, outcome: OutcomeCheckFailed,
			reasons: []string{"tool_check.clipboard_is_5535 failed: its last call: clipboard_is_5535 exited with status 1",
				"the model recorded goal-met, which never upgrades a failed check", "calls that did not succeed: 1 error (clipboard_is_5535)"},
		},
		{
			name:    "goal-met while the last input actions all failed is a concern",
			facts:   verdictFacts{checks: passed, goal: true, success: true, by: "the model", modelVerdict: events.ModelGoalMet, calls: refused},
			verdict: events.VerdictPassConcerns, outcome: OutcomeCompleted,
			reasons: []string{"the deterministic checks passed, with concerns",
				"the model recorded goal-met while its last 2 input actions were all refused or failed: type_text (refused), click (error)",
				"calls that did not succeed: 3 refused (type_text ×3), 1 error (click)"},
			wantConcerns: []string{"the model recorded goal-met while its last 2 input actions were all refused or failed: type_text (refused), click (error)"},
		},
		{
			name:    "the calls are summarised in a test-error's reasons too",
			facts:   verdictFacts{checks: passed, goal: true, end: deadline, calls: refused},
			verdict: events.VerdictTestError, outcome: OutcomeDeadline,
			reasons: []string{"the 600s deadline was reached", "calls that did not succeed: 3 refused (type_text ×3), 1 error (click)"},
		},
		{
			name:    "an escalation's reasons stay its own",
			facts:   verdictFacts{checks: passed, goal: true, escalated: true, end: escalation, calls: refused},
			verdict: events.VerdictTestError, outcome: OutcomeEscalated,
			reasons: []string{"escalated: a licence key is asked"},
		},
	}...)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			before := slices.Clone(c.facts.concerns)
			v, raised := decideVerdict(c.facts)
			if v.Verdict != c.verdict || v.Outcome != c.outcome {
				t.Errorf("verdict %s/%s, want %s/%s (reasons %q)", v.Verdict, v.Outcome, c.verdict, c.outcome, v.Reasons)
			}
			if !slices.Equal(v.Reasons, c.reasons) {
				t.Errorf("reasons %q, want %q", v.Reasons, c.reasons)
			}
			if !slices.Equal(raised, c.wantConcerns) {
				t.Errorf("raised concerns %q, want %q", raised, c.wantConcerns)
			}
			if !slices.Equal(c.facts.concerns, before) {
				t.Errorf("the facts' concerns changed to %q: the verdict must not touch its input", c.facts.concerns)
			}
		})
	}
}
