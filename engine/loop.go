package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/memory"
	"github.com/kasmrt/kasmrt/engine/model"
	"github.com/kasmrt/kasmrt/engine/report"
	"github.com/kasmrt/kasmrt/scenarios"
)

// modelState is the run's model: the client, its profile and its health,
// and what the model is asked (the goal's prompt, the tool list, the
// seeds). Its calls are events, and its failures concerns.
type modelState struct {
	client   *model.Client
	profile  model.Profile
	failures int  // consecutive failed calls
	disabled bool // off for the rest of the run (model.disable_after)
	images   *modelImages

	// The parts of the run the model reads and reports to: the files and
	// the runner it is set up from, the bus and the verdict's facts its
	// calls and failures go to, the guard book and the environment its
	// tool list comes from, the actor's gates and the report's images.
	files   *scenarios.Files
	r       *Runner
	bus     *events.Bus
	outcome *verdictFacts
	book    *guardBook
	env     *environment
	act     *actor
	rep     *report.Writer
}

func (m *modelState) publish(e events.Event) events.Event { return m.bus.Publish(e) }

func (m *modelState) log(format string, args ...any) { logTo(m.bus, format, args...) }

// concern raises a concern once, however often it is raised.
func (m *modelState) concern(msg string) { raiseConcern(m.bus, m.outcome, msg) }

// ready reports whether the run has set its model up. The run holds one
// modelState from its start, so the parts that read the model share it;
// it is ready once newModel's client is in it.
func (m *modelState) ready() bool { return m != nil && m.client != nil }

// ModelConfig turns the operator file's model section into the adapter's
// configuration. Problems (unknown profile, options the profile does not
// accept) are returned positioned in the operator file.
func ModelConfig(op *scenarios.Operator, transport http.RoundTripper) (model.Config, error) {
	m := op.Model
	p, err := model.LookupProfile(m.Profile)
	if err != nil {
		return model.Config{}, scenarios.Problems{{Pos: op.KeyPos("model.profile"), Msg: err.Error()}}
	}
	if m.Name != "" {
		p.ServedModel = m.Name
	}
	p.Prompt = p.Prompt.Without(op.Tools.Disabled)
	opts := model.GenerationOptions{MaxTokens: m.MaxTokens, Temperature: m.Temperature, TopP: m.TopP, TopK: m.TopK,
		RepetitionPenalty: m.RepetitionPenalty, PresencePenalty: m.PresencePenalty, ReasoningEffort: m.ReasoningEffort,
		ToolChoice: m.ToolChoice}
	if err := model.ValidateOptions(p, opts); err != nil {
		var ue *model.UnsupportedOptionsError
		if errors.As(err, &ue) {
			var ps scenarios.Problems
			for _, name := range ue.Names {
				ps = append(ps, scenarios.Problem{Pos: op.KeyPos("model." + name), Msg: fmt.Sprintf("profile %s does not accept %s", p.Name, name)})
			}
			return model.Config{}, ps
		}
		if _, ok := errors.AsType[*model.UnsupportedToolChoiceError](err); ok {
			return model.Config{}, scenarios.Problems{{Pos: op.KeyPos("model.tool_choice"), Msg: err.Error()}}
		}
		return model.Config{}, scenarios.Problems{{Pos: op.KeyPos("model"), Msg: err.Error()}}
	}
	if _, err := model.ResolveEndpoint(m.Endpoint, p.Protocol); err != nil && m.Endpoint != "" {
		return model.Config{}, scenarios.Problems{{Pos: op.KeyPos("model.endpoint"), Msg: err.Error()}}
	}
	retry := op.ModelRetry()
	if retry == 0 {
		retry = model.NoRetry
	}
	cfg := model.Config{Endpoint: m.Endpoint, Key: m.Key, Profile: p, Retry: retry, Options: opts,
		Timeout: time.Duration(m.Timeout * float64(time.Second))}
	if transport != nil {
		cfg.HTTPClient = &http.Client{Transport: transport}
	}
	return cfg, nil
}

// Check applies the checks that need the engine's knowledge (key names,
// model profiles and their options) to loaded files, for `kasmrt validate` and
// before a run launches anything.
func Check(f *scenarios.Files) error {
	if ps := checkKeyNames(f.Scenario); len(ps) > 0 {
		return ps
	}
	if !f.Operator.HasModel() {
		return nil
	}
	_, err := ModelConfig(f.Operator, nil)
	return err
}

// setUpModel builds the run's model client into the run's model state;
// its retries become events.
func (m *modelState) setUpModel() error {
	// The command line resolves the name before launching; a runner used
	// on its own resolves it on first use.
	if err := ResolveModelName(m.env.life, m.files, m.r.opts.ModelTransport); err != nil {
		return err
	}
	cfg, err := ModelConfig(m.files.Operator, m.r.opts.ModelTransport)
	if err != nil {
		return err
	}
	cfg.Sleep = m.r.opts.ModelSleep
	cfg.Gate = m.act.gate("model", m.files.Operator.ModelService())
	cfg.OnAttempt = func(a model.Attempt) {
		if a.Err == nil || a.Delay == 0 {
			return
		}
		m.publish(events.Event{Message: a.Err.Error(), Data: events.ModelRetry{
			Attempt: a.N, Status: a.Status, DelayMS: a.Delay.Milliseconds(),
		}})
	}
	c, err := model.New(cfg)
	if err != nil {
		return err
	}
	m.client, m.profile, m.images = c, cfg.Profile, newModelImages(cfg.Profile)
	m.failures, m.disabled = 0, false
	return nil
}

// Turn sends one request, records its usage and keeps the model's health:
// model.disable_after consecutive failures turn it off. It satisfies
// vision.Turner, so the judge's calls count too.
func (m *modelState) Turn(ctx context.Context, req model.Request) (model.Response, error) {
	if !m.ready() || m.disabled {
		return model.Response{}, errModelOff
	}
	start := time.Now()
	resp, err := m.client.Turn(ctx, req)
	m.noteRecordingFailure()
	if err != nil {
		// A reply that arrived but could not be read is a malformed reply,
		// which has its own allowance; only calls that got no usable
		// answer from the endpoint count towards model.disable_after.
		if ctx.Err() != nil || errors.Is(err, model.ErrMalformedResponse) {
			return resp, err
		}
		m.failures++
		m.publish(events.Event{Message: err.Error(), Data: events.ModelFailed{Consecutive: m.failures}})
		if limit := m.files.Operator.Model.DisableAfter; limit > 0 && m.failures >= limit {
			m.disabled = true
			msg := fmt.Sprintf("the model failed %d calls in a row (model.disable_after = %d); it is off for the rest of the run and judgements are recorded as not judged", m.failures, limit)
			m.publish(events.Event{Kind: events.KindModelDisabled, Message: msg})
			m.concern(msg)
		}
		return resp, err
	}
	m.failures = 0
	m.publish(events.Event{Usage: resp.Usage, DurationMS: time.Since(start).Milliseconds(),
		Message: truncate(m.r.Redact(resp.Text), 500), Data: events.ModelReply{Calls: len(resp.ToolCalls), Attempts: resp.Attempts}})
	return resp, nil
}

var errModelOff = errors.New("the model is off for the rest of the run (not judged)")

// runLoop is the agentic loop: one model turn, its one call through the
// guards and the tool, the result back to the model, until the model
// records a verdict, escalates, or a bound ends the loop. The turns are in
// turn.go; the exchange with the model is the conversation's
// (conversation.go).
func (s *runState) runLoop(ctx context.Context) {
	s.loop.ran = true
	if err := s.model.setUpModel(); err != nil {
		s.outcome.stop(events.VerdictTestError, OutcomeRuntimeFault, fmt.Sprintf("set up the model: %v", err))
		s.loop.ended = "the model could not be set up"
		return
	}
	s.model.warmModelImages(ctx)
	l := newGoalLoop(s, s)
	for {
		if l.turn(ctx) {
			return
		}
	}
}

// newGoalLoop is the goal loop of run s, stepping through run (s itself,
// or a test's stepper around it): the conversation starts with the goal's
// first message, and the loop holds the run's counters, facts, model,
// guard book and steering.
func newGoalLoop(s *runState, run stepper) *goalLoop {
	op := s.files.Operator
	mem := memory.New(op.Memory.EmitPolicy, op.Memory.KeepImages)
	return &goalLoop{
		run: run, conv: newConversation(mem, s.model.firstMessage(mem)), maxIter: s.model.maxIterations(),
		stats: &s.loop, facts: &s.outcome, model: s.model, book: &s.book, steer: s.r.steer, files: s.files,
		bus: s.bus, redact: s.r.Redact,
	}
}

// plan is the stepper's planner: the action cache's next call, else the
// model's reply (planner.go).
func (s *runState) plan(ctx context.Context, seen []model.Message) (model.Response, error) {
	return s.planner.plan(ctx, seen)
}

// runCall is the stepper's run of a turn's call: the step, as the turn's
// source, then the action cache's record of it.
func (s *runState) runCall(ctx context.Context, c call) result {
	c.Source = s.planner.turnSource()
	if c.Source == events.SourceCache && c.Tool == "wait" {
		c.Until = s.planner.cache.waitedFor()
	}
	res := s.step(ctx, c)
	s.planner.cacheCall(c.Tool, c.Args, res)
	return res
}

// approve reports whether the model's call may run: outside step mode
// always; in step mode once the operator approves it. A call the guard
// refuses anyway is not offered: it is refused when it runs, without
// asking the operator about a call that cannot run. A rejection is
// recorded as the call's step and is what the model is told.
func (s *runState) approve(ctx context.Context, c model.ToolCall, args map[string]any) (ok bool, rejection string) {
	if !s.r.steer.inStepMode() || s.guard(call{Tool: c.Name, Args: args, Source: s.planner.turnSource()}).status != "" {
		return true, ""
	}
	s.r.steer.clearDecision()
	s.bus.Publish(events.Event{Kind: events.KindProposal, Step: s.book.stepN + 1, Tool: c.Name, Args: args, Source: s.planner.turnSource()})
	d, err := s.r.steer.awaitDecision(ctx)
	if err != nil {
		return false, ""
	}
	if d.approve {
		return true, ""
	}
	msg := "the operator rejected this call"
	if d.reason != "" {
		msg += ": " + d.reason
	}
	s.unrun([]model.ToolCall{c}, events.StatusRefused, msg)
	return false, msg
}

// checkApp is checkAfterStep for the loop: why the loop ends when the
// checks stopped the run, or "".
func (s *runState) checkApp(ctx context.Context) string {
	if s.checkAfterStep(ctx) {
		return ""
	}
	switch {
	case s.env.appFinished:
		return "the application exited successfully"
	case s.outcome.end != nil:
		return "a deterministic check failed: " + s.outcome.end.reason
	default:
		return "the run was stopped"
	}
}

// maxIterations is the loop's bound on model calls: the scenario's
// agentic.max_iterations, or the operator's runner.max_iterations.
func (m *modelState) maxIterations() int {
	if n := m.files.Scenario.AgenticMaxIterations; n > 0 {
		return n
	}
	return m.files.Operator.Runner.MaxIterations
}

// maxCallsRecorded is how many calls of a turn with several are recorded
// as steps of their own. The rest are one step, and the turn has one
// screen, so a reply of 500 calls costs a few steps and one capture rather
// than hundreds of each and the deadline with them.
const maxCallsRecorded = 3

// maxToolsNamed bounds the tool names the summary step of a turn's extra
// calls lists, and maxToolNameBytes each name (the model wrote them).
const (
	maxToolsNamed    = 5
	maxToolNameBytes = 64
)

// unrun records the model's calls that did not run: the first
// maxCallsRecorded as steps of their own, the rest as one summary step
// (tool more_calls) counting them by tool. Only the last step gets a
// screen.
func (s *runState) unrun(calls []model.ToolCall, status events.Status, msg string) {
	kept, rest := calls[:min(len(calls), maxCallsRecorded)], calls[min(len(calls), maxCallsRecorded):]
	for i, c := range kept {
		s.recordUnrunStep(c, status, msg, i == len(kept)-1 && len(rest) == 0)
	}
	if len(rest) == 0 {
		return
	}
	counts := map[string]int{}
	for _, c := range rest {
		counts[truncate(c.Name, maxToolNameBytes)]++
		// Each call counts in the verdict's summary as itself, not as
		// the one step that records them.
		s.tallyUnrun(c, status)
	}
	names := sortedKeys(counts)
	slices.SortStableFunc(names, func(a, b string) int { return counts[b] - counts[a] })
	var parts []string
	for i, name := range names {
		if i == maxToolsNamed {
			parts = append(parts, fmt.Sprintf("%d other tools", len(names)-i))
			break
		}
		parts = append(parts, fmt.Sprintf("%s ×%d", name, counts[name]))
	}
	summary := fmt.Sprintf("%d more calls in this turn (%s), recorded as this one step; %s", len(rest), strings.Join(parts, ", "), msg)
	s.recordStep(model.ToolCall{Name: "more_calls", Arguments: fmt.Sprintf(`{"calls": %d}`, len(rest))}, status, summary, true)
}

// recordUnrunStep records a model call that was not executed as a step,
// so the report and the console show every refusal, with the failure
// screen when screen is set.
func (s *runState) recordUnrunStep(c model.ToolCall, status events.Status, msg string, screen bool) {
	s.recordStep(c, status, msg, screen)
	s.tallyUnrun(c, status)
}

// tallyUnrun counts a model call that was not executed for the verdict.
func (s *runState) tallyUnrun(c model.ToolCall, status events.Status) {
	s.tally(call{Tool: c.Name, Source: s.planner.turnSource()}, s.book.tools[c.Name], result{status: status}, false)
}

// recordStep publishes a step that ran nothing, with the failure screen
// when screen is set.
func (s *runState) recordStep(c model.ToolCall, status events.Status, msg string, screen bool) {
	s.book.stepN++
	args, err := parseArgs(c.Arguments)
	if err != nil {
		args = map[string]any{"raw": truncate(c.Arguments, 200)}
	}
	res := result{status: status, message: msg}
	if screen {
		res = s.act.withFailureScreen(s.env.life, s.book.stepN, res)
	}
	s.bus.Publish(events.Event{Kind: events.KindStepEnded, Step: s.book.stepN, Tool: c.Name, Args: args, Source: s.planner.turnSource(),
		Status: status, Message: res.message, Screen: res.screen})
}

// budgets publishes every bound with its use.
func (s *runState) budgets() {
	op, sc := s.files.Operator, s.files.Scenario
	maxIter := s.model.maxIterations()
	total, reserve := s.r.deadlines()
	b := []events.Budget{
		{Name: "iterations", Used: float64(s.loop.iterations), Limit: float64(maxIter)},
		{Name: "malformed", Used: float64(s.loop.malformed), Limit: float64(op.Runner.MaxRetriesPerStep)},
		{Name: "tool_errors", Used: float64(s.book.consecutiveToolErrors), Limit: float64(op.Runner.MaxToolErrors)},
		{Name: "hold", Used: s.book.held.Seconds(), Limit: op.Runner.MaxHoldS, Unit: "s"},
		{Name: "deadline", Used: s.deadlineUsed().Seconds(), Limit: total.Seconds(), Unit: "s"},
		{Name: "deadline_reserve", Used: 0, Limit: reserve.Seconds(), Unit: "s"},
	}
	if s.model.ready() {
		b = append(b, events.Budget{Name: "model_failures", Used: float64(s.model.failures), Limit: float64(op.Model.DisableAfter)})
	}
	for _, name := range sortedKeys(sc.Tools) {
		if dt := sc.Tools[name]; dt.Budget > 0 {
			b = append(b, events.Budget{Name: "tool:" + name, Used: float64(s.book.declaredCalls[name]), Limit: float64(dt.Budget)})
		}
	}
	s.bus.Publish(events.Event{Kind: events.KindBudget, Budgets: b})
}

// modelTools is the run's tool list in the model's form.
func (m *modelState) modelTools() []model.Tool {
	out := make([]model.Tool, 0, len(m.book.names))
	for _, name := range m.book.names {
		t := m.book.tools[name]
		if name == "click_element" {
			t = m.env.withControlNames(t)
		}
		params, _ := json.Marshal(t.JSONSchema())
		out = append(out, model.Tool{Name: name, Description: t.Description, Parameters: params})
	}
	return out
}

// goalPrompt is the first user message: the goal, the plan and what the
// scenario provides (names only, never values).
func (m *modelState) goalPrompt() string {
	sc := m.files.Scenario
	var b strings.Builder
	fmt.Fprintf(&b, "Goal: %s\n", sc.Goal)
	if len(sc.Plan) > 0 {
		b.WriteString("\nPlan:\n")
		for i, p := range sc.Plan {
			fmt.Fprintf(&b, "%d. %s\n", i+1, p)
		}
	}
	if len(sc.Provides) > 0 {
		b.WriteString("\nValues you can type by ref (type_text): ")
		b.WriteString(strings.Join(sortedKeys(sc.Provides), ", "))
		b.WriteString(".\n")
		// Saying where bound secrets may go spares the model refusals; the
		// places are the author's words, never the values.
		for _, ref := range sortedKeys(sc.Provides) {
			if places := sc.Bound(ref); places != nil {
				allowed := make([]string, len(places))
				for i, p := range places {
					allowed[i] = p.String()
				}
				fmt.Fprintf(&b, "%s may only go into %s; anywhere else is refused.\n", ref, strings.Join(allowed, ", or "))
			}
		}
	}
	if len(sc.ClickTargets) > 0 {
		b.WriteString("\nClick targets besides center: ")
		var names []string
		for _, n := range sortedKeys(sc.ClickTargets) {
			if d := sc.ClickTargets[n].Description; d != "" {
				n += " (" + d + ")"
			}
			names = append(names, n)
		}
		b.WriteString(strings.Join(names, ", "))
		b.WriteString(".\n")
	}
	b.WriteString("\nStart by observing the screen.")
	return m.r.Redact(b.String())
}

// firstMessage carries the goal, the plan and the scenario's reference
// images, registered as input_image_N.
func (m *modelState) firstMessage(mem *memory.Memory) model.Message {
	sc := m.files.Scenario
	msg := model.Message{Role: model.RoleUser, Text: m.goalPrompt()}
	for _, p := range sc.ReferenceImages {
		data, err := os.ReadFile(sc.ResolvePath(p))
		if err != nil {
			m.log("read reference image %s: %v", p, err)
			continue
		}
		handle := mem.AddInput(data, "reference image "+filepath.Base(p))
		msg.Images = append(msg.Images, model.Image{Handle: handle, PNG: data})
		msg.Text += fmt.Sprintf("\nReference image %s: %s.", handle, filepath.Base(p))
	}
	return msg
}

// redactMessages keeps secrets out of what the model is sent.
func (m *modelState) redactMessages(ms []model.Message) []model.Message {
	out := make([]model.Message, len(ms))
	for i, msg := range ms {
		msg.Text = m.r.Redact(msg.Text)
		out[i] = msg
	}
	return out
}

// seed derives the paired sampling seed from the scenario name, the
// iteration and the sample index (Chat Completions only; the adapter drops it for Responses).
func (m *modelState) seed(iteration int) *int64 {
	if !m.files.Operator.Model.PairedSamplingSeed {
		return nil
	}
	v := PairedSeed(m.files.Scenario.Name, iteration, m.r.opts.SampleIndex)
	return &v
}

func parseArgs(raw string) (map[string]any, error) {
	if strings.TrimSpace(raw) == "" {
		return map[string]any{}, nil
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		return nil, err
	}
	if args == nil {
		args = map[string]any{}
	}
	return args, nil
}

func countImages(ms []model.Message) int {
	n := 0
	for _, m := range ms {
		n += len(m.Images)
	}
	return n
}

func imageBytes(ms []model.Message) int {
	n := 0
	for _, m := range ms {
		for _, img := range m.Images {
			n += len(img.PNG)
		}
	}
	return n
}

func canonicalJSON(raw string) string {
	var v map[string]any
	if json.Unmarshal([]byte(raw), &v) != nil {
		return raw
	}
	b, _ := json.Marshal(v) // map keys are marshalled in sorted order
	return string(b)
}
