package engine

import (
	"fmt"

	"github.com/kasmrt/kasmrt/engine/events"
)

// verdict decides the run's verdict (seed 000 "The verdict"):
//   - escalate locks test-error/escalated at the moment it was called;
//   - a run cut short by the runtime (deadline, Ctrl-C, abort, fault) is
//     test-error;
//   - a run passes only if the deterministic checks pass;
//   - the model's goal-met never upgrades a failure;
//   - the model's goal-not-met alone is a concern, and app-failed only with
//     a deterministic failure or a check_expectation that came back false.
func (s *runState) verdict(checks []events.Check) events.Verdict {
	var failed []string
	for _, c := range checks {
		if !c.OK {
			failed = append(failed, fmt.Sprintf("%s failed: %s", c.Name, c.Evidence))
		}
	}
	if s.escalated {
		return events.Verdict{Verdict: events.VerdictTestError, Outcome: OutcomeEscalated, Reasons: []string{s.end.reason}}
	}
	if e := s.end; e != nil && e.verdict == events.VerdictTestError {
		return events.Verdict{Verdict: events.VerdictTestError, Outcome: e.outcome, Reasons: append([]string{e.reason}, failed...)}
	}
	outcome := OutcomeCompleted
	if s.loop.outcome != "" {
		outcome = s.loop.outcome
	}
	if e := s.end; e != nil && e.verdict == events.VerdictAppFailed {
		return events.Verdict{Verdict: events.VerdictAppFailed, Outcome: e.outcome, Reasons: append([]string{e.reason}, failed...)}
	}
	if len(failed) > 0 {
		reasons := failed
		if s.modelVerdict == events.ModelGoalMet {
			reasons = append(reasons, "the model recorded goal-met, which never upgrades a failed check")
		}
		return events.Verdict{Verdict: events.VerdictAppFailed, Outcome: outcome, Reasons: reasons}
	}
	if s.modelVerdict == events.ModelGoalNotMet {
		why := fmt.Sprintf("the model recorded goal-not-met: %s", s.modelReason)
		if s.checkFalse {
			return events.Verdict{Verdict: events.VerdictAppFailed, Outcome: outcome,
				Reasons: []string{why, "and a check_expectation during the loop came back false"}}
		}
		s.concern(why)
	}
	if len(s.concerns) > 0 {
		return events.Verdict{Verdict: events.VerdictPassConcerns, Outcome: outcome, Reasons: append([]string{"the deterministic checks passed, with concerns"}, s.concerns...)}
	}
	return events.Verdict{Verdict: events.VerdictPass, Outcome: outcome, Reasons: []string{"the deterministic checks passed"}}
}
