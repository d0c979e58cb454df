package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/model"
)

// loopTurn runs one turn of the loop: the checks before it, the model's
// reply and the one call it may run. It reports whether the loop ends.
func (s *runState) loopTurn(ctx context.Context, conv *conversation, maxIter int) bool {
	if end, skip := s.beforeTurn(ctx, maxIter); end || skip {
		return end
	}
	conv.takeNotes(s.r.steer.takeNotes())
	resp, asked, end := s.askModel(ctx, conv)
	if !asked {
		return end
	}
	return s.answerTurn(ctx, conv, resp)
}

// beforeTurn decides whether the loop may spend another model call: end
// is set when the loop ends, skip when the turn starts over (a pause that
// ended with the work context).
func (s *runState) beforeTurn(ctx context.Context, maxIter int) (end, skip bool) {
	if ctx.Err() != nil {
		s.loop.ended = "the run's time ran out"
		return true, false
	}
	if s.loop.iterations >= maxIter {
		s.loop.ended = fmt.Sprintf("the loop used its %d model calls without a model verdict", maxIter)
		s.outcome.loopOutcome = OutcomeNoModelVerdict
		s.concern(s.loop.ended)
		return true, false
	}
	if err := s.r.steer.waitWhilePaused(ctx); err != nil {
		return false, true
	}
	// The app can end between turns (a dialog closing after the last
	// action settled): look before spending a model call.
	if !s.checkAfterStep(ctx) {
		s.endLoopOnChecks()
		return true, false
	}
	if s.model.disabled {
		// The vision judge may have used up the model's failures.
		s.degrade("the model is off after repeated failures")
		return true, false
	}
	return false, false
}

// askModel sends the conversation to the model. asked is set when a reply
// came back; otherwise end says whether the loop ends.
func (s *runState) askModel(ctx context.Context, conv *conversation) (resp model.Response, asked, end bool) {
	m := s.model
	req := model.Request{System: m.profile.Prompt.Text, Messages: s.redactMessages(conv.context()), Tools: s.modelTools(), Seed: s.seed(s.loop.iterations)}
	req.Messages = fitContext(s.files.Operator.Model, req)
	s.publish(events.Event{Data: requestEvent(s.loop.iterations+1, req)})
	s.loop.iterations++
	resp, err := s.Turn(ctx, req)
	if err == nil {
		return resp, true, false
	}
	if ctx.Err() != nil {
		return resp, false, false
	}
	if errors.Is(err, model.ErrMalformedResponse) {
		msg := "the model's reply was not valid: " + err.Error()
		if s.malformed(msg) {
			return resp, false, true
		}
		conv.tell("Your last reply could not be read (" + truncate(err.Error(), 200) + "). Reply with exactly one call to one of: " + strings.Join(s.book.names, ", "))
		return resp, false, false
	}
	if m.disabled {
		s.degrade("the model is off after repeated failures")
		return resp, false, true
	}
	s.budgets()
	return resp, false, false
}

// answerTurn handles the model's reply: a reply without exactly one call
// with readable arguments runs nothing; the one call is offered for
// approval in step mode, then run. It reports whether the loop ends.
func (s *runState) answerTurn(ctx context.Context, conv *conversation, resp model.Response) bool {
	calls := resp.ToolCalls
	if len(calls) == 0 {
		conv.add(model.Message{Role: model.RoleAssistant, Text: s.historyText(resp.Text)})
		conv.tell("Your reply had no tool call. Reply with exactly one call to one of: " + strings.Join(s.book.names, ", "))
		return s.malformed("a reply without a tool call")
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
	conv.add(model.Message{Role: model.RoleAssistant, Text: s.historyText(resp.Text), ToolCalls: s.historyCalls(kept)})
	if len(calls) > 1 {
		// A turn with several calls executes none; each kept one gets
		// an error.
		msg := fmt.Sprintf("%d calls in one turn; none was executed. Make exactly one tool call per turn.", len(calls))
		s.recordSeveralCalls(calls, msg)
		for _, c := range kept {
			conv.answer(c.ID, msg)
		}
		return s.malformed("several calls in one turn")
	}
	c := calls[0]
	args, perr := parseArgs(c.Arguments)
	if perr != nil {
		msg := fmt.Sprintf("the arguments of %s are not a JSON object: %v", c.Name, perr)
		s.recordUnrun(c, events.StatusMalformed, msg)
		conv.answer(c.ID, msg)
		return s.malformed(msg)
	}
	if !s.approved(ctx, conv, c, args) {
		return false
	}
	return s.runModelCall(ctx, conv, c, args)
}

// approved reports whether the call may run: outside step mode always; in
// step mode once the operator approves it. A call the guard refuses anyway
// is not offered: it is refused when it runs, without asking the operator
// about a call that cannot run. A rejection is the call's answer.
func (s *runState) approved(ctx context.Context, conv *conversation, c model.ToolCall, args map[string]any) bool {
	if !s.r.steer.inStepMode() || s.guard(call{Tool: c.Name, Args: args, Source: "model"}).status != "" {
		return true
	}
	s.r.steer.clearDecision()
	s.publish(events.Event{Kind: events.KindProposal, Step: s.stepN + 1, Tool: c.Name, Args: args, Source: "model"})
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
	conv.answer(c.ID, msg)
	return false
}

// runModelCall runs the model's one call as a step and answers it with
// what it did, the screen it left and any hint that the loop looks stuck;
// then it spends the call's budgets. It reports whether the loop ends.
func (s *runState) runModelCall(ctx context.Context, conv *conversation, c model.ToolCall, args map[string]any) bool {
	before := s.lastSum()
	res := s.step(ctx, call{ID: c.ID, Tool: c.Name, Args: args, Source: "model"})
	msg := res.message
	if change := s.screenChange(c.Name, args, before, res); change != "" {
		msg += "\n" + change
	}
	// Calls the guards stopped did nothing, so they say nothing about
	// whether the loop is making progress.
	if res.fail != failMalformed && res.fail != failRefused {
		if hint, kind := conv.stuck.observe(c.Name, c.Arguments, s.lastSum(), s.book.isAction(c.Name)); hint != "" {
			msg += "\n" + hint
			s.concern("the loop looked stuck: " + kind)
		}
	}
	conv.add(s.toolMessage(c.ID, msg, res, conv))
	conv.forget()
	if res.status == events.StatusOK {
		s.updateEnvironment(ctx, conv)
	}
	return s.afterModelCall(ctx, c, res)
}

// updateEnvironment tells the model's memory what surrounds the screen
// after a call that succeeded (the windows, the values to type, the tab,
// the named controls), and passes its Environment Update on when there is
// one to say.
func (s *runState) updateEnvironment(ctx context.Context, conv *conversation) {
	conv.memory.SetWindows(s.windowTitles())
	s.tellMemory(ctx, conv.memory)
	if upd := conv.memory.EnvironmentUpdate(); upd != "" {
		conv.tell(upd)
	}
}

// toolMessage is a call's answer for the model, redacted, with the screen
// the call left when it has one, registered in the model's memory.
func (s *runState) toolMessage(callID, msg string, res result, conv *conversation) model.Message {
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
	handle := conv.memory.AddScreen(sum, "screen "+res.screen)
	toolMsg.Text += "\nThe screen is " + handle + "."
	toolMsg.Images = []model.Image{{Handle: handle, PNG: data}}
	return toolMsg
}

// afterModelCall counts a call's failure, publishes the budgets and ends
// the loop when the call, the checks or a budget says so. It reports
// whether the loop ends.
func (s *runState) afterModelCall(ctx context.Context, c model.ToolCall, res result) bool {
	switch res.fail {
	case failMalformed:
		if s.malformed(res.message) {
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
		s.endLoopOnChecks()
		return true
	}
	return s.overBudget()
}

// overBudget degrades the loop when the declared tools failed too often
// in a row or the waiting tools used their time. It reports whether the
// loop ends.
func (s *runState) overBudget() bool {
	runner := s.files.Operator.Runner
	if why := s.book.overBudget(runner.MaxToolErrors, runner.MaxHoldS); why != "" {
		s.degrade(why)
		return true
	}
	return false
}
