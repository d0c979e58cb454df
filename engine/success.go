package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kasmrt/kasmrt/engine/events"
)

// sourceSuccess marks the runtime's own calls of declared tools when it
// evaluates a goal's success criteria.
const sourceSuccess = "success"

// successPrefix names the checks of a goal's success criteria:
// success.window_title, success.controls.Save, success.tools.saved…
const successPrefix = "success."

// judgeSuccess evaluates the goal's success criteria (success: in the
// scenario) once the loop or the session has ended by the model's or the
// agent's verdict, a budget or a degraded loop, while the application is
// still as the work left it. An escalation, a run the runtime cut short
// and a run a deterministic check already failed are not judged: their
// verdict is settled. Each criterion becomes a check event; the first
// that fails ends the evaluation as app-failed (success-failed), and one
// that cannot be evaluated as test-error (success-error).
func (s *runState) judgeSuccess(ctx context.Context) {
	crit := s.files.Scenario.Success
	if crit == nil || s.outcome.escalated || s.outcome.end != nil || ctx.Err() != nil {
		return
	}
	if s.r.agent == nil && !s.loop.ran {
		return
	}
	// A crash or a lost window since the last call is the app's failure,
	// named as such, not a success criterion's.
	if !s.checkAfterStep(ctx) && s.outcome.end != nil {
		return
	}
	for _, p := range s.probes(&crit.Expect) {
		seen, _, err := s.await(ctx, p)
		name := successPrefix + p.name
		switch {
		case err == nil:
			s.successCheck(name, true, "held: "+p.what)
			continue
		case errors.Is(err, errCannotCheck):
			s.successCheck(name, false, fmt.Sprintf("cannot check that %s: %s", p.what, seen))
			s.stop(events.VerdictTestError, OutcomeSuccessError, fmt.Sprintf("%s cannot be evaluated: cannot check that %s: %s", name, p.what, seen))
		case !errors.Is(err, errNotHeld):
			// The run was cut short: interruption names why.
		default:
			evidence := fmt.Sprintf("expected %s (within %s); found %s", p.what, p.within, seen)
			s.successCheck(name, false, evidence)
			s.stop(events.VerdictAppFailed, OutcomeSuccessFailed, name+" failed: "+evidence)
		}
		return
	}
	for _, tool := range crit.Tools {
		res := s.successTool(ctx, tool)
		name := successPrefix + "tools." + tool
		switch {
		case res.status == events.StatusOK:
			s.successCheck(name, true, res.message)
			continue
		case ctx.Err() != nil:
		case res.fail == failAssertion:
			s.successCheck(name, false, res.message)
			s.stop(events.VerdictAppFailed, OutcomeSuccessFailed, name+" failed: "+res.message)
		default:
			// The command could not run: it checked nothing.
			s.successCheck(name, false, res.message)
			s.stop(events.VerdictTestError, OutcomeSuccessError, name+" cannot be evaluated: "+res.message)
		}
		return
	}
}

// successCheck publishes one success criterion's result.
func (s *runState) successCheck(name string, ok bool, evidence string) {
	s.publish(events.Event{Kind: events.KindCheck, Check: &events.Check{Name: name, OK: ok, Evidence: evidence}})
}

// successTool runs a declared tool for the success criteria as a step of
// its own (source success), so the report shows what it printed. The
// model's budget for the tool does not apply: the criteria are the
// runtime's, not the model's.
func (s *runState) successTool(ctx context.Context, tool string) result {
	s.stepN++
	n := s.stepN
	start := time.Now()
	args := map[string]any{}
	s.publish(events.Event{Kind: events.KindStepStarted, Step: n, Tool: tool, Args: args, Source: sourceSuccess})
	res := s.declared(ctx, call{Tool: tool, Args: args, Source: sourceSuccess})
	res = s.withFailureScreen(ctx, n, res)
	s.publish(events.Event{Kind: events.KindStepEnded, Step: n, Tool: tool, Args: args, Source: sourceSuccess,
		Status: res.status, Message: res.message, Screen: res.screen, DurationMS: time.Since(start).Milliseconds()})
	if ctx.Err() == nil {
		s.outcome.calls.noteDeclared(tool, res, s.files.Scenario.Tools[tool].Check)
	}
	return res
}
