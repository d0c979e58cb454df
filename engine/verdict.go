package engine

import (
	"fmt"
	"slices"

	"github.com/kasmrt/kasmrt/engine/events"
)

// verdictFacts is everything the verdict depends on, gathered once the
// run's work is over.
type verdictFacts struct {
	checks []events.Check // the final deterministic checks
	// end is the first reason the run stopped early, or nil.
	end       *ending
	escalated bool
	// loopOutcome is degraded or no-model-verdict, or "" for completed.
	loopOutcome  string
	modelVerdict string // goal-met, goal-not-met, or "" when none was recorded
	modelReason  string
	// checkFalse is set when a check_expectation came back false.
	checkFalse bool
	concerns   []string
}

// facts gathers what the verdict depends on from the run.
func (s *runState) facts(checks []events.Check) verdictFacts {
	return verdictFacts{checks: checks, end: s.end, escalated: s.escalated, loopOutcome: s.loop.outcome,
		modelVerdict: s.modelVerdict, modelReason: s.modelReason, checkFalse: s.checkFalse, concerns: s.concerns}
}

// decideVerdict decides the run's verdict from its facts
// (docs/architecture.md, "The verdict"):
//   - escalate locks test-error/escalated at the moment it was called;
//   - a run cut short by the runtime (deadline, Ctrl-C, abort, fault) is
//     test-error;
//   - a run passes only if the deterministic checks pass;
//   - the model's goal-met never upgrades a failure;
//   - the model's goal-not-met alone is a concern, and app-failed only with
//     a deterministic failure or a check_expectation that came back false.
//
// It has no side effects: a concern the verdict itself raises (goal-not-met
// alone) is returned for the caller to publish, and is already among the
// verdict's reasons.
func decideVerdict(f verdictFacts) (v events.Verdict, concern string) {
	var failed []string
	for _, c := range f.checks {
		if !c.OK {
			failed = append(failed, fmt.Sprintf("%s failed: %s", c.Name, c.Evidence))
		}
	}
	if f.escalated {
		reasons := []string{"escalated"}
		if f.end != nil {
			reasons = []string{f.end.reason}
		}
		return events.Verdict{Verdict: events.VerdictTestError, Outcome: OutcomeEscalated, Reasons: reasons}, ""
	}
	if e := f.end; e != nil && e.verdict == events.VerdictTestError {
		return events.Verdict{Verdict: events.VerdictTestError, Outcome: e.outcome, Reasons: append([]string{e.reason}, failed...)}, ""
	}
	outcome := OutcomeCompleted
	if f.loopOutcome != "" {
		outcome = f.loopOutcome
	}
	if e := f.end; e != nil && e.verdict == events.VerdictAppFailed {
		return events.Verdict{Verdict: events.VerdictAppFailed, Outcome: e.outcome, Reasons: append([]string{e.reason}, failed...)}, ""
	}
	if len(failed) > 0 {
		reasons := failed
		if f.modelVerdict == events.ModelGoalMet {
			reasons = append(reasons, "the model recorded goal-met, which never upgrades a failed check")
		}
		return events.Verdict{Verdict: events.VerdictAppFailed, Outcome: outcome, Reasons: reasons}, ""
	}
	concerns := f.concerns
	if f.modelVerdict == events.ModelGoalNotMet {
		why := fmt.Sprintf("the model recorded goal-not-met: %s", f.modelReason)
		if f.checkFalse {
			return events.Verdict{Verdict: events.VerdictAppFailed, Outcome: outcome,
				Reasons: []string{why, "and a check_expectation during the loop came back false"}}, ""
		}
		concern = why
		if !slices.Contains(concerns, why) {
			concerns = append(slices.Clip(concerns), why)
		}
	}
	if len(concerns) > 0 {
		return events.Verdict{Verdict: events.VerdictPassConcerns, Outcome: outcome,
			Reasons: append([]string{"the deterministic checks passed, with concerns"}, concerns...)}, concern
	}
	return events.Verdict{Verdict: events.VerdictPass, Outcome: outcome, Reasons: []string{"the deterministic checks passed"}}, ""
}
