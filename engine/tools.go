package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kasmrt/kasmrt/drivers/desktop"
	"github.com/kasmrt/kasmrt/drivers/proc"
	"github.com/kasmrt/kasmrt/engine/cache"
	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/report"
	"github.com/kasmrt/kasmrt/inbox"
	"github.com/kasmrt/kasmrt/scenarios"
)

// call is one tool call, from a script step or the model.
type call struct {
	ID     string // the model's native call ID, if any
	Tool   string
	Args   map[string]any
	Source events.Source
	// Expect is what a script step expects once its tool has run.
	Expect *scenarios.Expect
	// Until, on a wait the action cache replays, is the perceptual hash
	// of the screen the cached wait ended on: the wait ends as soon as
	// the screen hashes to it, within the seconds asked for.
	Until string
}

// Failure kinds of a tool call that did not succeed.
const (
	failNone       = ""
	failMalformed  = "malformed"  // unknown tool or a schema violation
	failRefused    = "refused"    // a prerequisite is missing
	failResolution = "resolution" // the target could not be resolved (not found, budget, window gone)
	failAssertion  = "assertion"  // a declared check ran and failed
)

// result is what a tool call produced.
type result struct {
	status  events.Status
	fail    string // one of the fail* kinds
	message string // for the report and the model, redacted on publish
	screen  string
	point   *events.Point
	// frame is a capture for the model or the agent to see, as the
	// report writes it; its pixels are decoded when the model asks.
	frame *report.Frame
	// endLoop is set by tools that end the agentic loop.
	endLoop string
	// response is how long the capture waited for the app to start
	// drawing after an input (runner.settle_response_ms); zero when it
	// took the screen once still without waiting.
	response time.Duration
}

func ok(msg string) result { return result{status: events.StatusOK, message: msg} }

func failed(kind, format string, args ...any) result {
	status := events.StatusError
	switch kind {
	case failMalformed:
		status = events.StatusMalformed
	case failRefused:
		status = events.StatusRefused
	}
	return result{status: status, fail: kind, message: fmt.Sprintf(format, args...)}
}

// step runs one call through the guards and the tool, recording it as a
// numbered step with its screen and duration.
func (s *runState) step(ctx context.Context, c call) result {
	s.book.stepN++
	n := s.book.stepN
	start := time.Now()
	s.bus.Publish(events.Event{Kind: events.KindStepStarted, Step: n, Tool: c.Tool, Args: c.Args, Source: c.Source})
	res := s.guard(c)
	ran := res.status == ""
	if ran {
		res = s.run(ctx, n, c)
		s.book.recordObservation(s.book.tools[c.Tool], res)
		if c.Expect != nil && res.status == events.StatusOK {
			res = s.check.expect(ctx, c.Expect, res)
		}
	}
	if ctx.Err() != nil && res.status == events.StatusOK {
		res = failed(failResolution, "%s was interrupted: %v", c.Tool, context.Cause(ctx))
	}
	res = s.act.withFailureScreen(ctx, n, res)
	s.bus.Publish(events.Event{Kind: events.KindStepEnded, Step: n, Tool: c.Tool, Args: c.Args, Source: c.Source,
		Status: res.status, Message: res.message, Screen: res.screen, Point: res.point,
		DurationMS: time.Since(start).Milliseconds()})
	s.tally(c, s.book.tools[c.Tool], res, ran)
	return res
}

// guard checks a call before it runs (docs/architecture.md, "The rules"): a known tool on the run's
// list, arguments that fit its schema, the observation prerequisite for
// model-chosen input, and the tool's budget. A zero result means go.
func (s *runState) guard(c call) result {
	return s.book.check(c, s.files.Scenario.Tools, s.env.whyNotOffered)
}

// run executes a guarded call: a declared tool's commands, or the
// built-in tool's implementation from the table (builtins.go).
func (s *runState) run(ctx context.Context, n int, c call) result {
	if s.book.tools[c.Tool].Declared {
		return s.act.declared(ctx, c)
	}
	impl, found := builtinTools()[c.Tool]
	if !found {
		// The catalogue and the table disagree: a bug, so the run ends as
		// a runtime fault rather than blaming the model or the app.
		s.outcome.stop(events.VerdictTestError, OutcomeRuntimeFault, "internal error: no implementation of "+c.Tool)
		return failed(failResolution, "internal error: no implementation of %s", c.Tool)
	}
	return impl(s, ctx, n, c)
}

// observeScreen captures the screen for the model to look at.
func (a *actor) observeScreen(ctx context.Context) result {
	// The frame, not its pixels: an outside agent gets a headless page's
	// screen as the browser encoded it, never decoded.
	rel, frame, err := a.captureWith(ctx, nil, true)
	if err != nil {
		return a.driverFailure(err)
	}
	b := frame.Bounds()
	r := ok(fmt.Sprintf("observed the screen (%dx%d)", b.Dx(), b.Dy()))
	if titles := a.env.windowTitles(); titles != "" {
		r.message += "; the application's windows: " + titles
	}
	r.screen, r.frame = rel, frame
	return r
}

func (a *actor) pressKey(ctx context.Context, c call) result {
	key, _ := c.Args["key"].(string)
	return a.input(ctx, func() error { return a.env.desk.PressKey(ctx, key) }, fmt.Sprintf("pressed %s", key), nil)
}

func (a *actor) click(ctx context.Context, c call) result {
	target, _ := c.Args["target"].(string)
	p, err := a.env.clickPoint(ctx, target)
	if err != nil {
		return failed(failResolution, "%s", explainDriverError(fmt.Errorf("click %s: %w", target, err)))
	}
	return a.input(ctx, func() error { return a.env.desk.Click(ctx, p.X, p.Y) }, "clicked "+target, &p)
}

// typeText types a provided value; the result names its ref and length,
// never the value.
func (a *actor) typeText(ctx context.Context, c call) result {
	ref, _ := c.Args["ref"].(string)
	value, secret, found := a.env.value(ref)
	if !found {
		return failed(failResolution, "no provided value %q", ref)
	}
	if r := a.env.secretPlaceRefusal(ctx, c.Tool, ref, ""); r.status != "" {
		return r
	}
	if !secret {
		return a.input(ctx, func() error { return a.env.desk.TypeText(ctx, value) },
			fmt.Sprintf("typed the value %q (%d characters)", ref, len([]rune(value))), nil)
	}
	checked := a.env.focusMark(ctx)
	a.env.secretGoesIn(ctx, ref, value, "")
	var moved string
	r := a.input(ctx, func() (err error) {
		moved, err = a.env.typeWatchingFocus(ctx, value, checked)
		return err
	}, fmt.Sprintf("typed the secret value %q (%d characters)", ref, len([]rune(value))), nil)
	if moved == "" || r.status != events.StatusOK {
		return r
	}
	refused := failed(failRefused, "type_text stopped typing the secret %q: %s; the rest was not typed", ref, moved)
	refused.screen = r.screen
	return refused
}

// wait waits the seconds asked for, ending early when the app exits or the
// X server goes away, or, for a replayed wait, once the screen looks as
// the cached run's did when its wait ended.
func (a *actor) wait(ctx context.Context, c call) result {
	secs, _ := c.Args["seconds"].(float64)
	return a.hold(ctx, time.Duration(secs*float64(time.Second)), func(ctx context.Context) result {
		start := time.Now()
		there, stopLooking := a.screenHashesTo(ctx, c.Until)
		defer stopLooking()
		select {
		case <-time.After(time.Duration(secs * float64(time.Second))):
		case <-there:
			return a.settled(ctx, ok(fmt.Sprintf("waited %.1fs of %gs: the screen looked as the cached run's did when its wait ended", time.Since(start).Seconds(), secs)))
		case <-ctx.Done():
			return failed(failResolution, "wait interrupted: %v", context.Cause(ctx))
		case <-a.env.appDone():
			// Waiting on a dead app helps nobody; the checks after the
			// step report it, unless the X server took it down.
			if !a.sessionLost() {
				return ok(fmt.Sprintf("waited %.1fs; the application exited", time.Since(start).Seconds()))
			}
		case <-a.env.sessionDone():
		}
		// The screen is the settling capture's alone from here.
		stopLooking()
		if a.sessionLost() {
			return failed(failResolution, "the X server went away %.1fs into the wait", time.Since(start).Seconds())
		}
		return a.settled(ctx, ok(fmt.Sprintf("waited %gs", secs)))
	})
}

// screenHashesTo returns a channel closed once a capture of the screen
// has the perceptual hash want (never, when want is empty), and stop,
// which ends the captures and returns once none is under way, so the
// wait's own settling capture is the only one. stop may be called again.
func (a *actor) screenHashesTo(ctx context.Context, want string) (there <-chan struct{}, stop func()) {
	found := make(chan struct{})
	if want == "" || a.env.desk == nil {
		return found, func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		tick := time.NewTicker(untilInterval)
		defer tick.Stop()
		for {
			if img, err := a.env.desk.Capture(ctx); err == nil && cache.Hash(img) == want {
				close(found)
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return found, func() { cancel(); <-ended }
}

// untilInterval is how often a replayed wait looks at the screen.
const untilInterval = 100 * time.Millisecond

// recordVerdict records the model's verdict and ends the loop; the
// runtime decides the final verdict.
func (a *actor) recordVerdict(ctx context.Context, c call) result {
	if ctx.Err() != nil {
		return failed(failResolution, "record_verdict was interrupted: %v", context.Cause(ctx))
	}
	verdict, _ := c.Args["verdict"].(string)
	reason, _ := c.Args["reason"].(string)
	a.outcome.modelVerdict, a.outcome.modelReason = verdict, reason
	r := ok(fmt.Sprintf("recorded %s; the runtime decides the final verdict from its checks", verdict))
	r.endLoop = "the model recorded its verdict (" + verdict + ")"
	return r
}

// escalate locks the verdict to test-error now, whatever later checks find.
func (a *actor) escalate(c call) result {
	reason, _ := c.Args["reason"].(string)
	a.outcome.escalated = true
	a.outcome.end = &ending{verdict: events.VerdictTestError, outcome: OutcomeEscalated, reason: "escalated: " + reason}
	r := ok("escalated; the run ends with test-error")
	r.endLoop = "the model escalated"
	return r
}

// respond posts the model's message to the operator.
func (a *actor) respond(n int, c call) result {
	msg, _ := c.Args["message"].(string)
	a.publish(events.Event{Kind: events.KindRespond, Step: n, Message: msg})
	if a.r.inbox != nil {
		a.r.inbox.Post(msg)
	}
	return ok("message posted to the operator")
}

// driverFailure turns a driver error into a result, noticing when the X
// server itself is gone.
func (a *actor) driverFailure(err error) result {
	if a.env.session != nil {
		select {
		case <-a.env.session.Done():
			a.outcome.stop(events.VerdictTestError, OutcomeSessionLost, "the X server went away")
		default:
		}
	}
	return failed(failResolution, "%s", explainDriverError(err))
}

// input runs a screen-changing input action on the focused app window and
// captures the settled screen (step clears the observation record).
func (a *actor) input(ctx context.Context, act func() error, done string, p *events.Point) result {
	a.env.focusForInput()
	err := act()
	if err != nil {
		if errors.Is(err, desktop.ErrUnknownKey) || errors.Is(err, desktop.ErrKeyNotOnLayout) {
			return failed(failResolution, "%s", explainDriverError(err))
		}
		return a.driverFailure(err)
	}
	r := a.settledAfterInput(ctx, ok(done))
	r.point = p
	return r
}

// settled captures the screen once it settles and attaches it to r.
func (a *actor) settled(ctx context.Context, r result) result {
	return a.settledWith(ctx, r, a.env.settleOptions(false))
}

// settledWith captures the screen once it settles as opts say and
// attaches it to r; a capture cut short by the run's end leaves r as it is.
func (a *actor) settledWith(ctx context.Context, r result, opts desktop.SettleOptions) result {
	rel, _, err := a.captureWith(ctx, &opts, false)
	if err != nil {
		if ctx.Err() != nil {
			return r
		}
		return a.driverFailure(err)
	}
	r.screen = rel
	return r
}

// clickPoint resolves a click target to screen pixels: the window's centre,
// a point the scenario author placed relative to the window, where its
// text is read or where its accessible control is.
func (e *environment) clickPoint(ctx context.Context, target string) (events.Point, error) {
	if !e.hasWin {
		return events.Point{}, errors.New("the application window is not known")
	}
	w, err := e.desk.Window(e.currentWindow().ID)
	if err != nil {
		return events.Point{}, fmt.Errorf("the application window is gone: %w", err)
	}
	if target == "center" {
		x, y := w.Center()
		return events.Point{X: x, Y: y}, nil
	}
	t, found := e.files.Scenario.ClickTargets[target]
	if !found {
		return events.Point{}, fmt.Errorf("no click target %q", target)
	}
	switch t.Kind() {
	case "text":
		return e.textTarget(ctx, t)
	case "name":
		return e.nameTarget(ctx, t)
	}
	return events.Point{X: w.X + t.X, Y: w.Y + t.Y}, nil
}

// hold runs a waiting tool, counting its time against runner.max_hold_s.
func (a *actor) hold(ctx context.Context, want time.Duration, fn func(context.Context) result) result {
	return a.book.hold(ctx, time.Duration(a.files.Operator.Runner.MaxHoldS*float64(time.Second)), want, fn)
}

// declared runs a scenario-declared shell tool: the literal commands the
// author wrote for the chosen values, in a disposable process group.
func (a *actor) declared(ctx context.Context, c call) result {
	dt := a.files.Scenario.Tools[c.Tool]
	cmds, err := dt.Commands(c.Args)
	if err != nil {
		return failed(failMalformed, "%s: %v", c.Tool, err)
	}
	a.book.declaredCalls[c.Tool]++
	timeout := time.Duration(dt.Timeout * float64(time.Second))
	if timeout <= 0 {
		timeout = scenarios.DefaultToolTimeoutS * time.Second
	}
	env := []string{}
	switch {
	case a.env.appEnv != nil:
		// The same display, HOME and XDG directories as the app, so a
		// check finds the files it wrote.
		env = append(env, a.env.appEnv...)
	case a.env.session != nil:
		env = append(env, "DISPLAY="+a.env.session.Display())
	}
	for _, k := range sortedKeys(dt.Env) {
		env = append(env, k+"="+dt.Env[k])
	}
	var out strings.Builder
	for _, cmd := range cmds {
		release, err := a.gate(c.Tool, dt.Service)(ctx)
		if err != nil {
			return failed(failResolution, "%s was interrupted: %v", c.Tool, err)
		}
		res, err := proc.RunCommand(ctx, proc.CommandSpec{
			Shell: cmd, Env: env, Unset: a.r.secretVariables(), Dir: a.r.appDir(), Timeout: timeout,
			// Redacting before the cap means a cut never keeps part of a
			// secret.
			Filter: func(dst io.Writer) io.WriteCloser { return a.r.redact.Stream(dst) },
		})
		release()
		if ctx.Err() != nil {
			// The run was cut short, not the tool: neither its timeout nor
			// a tool error.
			return failed(failResolution, "%s was interrupted and killed: %v", c.Tool, context.Cause(ctx))
		}
		if err != nil {
			a.book.consecutiveToolErrors++
			return failed(failResolution, "%s: %v", c.Tool, err)
		}
		// Redact before cutting, so no half of a secret survives the cut.
		fmt.Fprintf(&out, "%s", tail(a.r.Redact(string(res.Stdout)), 2000))
		if res.StdoutTruncated {
			// Only the first bytes are kept; say so, or the message would
			// pass off the middle of a flood as the command's last words.
			fmt.Fprintf(&out, " [stdout cut at %d bytes]", len(res.Stdout))
		}
		if res.TimedOut {
			a.book.consecutiveToolErrors++
			return failed(failAssertion, "%s timed out after %s and was killed", c.Tool, timeout)
		}
		if why := shellCouldNotRun(res.ExitCode); why != "" {
			// A command that never ran checked nothing about the
			// application: the test is wrong, not the app.
			a.book.consecutiveToolErrors++
			msg := fmt.Sprintf("%s could not run its command: %s; check the command in tools.%s and that its program is installed", c.Tool, why, c.Tool)
			if e := strings.TrimSpace(tail(a.r.Redact(string(res.Stderr)), 500)); e != "" {
				msg += " (" + e + ")"
			}
			return failed(failResolution, "%s", msg)
		}
		if res.ExitCode != 0 {
			a.book.consecutiveToolErrors++
			msg := fmt.Sprintf("%s %s", c.Tool, res.Status)
			if e := strings.TrimSpace(tail(a.r.Redact(string(res.Stderr)), 500)); e != "" {
				msg += ": " + e
			}
			return failed(failAssertion, "%s", msg)
		}
	}
	a.book.consecutiveToolErrors = 0
	msg := fmt.Sprintf("%s succeeded", c.Tool)
	if o := strings.TrimSpace(out.String()); o != "" {
		msg += ": " + o
	}
	return a.settled(ctx, ok(msg))
}

// tail keeps the last n bytes of s, starting on a character boundary.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}

// waitWhile waits out a condition the scenario named.
func (a *actor) waitWhile(ctx context.Context, c call) result {
	name, _ := c.Args["condition"].(string)
	cond := a.files.Scenario.WaitConditions[name]
	timeout := time.Duration(cond.Timeout * float64(time.Second))
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	return a.hold(ctx, timeout, func(ctx context.Context) result {
		start := time.Now()
		// A reading that has begun is let finish, however long a loaded
		// machine makes it (text takes OCR): the condition's time bounds
		// the wait for it to clear, and a verdict on it needs a reading
		// that finished. A reading that ends past the time and still
		// finds the condition is the step's failure.
		for {
			holding, err := a.conditionHolds(ctx, cond)
			if err != nil {
				return a.driverFailure(err)
			}
			if !holding {
				return a.settled(ctx, ok(fmt.Sprintf("%s cleared after %.1fs", name, time.Since(start).Seconds())))
			}
			left := timeout - time.Since(start)
			if left <= 0 {
				return failed(failResolution, "%s still holds after %.1fs", name, time.Since(start).Seconds())
			}
			select {
			case <-ctx.Done():
				return failed(failResolution, "wait interrupted: %v", context.Cause(ctx))
			case <-time.After(min(left, 100*time.Millisecond)):
			}
		}
	})
}

func (a *actor) conditionHolds(ctx context.Context, c scenarios.WaitCondition) (bool, error) {
	switch {
	case c.ScreenChanging:
		_, settled, err := a.env.desk.WaitSettled(ctx, desktop.SettleOptions{Interval: 100 * time.Millisecond, Quiet: 100 * time.Millisecond, Cap: 500 * time.Millisecond})
		if err != nil && ctx.Err() != nil {
			return true, nil
		}
		return !settled, err
	case c.WindowTitle != "":
		if !a.env.hasWin {
			return false, errors.New("no application window to read the title of")
		}
		w, err := a.env.desk.Window(a.env.currentWindow().ID)
		if err != nil {
			return false, err
		}
		return strings.Contains(w.Title, c.WindowTitle), nil
	case c.FileMissing != "":
		path := c.FileMissing
		if !filepath.IsAbs(path) {
			// Relative like the declared tools' commands, which run there.
			path = filepath.Join(a.r.appDir(), path)
		}
		return !fileExists(path), nil
	case c.TextVisible != "":
		return a.env.textCondition(ctx, c.TextVisible)
	case c.TextAbsent != "":
		visible, err := a.env.textCondition(ctx, c.TextAbsent)
		return !visible, err
	}
	return false, nil
}

// askHuman puts the model's question to the operator and waits, bounded by
// the waiting budget and the deadline. The operator may take the desktop
// over while the question waits; the result tells the model what changed.
func (s *runState) askHuman(ctx context.Context, c call) result {
	q, _ := c.Args["question"].(string)
	timeout := time.Duration(s.files.Operator.Inbox.AnswerTimeoutS * float64(time.Second))
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	var updates []string
	res := s.act.hold(ctx, timeout, func(holdCtx context.Context) result {
		askCtx, cancel := context.WithTimeout(holdCtx, timeout)
		defer cancel()
		a, upds, err := askWithTakeovers(ctx, askCtx, s.r.inbox, s.r.steer, q, s.takeoverPoint)
		updates = upds
		// A notice still on its way is told at the run's end.
		s.announce(holdCtx, false)
		if err != nil {
			var ue *inbox.UnansweredError
			if errors.As(err, &ue) || errors.Is(err, context.DeadlineExceeded) {
				return failed(failResolution, "no answer came: %v", err)
			}
			return failed(failResolution, "ask_human: %v", err)
		}
		return s.keepAnswer(a)
	})
	for _, u := range updates {
		res.message += "\n\n" + u
	}
	return res
}

// appDone is closed when the application exits (never, without one).
func (e *environment) appDone() <-chan struct{} {
	if e.app == nil {
		return nil
	}
	return e.app.Done()
}

// sessionDone is closed when the X server goes away.
func (e *environment) sessionDone() <-chan struct{} {
	if e.session == nil {
		return nil
	}
	return e.session.Done()
}

// sessionLost reports whether the X server is gone, and if so records it
// as the run's end. When the app has just died it gives the server a
// moment to be noticed too: a killed server takes its clients with it, and
// the cause, not the symptom, is what the report must name.
func (a *actor) sessionLost() bool {
	if a.env.session == nil {
		return false
	}
	var grace <-chan time.Time // nil: do not wait
	if a.env.app != nil && !a.env.app.Alive() {
		grace = time.After(a.r.serverGrace)
	}
	select {
	case <-a.env.session.Done():
	case <-grace:
		return false
	default:
		if grace == nil {
			return false
		}
		select {
		case <-a.env.session.Done():
		case <-grace:
			return false
		}
	}
	a.outcome.stop(events.VerdictTestError, OutcomeSessionLost, "the X server went away")
	return true
}
