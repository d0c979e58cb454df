package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/scenarios"
)

// ErrBusy is a call made while another call on the same session runs: an
// agent's calls never interleave their input.
var ErrBusy = errors.New("the session is busy with another call; wait for it to return")

// ErrAgentRunOver is a call on an agent run that has ended. The message
// says session, the word the agent knows it by.
var ErrAgentRunOver = errors.New("the session has ended")

// AgentRun is a run whose calls come from an outside agent (over MCP or
// the HTTP API, where it is called a session): a scenario's application
// launched as a run launches it, with the scenario's vocabulary, and its
// calls made by the agent instead of steps or a model. The calls go
// through the run's guards (known tool, closed arguments, secrets by
// reference, declared tools' budgets) but not the loop's rules (observe
// before acting, model budgets); the deadline, redaction and the report
// are the run's. Close decides the verdict by the run's rules, the
// agent's verdict standing for the model's.
type AgentRun struct {
	r    *Runner
	feed *agentFeed

	// busy is held for the length of one call.
	busy sync.Mutex

	done chan struct{}
	res  Result
	err  error
}

// agentFeed carries an agent's calls into the run's own goroutine, which
// alone touches the run's state.
type agentFeed struct {
	ready chan []scenarios.ToolSpec // the tool list, once launched
	calls chan agentCall
	close chan agentClose
	// looks and defines serve a recording (recorder.go).
	looks   chan agentLook
	defines chan agentDefine
	// over is closed when the run stops serving calls.
	over chan struct{}
}

type agentCall struct {
	ctx  context.Context
	tool string
	args map[string]any
	// source is the step's source: events.SourceAgent, or SourceRecord for a
	// step an operator demonstrates.
	source events.Source
	reply  chan CallResult
}

type agentClose struct {
	verdict, reason string
}

// CallResult is what one agent call did, redacted.
type CallResult struct {
	Step    int
	Tool    string
	Status  events.Status
	Message string
	// Screen is the report-relative path of the capture the call made, if
	// any; PNG is its bytes when the call was an observation.
	Screen        string
	PNG           []byte
	Width, Height int
	Point         *events.Point
	// Ended is set when the call ended the session (escalate,
	// record_verdict, or a check that failed after it).
	Ended bool
}

// Open launches the scenario as a session and returns once the
// application is up, with its tool list known. The session lives until
// Close, the deadline, or ctx. When the launch fails the run still writes
// its report; the error names the verdict and the report directory.
func (r *Runner) Open(ctx context.Context) (*AgentRun, error) {
	feed := &agentFeed{
		ready:   make(chan []scenarios.ToolSpec, 1),
		calls:   make(chan agentCall),
		close:   make(chan agentClose, 1),
		looks:   make(chan agentLook),
		defines: make(chan agentDefine),
		over:    make(chan struct{}),
	}
	r.agent = feed
	if err := r.Listen(); err != nil {
		return nil, err
	}
	s := &AgentRun{r: r, feed: feed, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		s.res, s.err = r.Run(ctx)
	}()
	select {
	case <-feed.ready:
		return s, nil
	case <-s.done:
		if s.err != nil {
			return nil, fmt.Errorf("open the session: %w", s.err)
		}
		return nil, fmt.Errorf("open the session: the run ended before it could take calls: %s (%s); the report is in %s",
			s.res.Verdict, r.Redact(strings.Join(s.res.Reasons, "; ")), s.res.ReportDir)
	}
}

// Tools returns the session's tool list, as the model of a run would get
// it.
func (s *AgentRun) Tools() []scenarios.ToolSpec {
	return ToolList(s.r.files, s.r.offersSeen())
}

// ReportDir is where the session's report is written.
func (s *AgentRun) ReportDir() string { return s.r.opts.ReportDir }

// Done is closed when the session's run has ended and its report is
// written.
func (s *AgentRun) Done() <-chan struct{} { return s.done }

// Call runs one tool call from the agent. A second call while one runs
// gets ErrBusy; a call on an ended session gets ErrSessionOver. A refused
// or failed call is not an error: its Status and Message say what
// happened, as the step in the report does.
func (s *AgentRun) Call(ctx context.Context, tool string, args map[string]any) (CallResult, error) {
	if !s.busy.TryLock() {
		return CallResult{}, ErrBusy
	}
	defer s.busy.Unlock()
	if args == nil {
		args = map[string]any{}
	}
	c := agentCall{ctx: ctx, tool: tool, args: args, reply: make(chan CallResult, 1)}
	select {
	case s.feed.calls <- c:
	case <-s.feed.over:
		return CallResult{}, ErrAgentRunOver
	case <-ctx.Done():
		return CallResult{}, ctx.Err()
	}
	// The run answers every call it took, even when ctx ends meanwhile:
	// the step is in the report either way.
	return <-c.reply, nil
}

// Close ends the session with the agent's verdict on its goal
// (goal-met, goal-not-met, or "" for none) and returns the verdict the
// runtime decided and where the report is. The agent's verdict weighs as
// a model's does: it never upgrades a failed check. Closing an ended
// session returns how it ended.
func (s *AgentRun) Close(ctx context.Context, verdict, reason string) (Result, error) {
	// A call in progress finishes first, so its step is in the report.
	s.busy.Lock()
	defer s.busy.Unlock()
	select {
	case s.feed.close <- agentClose{verdict: verdict, reason: reason}:
	default: // already closing
	}
	select {
	case <-s.done:
		return s.res, s.err
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
}

// offersSeen returns the offers the run settled on at launch.
func (r *Runner) offersSeen() Offers {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.agentOffers
}

// serveAgent takes the agent's calls until it closes the session, a call
// ends it, or the work context ends (the deadline, an abort, a signal).
func (s *runState) serveAgent(ctx context.Context) {
	feed := s.r.agent
	defer close(feed.over)
	s.r.mu.Lock()
	s.r.agentOffers = s.book.offers
	s.r.mu.Unlock()
	feed.ready <- ToolList(s.files, s.book.offers)
	if n := len(s.files.Scenario.Steps); n > 0 {
		s.log("a session takes its calls from the agent; the scenario's %d steps are not run", n)
	}
	for {
		select {
		case <-ctx.Done():
			return
		case cl := <-feed.close:
			s.agentVerdict(ctx, cl)
			return
		case c := <-feed.calls:
			res, ended := s.agentStep(ctx, c)
			c.reply <- res
			if ended {
				return
			}
		case l := <-feed.looks:
			l.reply <- s.act.look(ctx, l.ctx, l.at)
		case d := <-feed.defines:
			d.reply <- s.define(d.def)
		}
	}
}

// agentStep runs one agent call as a step and checks the application
// after it, as a script's step is checked.
func (s *runState) agentStep(ctx context.Context, c agentCall) (CallResult, bool) {
	callCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	// A client that gives up mid-call stops the call, not the session.
	stop := context.AfterFunc(c.ctx, cancel)
	defer stop()
	source := c.source
	if source == "" {
		source = events.SourceAgent
	}
	res := s.step(callCtx, call{Tool: c.tool, Args: c.args, Source: source})
	ended := res.endLoop != "" || s.outcome.end != nil || !s.checkAfterStep(ctx)
	out := CallResult{
		Step: s.book.stepN, Tool: c.tool, Status: res.status, Message: s.r.Redact(res.message),
		Screen: res.screen, Point: res.point, Ended: ended,
	}
	if res.frame != nil {
		if data, err := res.frame.PNG(); err != nil {
			s.log("encode the screen for the agent: %v", err)
		} else {
			b := res.frame.Bounds()
			out.PNG, out.Width, out.Height = data, b.Dx(), b.Dy()
		}
	}
	return out, ended
}

// agentVerdict records the verdict the agent closed the session with as a
// record_verdict step, so the report shows it as it shows a model's.
func (s *runState) agentVerdict(ctx context.Context, cl agentClose) {
	if cl.verdict == "" {
		return
	}
	reason := cl.reason
	if reason == "" {
		reason = "no reason given"
	}
	s.step(ctx, call{Tool: "record_verdict", Args: map[string]any{"verdict": cl.verdict, "reason": reason}, Source: events.SourceAgent})
}

// Steer applies an operator's action to the session: abort ends it (the
// report says the operator aborted it), a note is recorded. Pausing,
// stepping and approving act on a model's turns, which a session has not.
func (s *AgentRun) Steer(st events.Steer) error {
	if st.Action != events.SteerAbort && st.Action != events.SteerNote {
		return fmt.Errorf("a session takes abort or note, not %q: the other actions act on a model's turns", st.Action)
	}
	return s.r.Steer(st)
}
