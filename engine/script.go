package engine

import (
	"context"
	"fmt"

	"github.com/kasmrt/kasmrt/engine/events"
)

// runScript executes a scenario's steps in order through the same guards
// and tools the agentic loop uses. A script is never refused for a missing
// observation: that prerequisite binds model-chosen calls only.
func (s *runState) runScript(ctx context.Context) {
	for i, st := range s.files.Scenario.Steps {
		if ctx.Err() != nil || s.outcome.end != nil {
			return
		}
		// An operator who took the desktop over may have changed
		// anything: the checks look again before the next step.
		took := s.takeoverPoint(ctx) != ""
		if ctx.Err() != nil || (took && !s.checkAfterStep(ctx)) {
			return
		}
		res := s.step(ctx, call{Tool: st.Tool, Args: st.Args, Source: events.SourceScript, Expect: st.Expect})
		if ctx.Err() != nil {
			return
		}
		switch res.fail {
		case failNone:
		case failAssertion:
			s.outcome.stop(events.VerdictAppFailed, OutcomeStepFailed, fmt.Sprintf("step %d (%s) failed: %s", i+1, st.Tool, res.message))
		default:
			s.outcome.stop(events.VerdictTestError, OutcomeStepError, fmt.Sprintf("step %d (%s) could not run: %s", i+1, st.Tool, res.message))
		}
		if !s.checkAfterStep(ctx) {
			if left := len(s.files.Scenario.Steps) - i - 1; s.env.appFinished && left > 0 {
				s.concern(fmt.Sprintf("the application exited successfully after step %d; %d later steps did not run", i+1, left))
			}
			return
		}
	}
	// The last step too can be followed by a takeover (the operator asked
	// while it ran, or wants to finish by hand): the final checks then
	// look at what the operator left, after the checks every step gets.
	if ctx.Err() == nil && s.outcome.end == nil && s.takeoverPoint(ctx) != "" {
		s.checkAfterStep(ctx)
	}
}
