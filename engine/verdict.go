package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kasmrt/kasmrt/engine/events"
)

// verdictFacts is everything the verdict depends on. The run keeps it as
// its outcome while it runs (runState.outcome); the final checks and what
// the run was complete it once the run's work is over (facts).
type verdictFacts struct {
	// checks are the final deterministic checks, the declared tools
	// marked check: true among them.
	checks []events.Check
	// end is the first reason the run stopped early, or nil.
	end       *ending
	escalated bool
	// loopOutcome is degraded or no-model-verdict, or "" for completed.
	loopOutcome  events.Outcome
	modelVerdict string // goal-met, goal-not-met, or "" when none was recorded
	modelReason  string
	// checkFalse is set when a check_expectation came back false.
	checkFalse bool
	concerns   []string
	// goal is set for a goal run or a session, whose work a model or an
	// agent chose; by names it ("the model", "the agent"; "" is the model).
	goal bool
	by   string
	// success is set when the scenario declares success criteria; the
	// runtime evaluated them, and a failure is among end.
	success bool
	// calls is what became of the model's or the agent's calls.
	calls callTally
}

// stop records the first reason the run ends early; later ones are
// ignored so the first cause is the one reported.
func (f *verdictFacts) stop(verdict events.Verdict, outcome events.Outcome, reason string) {
	if f.end == nil {
		f.end = &ending{verdict: verdict, outcome: outcome, reason: reason}
	}
}

// addConcern records a concern, and reports whether it is new.
func (f *verdictFacts) addConcern(msg string) bool {
	if slices.Contains(f.concerns, msg) {
		return false
	}
	f.concerns = append(f.concerns, msg)
	return true
}

// facts gathers what the verdict depends on from the run.
func (s *runState) facts(checks []events.Check) verdictFacts {
	by := "the model"
	if s.r.agent != nil {
		by = "the agent"
	}
	f := s.outcome
	f.checks, f.goal, f.by, f.success = checks, s.loop.ran || s.r.agent != nil, by, s.files.Scenario.Success != nil
	return f
}

// failedChecks lists the failed checks as reasons, and the outcome of a
// run that they fail: the first one's, as after a step, but the loop's own
// ending (degraded, no-model-verdict) says more than the app's health, and
// stays; outcome is the run's.
func (f verdictFacts) failedChecks(outcome events.Outcome) (events.Outcome, []string) {
	var failed []string
	failedOutcome := outcome
	for _, c := range f.checks {
		if c.OK {
			continue
		}
		if o, ok := failedCheckOutcome(c.Name); ok && len(failed) == 0 && (f.loopOutcome == "" || o == OutcomeCheckFailed) {
			failedOutcome = o
		}
		failed = append(failed, fmt.Sprintf("%s failed: %s", c.Name, c.Evidence))
	}
	return failedOutcome, failed
}

// failedCheckOutcome is the outcome a failed check names, the same at the
// final checks as after a step: whether the app's exit or its lost window
// is seen by the last step's checks or by the final ones is a matter of
// how fast the app reacts to the last step, which must not change the
// report.
func failedCheckOutcome(name string) (events.Outcome, bool) {
	if strings.HasPrefix(name, toolCheckPrefix) {
		return OutcomeCheckFailed, true
	}
	o, ok := map[string]events.Outcome{"process_alive": OutcomeAppExited, "window_present": OutcomeWindowLost,
		checkAppResponsive: OutcomeAppHung, "fatal_pattern": OutcomeFatalLog}[name]
	return o, ok
}

// nothingVerified is the concern of a goal run that passes with no
// success criteria: nothing but the app's health was checked.
const nothingVerified = "nothing the scenario declared verified the goal; the run shows only that the app stayed up"

// decideVerdict decides the run's verdict from its facts (the table in
// docs/language.md, "How a run's verdict is decided"):
//   - escalate locks test-error/escalated at the moment it was called;
//   - a run cut short by the runtime (deadline, Ctrl-C, abort, fault) or a
//     success criterion that cannot be evaluated is test-error;
//   - a run passes only if the deterministic checks pass: the app's
//     health, the goal's success criteria, the declared tools marked
//     check: true;
//   - the model's goal-met never upgrades a failure;
//   - the model's goal-not-met alone is a concern, and app-failed only with
//     a deterministic failure or a check_expectation that came back false;
//   - a pass that rests on less than it seems is pass-with-concerns: no
//     success criteria, goal-met after a declared tool's last call failed,
//     goal-met after the last input actions all failed.
//
// The calls that did not succeed are summarised in every verdict's
// reasons but an escalation's. It has no side effects: the concerns the
// verdict itself raises are returned for the caller to publish, and are
// already among the verdict's reasons.
func decideVerdict(f verdictFacts) (v events.Decision, raised []string) {
	outcome := OutcomeCompleted
	if f.loopOutcome != "" {
		outcome = f.loopOutcome
	}
	failedOutcome, failed := f.failedChecks(outcome)
	if f.escalated {
		reasons := []string{"escalated"}
		if f.end != nil {
			reasons = []string{f.end.reason}
		}
		return events.Decision{Verdict: events.VerdictTestError, Outcome: OutcomeEscalated, Reasons: reasons}, nil
	}
	summary := f.calls.summary()
	withSummary := func(reasons []string) []string {
		if summary == "" {
			return reasons
		}
		return append(reasons, summary)
	}
	by := f.by
	if by == "" {
		by = "the model"
	}
	neverUpgrades := by + " recorded goal-met, which never upgrades a failed check"
	if e := f.end; e != nil && e.verdict == events.VerdictTestError {
		return events.Decision{Verdict: events.VerdictTestError, Outcome: e.outcome, Reasons: withSummary(append([]string{e.reason}, failed...))}, nil
	}
	if e := f.end; e != nil && e.verdict == events.VerdictAppFailed {
		reasons := append([]string{e.reason}, failed...)
		if f.modelVerdict == events.ModelGoalMet {
			reasons = append(reasons, neverUpgrades)
		}
		return events.Decision{Verdict: events.VerdictAppFailed, Outcome: e.outcome, Reasons: withSummary(reasons)}, nil
	}
	if len(failed) > 0 {
		reasons := failed
		if f.modelVerdict == events.ModelGoalMet {
			reasons = append(reasons, neverUpgrades)
		}
		return events.Decision{Verdict: events.VerdictAppFailed, Outcome: failedOutcome, Reasons: withSummary(reasons)}, nil
	}
	if f.modelVerdict == events.ModelGoalNotMet && f.checkFalse {
		why := fmt.Sprintf("the model recorded goal-not-met: %s", f.modelReason)
		return events.Decision{Verdict: events.VerdictAppFailed, Outcome: outcome,
			Reasons: withSummary([]string{why, "and a check_expectation during the loop came back false"})}, nil
	}
	concerns := slices.Clip(f.concerns)
	raise := func(c string) {
		raised = append(raised, c)
		if !slices.Contains(concerns, c) {
			concerns = append(concerns, c)
		}
	}
	switch f.modelVerdict {
	case events.ModelGoalNotMet:
		raise(fmt.Sprintf("the model recorded goal-not-met: %s", f.modelReason))
	case events.ModelGoalMet:
		for _, name := range f.calls.declaredOrder {
			if last := f.calls.lastDeclared[name]; !last.ok && !(last.check && last.failed) {
				raise(fmt.Sprintf("%s recorded goal-met, but the last call of %s did not succeed: %s", by, name, last.message))
			}
		}
		listed := strings.Join(f.calls.failedInput, ", ")
		switch n := f.calls.failedInputs; {
		case n == 1:
			raise(fmt.Sprintf("%s recorded goal-met while its last input action was refused or failed: %s", by, listed))
		case n > len(f.calls.failedInput):
			raise(fmt.Sprintf("%s recorded goal-met while its last %d input actions were all refused or failed; the last %d: %s", by, n, len(f.calls.failedInput), listed))
		case n > 1:
			raise(fmt.Sprintf("%s recorded goal-met while its last %d input actions were all refused or failed: %s", by, n, listed))
		}
	}
	if f.goal && !f.success {
		raise(nothingVerified)
	}
	if len(concerns) > 0 {
		return events.Decision{Verdict: events.VerdictPassConcerns, Outcome: outcome,
			Reasons: withSummary(append([]string{"the deterministic checks passed, with concerns"}, concerns...))}, raised
	}
	return events.Decision{Verdict: events.VerdictPass, Outcome: outcome, Reasons: withSummary([]string{"the deterministic checks passed"})}, nil
}
