package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/model"
)

// goalLoop is a goal run's agentic loop: the conversation with the
// model, the bound on its model calls, and the run, which steps the calls
// the model chooses through the guards and the tools (runState.step) and
// keeps the loop's counters, the checks and the verdict's facts.
type goalLoop struct {
	run     *runState
	conv    *conversation
	maxIter int
}

// turn runs one turn of the loop: the checks before it, the model's
// reply and the one call it may run. It reports whether the loop ends.
func (l *goalLoop) turn(ctx context.Context) bool {
	if end, skip := l.beforeTurn(ctx); end || skip {
		return end
	}
	l.conv.takeNotes(l.run.r.steer.takeNotes())
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
	s := l.run
	if ctx.Err() != nil {
		s.loop.ended = "the run's time ran out"
		return true, false
	}
	if s.loop.iterations >= l.maxIter {
		s.loop.ended = fmt.Sprintf("the loop used its %d model calls without a model verdict", l.maxIter)
		s.outcome.loopOutcome = OutcomeNoModelVerdict
		s.concern(s.loop.ended)
		return true, false
	}
	if err := s.r.steer.waitWhilePaused(ctx); err != nil {
		return false, true
	}
	if upd := s.takeoverPoint(ctx); upd != "" {
		// Back to the top: a pause the operator set still holds.
		l.conv.tell(upd)
		return false, true
	}
	// The app can end between turns (a dialog closing after the last
	// action settled): look before spending a model call.
	if !s.checkAfterStep(ctx) {
		l.endLoopOnChecks()
		return true, false
	}
	if s.model.disabled {
		// The vision judge may have used up the model's failures.
		l.degrade("the model is off after repeated failures")
		return true, false
	}
	return false, false
}

// askModel asks the planner (the action cache, else the model) for the
// next turn from the conversation. asked is set when a reply came back;
// otherwise end says whether the loop ends.
func (l *goalLoop) askModel(ctx context.Context) (resp model.Response, asked, end bool) {
	s := l.run
	m := s.model
	resp, err := s.plan(ctx, l.conv.context())
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
		l.conv.tell("Your last reply could not be read (" + truncate(err.Error(), 200) + "). Reply with exactly one call to one of: " + strings.Join(s.book.names, ", "))
		return resp, false, false
	}
	if m.disabled {
		l.degrade("the model is off after repeated failures")
		return resp, false, true
	}
	s.budgets()
	return resp, false, false
}

// answerTurn handles the model's reply: a reply without exactly one call
// with readable arguments runs nothing; the one call is offered for
// approval in step mode, then run. It reports whether the loop ends.
func (l *goalLoop) answerTurn(ctx context.Context, resp model.Response) bool {
	s := l.run
	calls := resp.ToolCalls
	if len(calls) == 0 {
		l.conv.add(model.Message{Role: model.RoleAssistant, Text: s.historyText(resp.Text)})
		l.conv.tell("Your reply had no tool call. Reply with exactly one call to one of: " + strings.Join(s.book.names, ", "))
		return l.malformed("a reply without a tool call")
	}
	for _, c := range calls {
		if c.Rescued {
			s.loop.rescued++
		}
	}
	// Of a turn with many calls only the first few are kept: the
	// history answers each call it holds, and the rest would only grow
	// every later request.
	kept := calls[:min(len(calls), maxCallsRecorded)]
	l.conv.add(model.Message{Role: model.RoleAssistant, Text: s.historyText(resp.Text), ToolCalls: s.historyCalls(kept)})
	if len(calls) > 1 {
		// A turn with several calls executes none; each kept one gets
		// an error.
		msg := fmt.Sprintf("%d calls in one turn; none was executed. Make exactly one tool call per turn.", len(calls))
		l.recordSeveralCalls(calls, msg)
		for _, c := range kept {
			l.conv.answer(c.ID, msg)
		}
		return l.malformed("several calls in one turn")
	}
	c := calls[0]
	args, perr := parseArgs(c.Arguments)
	if perr != nil {
		msg := fmt.Sprintf("the arguments of %s are not a JSON object: %v", c.Name, perr)
		s.recordUnrun(c, events.StatusMalformed, msg)
		l.conv.answer(c.ID, msg)
		return l.malformed(msg)
	}
	if !l.approved(ctx, c, args) {
		return false
	}
	return l.runModelCall(ctx, c, args)
}

// approved reports whether the call may run: outside step mode always; in
// step mode once the operator approves it. A call the guard refuses anyway
// is not offered: it is refused when it runs, without asking the operator
// about a call that cannot run. A rejection is the call's answer.
func (l *goalLoop) approved(ctx context.Context, c model.ToolCall, args map[string]any) bool {
	s := l.run
	if !s.r.steer.inStepMode() || s.guard(call{Tool: c.Name, Args: args, Source: s.turnSource()}).status != "" {
		return true
	}
	s.r.steer.clearDecision()
	s.publish(events.Event{Kind: events.KindProposal, Step: s.stepN + 1, Tool: c.Name, Args: args, Source: s.turnSource()})
	d, err := s.r.steer.awaitDecision(ctx)
	if err != nil {
		return false
	}
	if d.approve {
		return true
	}
	msg := "the operator rejected this call"
	if d.reason != "" {
		msg += ": " + d.reason
	}
	s.recordUnrun(c, events.StatusRefused, msg)
	l.conv.answer(c.ID, msg)
	return false
}

// runModelCall runs the model's one call as a step and answers it with
// what it did, the screen it left and any hint that the loop looks stuck;
// then it spends the call's budgets. It reports whether the loop ends.
func (l *goalLoop) runModelCall(ctx context.Context, c model.ToolCall, args map[string]any) bool {
	s := l.run
	before := s.lastSum()
	res := s.step(ctx, call{ID: c.ID, Tool: c.Name, Args: args, Source: s.turnSource()})
	s.cacheCall(c.Name, args, res)
	msg := res.message
	if change := s.screenChange(c.Name, args, before, res); change != "" {
		msg += "\n" + change
	}
	// Calls the guards stopped did nothing, so they say nothing about
	// whether the loop is making progress.
	if res.fail != failMalformed && res.fail != failRefused {
		if hint, kind := l.conv.stuck.observe(c.Name, c.Arguments, s.lastSum(), s.book.isAction(c.Name)); hint != "" {
			msg += "\n" + hint
			s.concern("the loop looked stuck: " + kind)
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
	s := l.run
	l.conv.memory.SetWindows(s.windowTitles())
	s.tellMemory(ctx, l.conv.memory)
	if upd := l.conv.memory.EnvironmentUpdate(); upd != "" {
		l.conv.tell(upd)
	}
}

// toolMessage is a call's answer for the model, redacted, with the screen
// the call left when it has one, registered in the model's memory.
func (l *goalLoop) toolMessage(callID, msg string, res result) model.Message {
	s := l.run
	toolMsg := model.Message{Role: model.RoleTool, CallID: callID, Text: s.r.Redact(msg)}
	if res.frame == nil {
		return toolMsg
	}
	data, err := s.modelPNG(res.frame)
	if err != nil {
		s.log("encode the screen for the model: %v", err)
		return toolMsg
	}
	sum, err := res.frame.Sum()
	if err != nil {
		s.log("hash the screen for the model's memory: %v", err)
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
	s := l.run
	switch res.fail {
	case failMalformed:
		if l.malformed(res.message) {
			return true
		}
	case failAssertion, failResolution:
		if s.files.Scenario.Tools[c.Name].Run != "" {
			s.loop.totalToolErrors++
		}
	}
	s.budgets()
	if res.endLoop != "" {
		s.loop.ended = res.endLoop
		return true
	}
	if !s.checkAfterStep(ctx) {
		l.endLoopOnChecks()
		return true
	}
	return l.overBudget()
}

// overBudget degrades the loop when the declared tools failed too often
// in a row or the waiting tools used their time. It reports whether the
// loop ends.
func (l *goalLoop) overBudget() bool {
	s := l.run
	runner := s.files.Operator.Runner
	if why := s.book.overBudget(runner.MaxToolErrors, runner.MaxHoldS); why != "" {
		l.degrade(why)
		return true
	}
	return false
}
