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
// that cannot be evaluated as test-error (success-error). Criteria the
// action cache already found holding, just before it ended the loop, are
// published as it found them.
func (s *runState) judgeSuccess(ctx context.Context) {
	if !s.judgesSuccess(ctx) {
		return
	}
	publish := func(c criterion) {
		s.check.successCheck(c.name, c.ok, c.evidence)
		if c.verdict != "" {
			s.outcome.stop(c.verdict, c.outcome, c.reason)
		}
	}
	if ac := s.planner.cache; ac != nil && ac.judged != nil {
		for _, c := range ac.judged {
			publish(c)
		}
		return
	}
	s.check.evaluateSuccess(ctx, publish)
}

// judgesSuccess reports whether the run's success criteria are to be
// judged now.
func (s *runState) judgesSuccess(ctx context.Context) bool {
	crit := s.files.Scenario.Success
	if crit == nil || s.outcome.escalated || s.outcome.end != nil || ctx.Err() != nil {
		return false
	}
	if s.r.agent == nil && !s.loop.ran {
		return false
	}
	// A crash or a lost window since the last call is the app's failure,
	// named as such, not a success criterion's.
	return s.checkAfterStep(ctx) || s.outcome.end == nil
}

// criterion is one success criterion's result; verdict, outcome and
// reason are set on the one that decides the run.
type criterion struct {
	name, evidence string
	ok             bool
	verdict        events.Verdict
	outcome        events.Outcome
	reason         string
	// unmet is set when the criterion was evaluated and does not hold:
	// the app is not where the goal wants it.
	unmet bool
}

// evaluateSuccess evaluates the criteria in order and tells emit each
// result, up to the first that does not hold or cannot be evaluated. A
// run cut short ends the evaluation without a result.
func (ch *checker) evaluateSuccess(ctx context.Context, emit func(criterion)) {
	crit := ch.files.Scenario.Success
	for _, p := range ch.probes(&crit.Expect) {
		seen, _, err := ch.await(ctx, p)
		name := successPrefix + p.name
		switch {
		case err == nil:
			emit(criterion{name: name, ok: true, evidence: "held: " + p.what})
			continue
		case errors.Is(err, errCannotCheck):
			emit(criterion{name: name, evidence: fmt.Sprintf("cannot check that %s: %s", p.what, seen),
				verdict: events.VerdictTestError, outcome: OutcomeSuccessError,
				reason: fmt.Sprintf("%s cannot be evaluated: cannot check that %s: %s", name, p.what, seen)})
		case !errors.Is(err, errNotHeld):
			// The run was cut short: interruption names why.
		default:
			evidence := fmt.Sprintf("expected %s (within %s); found %s", p.what, p.within, seen)
			emit(criterion{name: name, evidence: evidence, unmet: true,
				verdict: events.VerdictAppFailed, outcome: OutcomeSuccessFailed, reason: name + " failed: " + evidence})
		}
		return
	}
	for _, tool := range crit.Tools {
		res := ch.successTool(ctx, tool)
		name := successPrefix + "tools." + tool
		switch {
		case res.status == events.StatusOK:
			emit(criterion{name: name, ok: true, evidence: res.message})
			continue
		case ctx.Err() != nil:
		case res.fail == failAssertion:
			emit(criterion{name: name, evidence: res.message, unmet: true,
				verdict: events.VerdictAppFailed, outcome: OutcomeSuccessFailed, reason: name + " failed: " + res.message})
		default:
			// The command could not run: it checked nothing.
			emit(criterion{name: name, evidence: res.message,
				verdict: events.VerdictTestError, outcome: OutcomeSuccessError, reason: name + " cannot be evaluated: " + res.message})
		}
		return
	}
}

// successCheck publishes one success criterion's result.
func (ch *checker) successCheck(name string, ok bool, evidence string) {
	ch.bus.Publish(events.Event{Kind: events.KindCheck, Check: &events.Check{Name: name, OK: ok, Evidence: evidence}})
}

// successTool runs a declared tool for the success criteria as a step of
// its own (source success), so the report shows what it printed. The
// model's budget for the tool does not apply: the criteria are the
// runtime's, not the model's.
func (ch *checker) successTool(ctx context.Context, tool string) result {
	ch.book.stepN++
	n := ch.book.stepN
	start := time.Now()
	args := map[string]any{}
	ch.bus.Publish(events.Event{Kind: events.KindStepStarted, Step: n, Tool: tool, Args: args, Source: sourceSuccess})
	res := ch.act.declared(ctx, call{Tool: tool, Args: args, Source: sourceSuccess})
	res = ch.act.withFailureScreen(ctx, n, res)
	ch.bus.Publish(events.Event{Kind: events.KindStepEnded, Step: n, Tool: tool, Args: args, Source: sourceSuccess,
		Status: res.status, Message: res.message, Screen: res.screen, DurationMS: time.Since(start).Milliseconds()})
	if ctx.Err() == nil {
		ch.outcome.calls.noteDeclared(tool, res, ch.files.Scenario.Tools[tool].Check)
	}
	return res
}
