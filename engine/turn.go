package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/memory"
	"github.com/kasmrt/kasmrt/engine/model"
	"github.com/kasmrt/kasmrt/scenarios"
)

// stepper is what the goal loop asks of the run it drives: the next turn
// planned, the model's call run through the guards and the tools, the
// calls that did not run recorded, and the application checked between
// calls. *runState is the stepper of a run; the loop keeps its own
// counters and reads the verdict's facts, the model's health and the
// guard book as the owned values they are.
type stepper interface {
	// plan asks the planner (the action cache, else the model) for the
	// next turn from what the model has seen.
	plan(ctx context.Context, seen []model.Message) (model.Response, error)
	// approve reports whether the model's call may run: in step mode the
	// operator decides. A rejection is recorded as the call's step and
	// returned as what the model is told.
	approve(ctx context.Context, c model.ToolCall, args map[string]any) (ok bool, rejection string)
	// runCall runs the turn's call through the guards and the tool, as
	// the source it has (the model's, or the action cache's while it
	// replays), and says what it became.
	runCall(ctx context.Context, c call) result
	// unrun records the model's calls that did not run, with the status
	// and the message they got.
	unrun(calls []model.ToolCall, status events.Status, msg string)
	// checkApp checks the application after a step or before a turn. It
	// returns why the loop ends, in words, or "" when the run goes on.
	checkApp(ctx context.Context) (ended string)
	// takeoverPoint lets the operator take the application over between
	// turns; it returns the Environment Update the model is told after a
	// takeover, or "".
	takeoverPoint(ctx context.Context) string
	// budgets publishes every bound with its use.
	budgets()
	// surroundings tells the model's memory what surrounds the screen:
	// the windows, the values to type, the tab, the named controls.
	surroundings(ctx context.Context, mem *memory.Memory)
}

// goalLoop is a goal run's agentic loop: the conversation with the model
// and the bound on its model calls. The run (a stepper) plans each turn
// and steps the calls the model chooses; the loop keeps its counters
// (stats), reads and sets the verdict's facts (facts) and the model's
// health (model), and reads the guard book for the tool list.
type goalLoop struct {
	run     stepper
	conv    *conversation
	maxIter int

	stats *loopStats
	facts *verdictFacts
	model *modelState
	book  *guardBook
	steer *steering
	files *scenarios.Files
	// bus carries the loop's concerns and log lines; redact keeps the
	// run's secrets out of what the model is sent.
	bus    *events.Bus
	redact func(string) string
}

// concern raises a concern once, however often it is raised.
func (l *goalLoop) concern(msg string) { raiseConcern(l.bus, l.facts, msg) }

func (l *goalLoop) log(format string, args ...any) { logTo(l.bus, format, args...) }

// turn runs one turn of the loop: the checks before it, the model's
// reply and the one call it may run. It reports whether the loop ends.
func (l *goalLoop) turn(ctx context.Context) bool {
	if end, skip := l.beforeTurn(ctx); end || skip {
		return end
	}
	l.conv.takeNotes(l.steer.takeNotes())
	resp, asked, end := l.askModel(ctx)
	if !asked {
		return end
	}
	return l.answerTurn(ctx, resp)
}

// beforeTurn decides whether the loop may spend another model call: end
// is set when the loop ends, skip when the turn starts over (a pause that
// ended with the work context, or an operator's takeover that ended, whose
// Environment Update the model is told).
func (l *goalLoop) beforeTurn(ctx context.Context) (end, skip bool) {
	if ctx.Err() != nil {
		l.stats.ended = l.stopped(ctx)
		return true, false
	}
	if l.stats.iterations >= l.maxIter {
		l.stats.ended = fmt.Sprintf("the loop used its %d model calls without a model verdict", l.maxIter)
		l.facts.loopOutcome = OutcomeNoModelVerdict
		l.concern(l.stats.ended)
		return true, false
	}
	if err := l.steer.waitWhilePaused(ctx); err != nil {
		return false, true
	}
	if upd := l.run.takeoverPoint(ctx); upd != "" {
		// Back to the top: a pause the operator set still holds.
		l.conv.tell(upd)
		return false, true
	}
	// The app can end between turns (a dialog closing after the last
	// action settled): look before spending a model call.
	if ended := l.run.checkApp(ctx); ended != "" {
		l.stats.ended = ended
		return true, false
	}
	if l.model.disabled {
		// The vision judge may have used up the model's failures.
		l.degrade("the model is off after repeated failures")
		return true, false
	}
	return false, false
}

// stopped says why the work context ended, in the words the verdict
// uses: the operator's abort, Ctrl-C or a signal, or the deadline.
func (l *goalLoop) stopped(ctx context.Context) string {
	switch {
	case l.steer.isAborted():
		return "the operator aborted the run"
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return "the run's time ran out"
	}
	why := context.Cause(ctx)
	if why == nil {
		// A context of the runtime's own (the pausable deadline) may
		// find no cause where the parent's would be.
		why = ctx.Err()
	}
	return fmt.Sprintf("the run was interrupted (%v)", why)
}

// askModel asks the planner (the action cache, else the model) for the
// next turn from the conversation. asked is set when a reply came back;
// otherwise end says whether the loop ends.
func (l *goalLoop) askModel(ctx context.Context) (resp model.Response, asked, end bool) {
	resp, err := l.run.plan(ctx, l.conv.context())
	if errors.Is(err, errReplayEnded) {
		return resp, false, true
	}
	if err == nil {
		return resp, true, false
	}
	if ctx.Err() != nil {
		return resp, false, false
	}
	if errors.Is(err, model.ErrMalformedResponse) {
		msg := "the model's reply was not valid: " + err.Error()
		if l.malformed(msg) {
			return resp, false, true
		}
		l.conv.tell("Your last reply could not be read (" + truncate(err.Error(), 200) + "). Reply with exactly one call to one of: " + strings.Join(l.book.names, ", "))
		return resp, false, false
	}
	if l.model.disabled {
		l.degrade("the model is off after repeated failures")
		return resp, false, true
	}
	l.run.budgets()
	return resp, false, false
}

// answerTurn handles the model's reply: a reply without exactly one call
// with readable arguments runs nothing; the one call is offered for
// approval in step mode, then run. It reports whether the loop ends.
func (l *goalLoop) answerTurn(ctx context.Context, resp model.Response) bool {
	calls := resp.ToolCalls
	if len(calls) == 0 {
		l.conv.add(model.Message{Role: model.RoleAssistant, Text: l.historyText(resp.Text)})
		l.conv.tell("Your reply had no tool call. Reply with exactly one call to one of: " + strings.Join(l.book.names, ", "))
		return l.malformed("a reply without a tool call")
	}
	for _, c := range calls {
		if c.Rescued {
			l.stats.rescued++
		}
	}
	// Of a turn with many calls only the first few are kept: the
	// history answers each call it holds, and the rest would only grow
	// every later request.
	kept := calls[:min(len(calls), maxCallsRecorded)]
	l.conv.add(model.Message{Role: model.RoleAssistant, Text: l.historyText(resp.Text), ToolCalls: l.historyCalls(kept)})
	if len(calls) > 1 {
		// A turn with several calls executes none; each kept one gets
		// an error.
		msg := fmt.Sprintf("%d calls in one turn; none was executed. Make exactly one tool call per turn.", len(calls))
		l.run.unrun(calls, events.StatusMalformed, msg)
		for _, c := range kept {
			l.conv.answer(c.ID, msg)
		}
		return l.malformed("several calls in one turn")
	}
	c := calls[0]
	args, perr := parseArgs(c.Arguments)
	if perr != nil {
		msg := fmt.Sprintf("the arguments of %s are not a JSON object: %v", c.Name, perr)
		l.run.unrun(calls, events.StatusMalformed, msg)
		l.conv.answer(c.ID, msg)
		return l.malformed(msg)
	}
	if ok, rejection := l.run.approve(ctx, c, args); !ok {
		if rejection != "" {
			l.conv.answer(c.ID, rejection)
		}
		return false
	}
	return l.runModelCall(ctx, c, args)
}

// runModelCall runs the model's one call as a step and answers it with
// what it did, the screen it left and any hint that the loop looks stuck;
// then it spends the call's budgets. It reports whether the loop ends.
func (l *goalLoop) runModelCall(ctx context.Context, c model.ToolCall, args map[string]any) bool {
	before := l.lastSum()
	res := l.run.runCall(ctx, call{ID: c.ID, Tool: c.Name, Args: args})
	msg := res.message
	if change := l.screenChange(c.Name, args, before, res); change != "" {
		msg += "\n" + change
	}
	// Calls the guards stopped did nothing, so they say nothing about
	// whether the loop is making progress.
	if res.fail != failMalformed && res.fail != failRefused {
		if hint, kind := l.conv.stuck.observe(c.Name, c.Arguments, l.lastSum(), l.book.isAction(c.Name)); hint != "" {
			msg += "\n" + hint
			l.concern("the loop looked stuck: " + kind)
		}
	}
	l.conv.add(l.toolMessage(c.ID, msg, res))
	l.conv.forget()
	if res.status == events.StatusOK {
		l.updateEnvironment(ctx)
	}
	return l.afterModelCall(ctx, c, res)
}

// updateEnvironment tells the model's memory what surrounds the screen
// after a call that succeeded (the windows, the values to type, the tab,
// the named controls), and passes its Environment Update on when there is
// one to say.
func (l *goalLoop) updateEnvironment(ctx context.Context) {
	l.run.surroundings(ctx, l.conv.memory)
	if upd := l.conv.memory.EnvironmentUpdate(); upd != "" {
		l.conv.tell(upd)
	}
}

// toolMessage is a call's answer for the model, redacted, with the screen
// the call left when it has one, registered in the model's memory.
func (l *goalLoop) toolMessage(callID, msg string, res result) model.Message {
	toolMsg := model.Message{Role: model.RoleTool, CallID: callID, Text: l.redact(msg)}
	if res.frame == nil {
		return toolMsg
	}
	// The screen as the model sees it (modelImages.png).
	data, err := l.model.images.png(res.frame)
	if err != nil {
		l.log("encode the screen for the model: %v", err)
		return toolMsg
	}
	sum, err := res.frame.Sum()
	if err != nil {
		l.log("hash the screen for the model's memory: %v", err)
		return toolMsg
	}
	handle := l.conv.memory.AddScreen(sum, "screen "+res.screen)
	toolMsg.Text += "\nThe screen is " + handle + "."
	toolMsg.Images = []model.Image{{Handle: handle, PNG: data}}
	return toolMsg
}

// afterModelCall counts a call's failure, publishes the budgets and ends
// the loop when the call, the checks or a budget says so. It reports
// whether the loop ends.
func (l *goalLoop) afterModelCall(ctx context.Context, c model.ToolCall, res result) bool {
	switch res.fail {
	case failMalformed:
		if l.malformed(res.message) {
			return true
		}
	case failAssertion, failResolution:
		if l.files.Scenario.Tools[c.Name].Run != "" {
			l.stats.totalToolErrors++
		}
	}
	l.run.budgets()
	if res.endLoop != "" {
		l.stats.ended = res.endLoop
		return true
	}
	if ended := l.run.checkApp(ctx); ended != "" {
		l.stats.ended = ended
		return true
	}
	return l.overBudget()
}

// overBudget degrades the loop when the declared tools failed too often
// in a row or the waiting tools used their time. It reports whether the
// loop ends.
func (l *goalLoop) overBudget() bool {
	runner := l.files.Operator.Runner
	if why := l.book.overBudget(runner.MaxToolErrors, runner.MaxHoldS); why != "" {
		l.degrade(why)
		return true
	}
	return false
}

// malformed counts a malformed reply; at the allowance the loop degrades.
// It reports whether the loop must end.
func (l *goalLoop) malformed(what string) bool {
	l.stats.malformed++
	l.run.budgets()
	limit := l.files.Operator.Runner.MaxRetriesPerStep
	if l.stats.malformed >= limit {
		l.degrade(fmt.Sprintf("%d malformed replies (runner.max_retries_per_step = %d); the last: %s", l.stats.malformed, limit, what))
		return true
	}
	return false
}

// degrade ends the loop; the deterministic checks decide the verdict.
func (l *goalLoop) degrade(why string) {
	l.stats.ended = "degraded: " + why
	l.facts.loopOutcome = OutcomeDegraded
	l.concern("the loop degraded: " + why)
}

// lastSum is the last capture's sum, decoding a headless page's screen
// if nothing has yet. It is zero when there is no capture, or when the
// pixels do not decode, which is logged as a failed capture is.
func (l *goalLoop) lastSum() [32]byte {
	sum, err := l.book.lastSum()
	if err != nil {
		l.log("compare the screen with the last one: %v", err)
	}
	return sum
}
