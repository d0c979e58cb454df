package engine

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"io"
	"maps"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/kasmrt/kasmrt/drivers/atspi"
	"github.com/kasmrt/kasmrt/drivers/ocr"
	"github.com/kasmrt/kasmrt/drivers/proc"
	"github.com/kasmrt/kasmrt/drivers/x11"
	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/memory"
	"github.com/kasmrt/kasmrt/engine/redact"
	"github.com/kasmrt/kasmrt/engine/report"
	"github.com/kasmrt/kasmrt/scenarios"
)

// desktop is what the engine needs of the X11 session's connection.
type desktop interface {
	Capture(ctx context.Context) (*image.RGBA, error)
	WaitSettled(ctx context.Context, opts x11.SettleOptions) (*image.RGBA, bool, error)
	PressKey(ctx context.Context, chord string) error
	TypeText(ctx context.Context, s string) error
	Click(ctx context.Context, x, y int) error
	Window(id uint32) (x11.Window, error)
	Windows() ([]x11.Window, error)
	FindWindow(ctx context.Context, m x11.WindowMatch) (x11.Window, error)
	FocusedWindow() (x11.Window, bool, error)
	Focus(w x11.Window) error
	WaitPainted(ctx context.Context, w x11.Window, opts x11.SettleOptions) (bool, error)
	ScreenSize() (w, h int)
	Close() error
}

// app is what the engine needs of the launched application.
type app interface {
	PID() int
	Alive() bool
	Done() <-chan struct{}
	ExitStatus() proc.Status
	Stop(grace time.Duration) error
}

// Outcomes that end a run early, and the verdicts they lead to.
const (
	OutcomeCompleted      = "completed"
	OutcomeEscalated      = "escalated"
	OutcomeDeadline       = "deadline"
	OutcomeDegraded       = "degraded"
	OutcomeInterrupted    = "interrupted"
	OutcomeAborted        = "aborted"
	OutcomeLaunchFailed   = "launch-failed"
	OutcomeStartup        = "startup-timeout"
	OutcomeAppExited      = "app-exited"
	OutcomeWindowLost     = "window-lost"
	OutcomeFatalLog       = "fatal-log"
	OutcomeSessionLost    = "session-lost"
	OutcomeStepFailed     = "step-failed"
	OutcomeStepError      = "step-error"
	OutcomeRuntimeFault   = "runtime-fault"
	OutcomeNoModelVerdict = "no-model-verdict"
)

// ending is why a run stopped before its natural end, with the verdict it
// forces.
type ending struct {
	verdict string
	outcome string
	reason  string
}

// runState is everything one run holds while it runs. Only the run's own
// goroutine touches it, except where a field says otherwise.
type runState struct {
	r     *Runner
	bus   *events.Bus
	rep   *report.Writer
	files *scenarios.Files

	// life bounds what the run launches; it outlasts the work context.
	life    context.Context
	session session
	desk    desktop
	app     app
	win     x11.Window
	hasWin  bool
	// target is the window switch_window chose, while hasTarget.
	target    x11.Window
	hasTarget bool
	// scratchDirs are the isolated runtime and temporary directories,
	// removed when the run ends.
	scratchDirs []string
	// bus is the app's private session bus, when the run is isolated.
	appBus *atspi.SessionBus
	// appEnv is what the run adds to the app's environment (display,
	// isolation); declared tools get it too.
	appEnv []string

	a11y *accessibility
	// ocrReader reads text for text targets and conditions (seeing.go).
	ocrReader *ocr.Reader
	// web is the browser over CDP, when the scenario has a browser: section.
	web *browserRun
	// appFinished is set when the app exited with a success exit code: the
	// run ends normally.
	appFinished bool
	offers      Offers
	tools       map[string]scenarios.ToolSpec
	names       []string
	observed    bool
	stepN       int

	// expectedExit is the exit code a step's expect: saw the app end with.
	expectedExit *int

	// appOut redacts the app's and the browser's output on its way to
	// app.log as one stream, so a secret split between reads is masked.
	appOut *redact.Stream
	// fatalLine is set from the output pump's goroutine.
	fatalMu   sync.Mutex
	fatalLine string

	declaredCalls map[string]int
	held          time.Duration
	toolErrors    int // consecutive declared-tool failures
	end           *ending
	escalated     bool
	checkFalse    bool
	modelVerdict  string
	modelReason   string
	concerns      []string
	loop          loopStats
	model         *modelState
	memory        *memory.Memory
	startedAt     time.Time
	lastScreen    *image.RGBA
	lastPNG       []byte // lastScreen as written to the report
}

type loopStats struct {
	iterations, malformed, toolErrors, rescued int
	ended                                      string // why the loop ended, in words
	outcome                                    string // degraded, no-model-verdict, or "" for completed
	ran                                        bool
}

func newRunState(r *Runner, bus *events.Bus, rep *report.Writer) *runState {
	return &runState{
		r: r, bus: bus, rep: rep, files: r.files,
		startedAt:     time.Now(),
		declaredCalls: map[string]int{},
	}
}

func (s *runState) publish(e events.Event) events.Event { return s.bus.Publish(e) }

func (s *runState) log(format string, args ...any) {
	s.publish(events.Event{Kind: events.KindLog, Message: fmt.Sprintf(format, args...)})
}

func (s *runState) concern(msg string) {
	for _, c := range s.concerns {
		if c == msg {
			return
		}
	}
	s.concerns = append(s.concerns, msg)
	s.publish(events.Event{Kind: events.KindConcern, Message: msg})
}

// stop records the first reason the run ends early; later ones are
// ignored so the first cause is the one reported.
func (s *runState) stop(verdict, outcome, reason string) {
	if s.end == nil {
		s.end = &ending{verdict: verdict, outcome: outcome, reason: reason}
	}
}

// start announces the run with everything the files decided.
func (s *runState) start() {
	sc := s.files.Scenario
	total, reserve := s.r.deadlines()
	s.setTools(OffersFromFiles(s.files))
	mode := sc.Mode()
	if s.r.agent != nil {
		mode = "session"
	}
	plan := sc.Plan
	if plan == nil {
		plan = []string{}
	}
	s.publish(events.Event{Data: events.RunStarted{
		Scenario: sc.Name, File: sc.File, SHA256: sc.SHA256,
		Mode: mode,
		Goal: sc.Goal, Plan: plan, DeadlineS: total.Seconds(), ReserveS: reserve.Seconds(),
		Tools: s.names, Steps: len(sc.Steps),
	}})
}

// setTools fixes the run's tool list for the given offers.
func (s *runState) setTools(offers Offers) {
	if s.r.inbox != nil {
		offers.Inbox = true
	}
	s.offers = offers
	list := ToolList(s.files, offers)
	s.tools = make(map[string]scenarios.ToolSpec, len(list))
	s.names = s.names[:0]
	for _, t := range list {
		s.tools[t.Name] = t
		s.names = append(s.names, t.Name)
	}
}

// execute launches the app and runs the steps or the loop. A panic in
// either is recorded as a runtime fault, so the report still completes.
func (s *runState) execute(ctx context.Context) {
	defer func() {
		if p := recover(); p != nil {
			s.stop(events.VerdictTestError, OutcomeRuntimeFault, fmt.Sprintf("internal error: %v", p))
			s.log("internal error: %v\n%s", p, debug.Stack())
		}
	}()
	if err := s.launch(ctx); err != nil {
		// A launch cut short by the deadline or Ctrl-C is named by
		// interruption, not reported as a fault.
		if s.end == nil && ctx.Err() == nil {
			s.stop(events.VerdictTestError, OutcomeRuntimeFault, err.Error())
		}
		return
	}
	switch {
	case s.r.agent != nil:
		s.serveAgent(ctx)
	case s.files.Scenario.Goal != "":
		s.runLoop(ctx)
	default:
		s.runScript(ctx)
	}
	s.awaitExpectedExit(ctx)
}

// interruption records why the work context ended, if it did: an abort,
// a signal or the deadline.
func (s *runState) interruption(parent, work context.Context) {
	if work.Err() == nil {
		return
	}
	switch {
	case s.r.steer.isAborted():
		s.stop(events.VerdictTestError, OutcomeAborted, "the operator aborted the run")
	case parent.Err() != nil:
		s.stop(events.VerdictTestError, OutcomeInterrupted, fmt.Sprintf("the run was interrupted (%v)", context.Cause(parent)))
	default:
		total, reserve := s.r.deadlines()
		s.stop(events.VerdictTestError, OutcomeDeadline,
			fmt.Sprintf("the %gs deadline was reached (the last %gs are kept for the report)", total.Seconds(), reserve.Seconds()))
	}
}

// launch starts the session, the application and finds its window.
func (s *runState) launch(ctx context.Context) error {
	op := s.files.Operator
	sess, err := s.r.machine.StartSession(ctx, x11.SessionOptions{
		Display: s.r.display(), Width: op.Session.Width, Height: op.Session.Height, Depth: op.Session.Depth,
		WindowManager: s.windowManager(),
	})
	if err != nil {
		s.stop(events.VerdictTestError, OutcomeLaunchFailed, fmt.Sprintf("start the X session: %v", err))
		return err
	}
	s.session = sess
	conn, err := s.r.machine.Dial(sess.Display())
	if err != nil {
		s.stop(events.VerdictTestError, OutcomeLaunchFailed, fmt.Sprintf("connect to the X session: %v", err))
		return err
	}
	s.desk = conn
	w, h := conn.ScreenSize()
	s.publish(events.Event{Data: events.SessionStarted{
		Display: sess.Display(), Owned: sess.Owned(), Width: w, Height: h,
		WindowManager: sess.WindowManager(),
	}})

	a := s.files.Scenario.App
	if a == nil {
		// The browser is the application under test.
		return s.launchBrowser(ctx)
	}
	env := []string{"DISPLAY=" + sess.Display()}
	isolated, err := s.isolation(s.life, sess.Display())
	if err != nil {
		s.stop(events.VerdictTestError, OutcomeLaunchFailed, err.Error())
		return err
	}
	env = append(env, isolated...)
	s.appEnv = env
	env = append(env, s.prepareAccessibility(s.life, sess.Display())...)
	for _, k := range sortedKeys(a.Env) {
		env = append(env, k+"="+a.Env[k])
	}
	p, err := s.r.machine.StartApp(s.life, proc.Spec{Argv: a.Command, Env: env, Unset: s.r.secretVariables(), Dir: s.r.appDir(), Output: s.outputScanner()})
	if err != nil {
		s.stop(events.VerdictTestError, OutcomeLaunchFailed, err.Error())
		return err
	}
	s.app = p
	s.publish(events.Event{Data: events.AppLaunched{PID: p.PID(), Command: a.Command}})
	if s.browserIsTheWindow() {
		return s.launchBrowser(ctx)
	}

	timeout := time.Duration(a.StartupTimeout * float64(time.Second))
	if timeout <= 0 {
		timeout = scenarios.DefaultStartupTimeoutS * time.Second
	}
	findCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type found struct {
		w   x11.Window
		err error
	}
	ch := make(chan found, 1)
	go func() {
		w, err := conn.FindWindow(findCtx, s.windowMatch())
		ch <- found{w, err}
	}()
	select {
	case <-p.Done():
		cancel()
		<-ch
		st := p.ExitStatus()
		s.publish(events.Event{Kind: events.KindAppExited, Message: st.String()})
		if why := shellCouldNotRun(st.Code); why != "" && st.Signal == 0 {
			s.stop(events.VerdictTestError, OutcomeLaunchFailed, fmt.Sprintf(
				"the application could not start: %s; check app.command and that its program is installed (app.log has the shell's words)", why))
			return fmt.Errorf("app %s", st)
		}
		s.stop(events.VerdictAppFailed, OutcomeAppExited, fmt.Sprintf("the application %s before its window appeared%s", st, s.lastWords()))
		return fmt.Errorf("app %s", st)
	case f := <-ch:
		if f.err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			s.startupTimedOut(ctx, s.windowMatch(), timeout, "window")
			return f.err
		}
		s.win, s.hasWin = f.w, true
	}
	s.publish(events.Event{
		Box:  &events.Rect{X: s.win.X, Y: s.win.Y, W: s.win.Width, H: s.win.Height},
		Data: events.AppWindow{ID: fmt.Sprintf("0x%x", s.win.ID), Title: s.win.Title, Class: s.win.Class}})
	if err := s.desk.Focus(s.win); err != nil {
		s.log("focus the application window: %v", err)
	}
	s.waitReady(findCtx)
	s.discoverControls(ctx)
	if s.files.Scenario.Browser != nil {
		return s.launchBrowser(ctx)
	}
	return nil
}

func (s *runState) windowMatch() x11.WindowMatch {
	m := x11.WindowMatch{}
	if wm := s.files.Scenario.App.Window; wm != nil {
		m.Class, m.Title = wm.Class, wm.Title
		if wm.PID == nil || *wm.PID {
			if m.Class == "" && m.Title == "" || wm.PID != nil {
				m.PID = s.app.PID()
			}
		}
	} else {
		m.PID = s.app.PID()
	}
	return m
}

// outputScanner is the application's stdout/stderr sink: app.log, and the
// fatal log patterns.
func (s *runState) outputScanner() io.Writer {
	if s.appOut == nil {
		s.appOut = s.r.redact.Stream(s.rep.AppLog())
	}
	// midLine is set while this source's line continues in its next write
	// (the pump splits lines longer than its read).
	midLine := false
	return writerFunc(func(p []byte) (int, error) {
		if _, err := s.appOut.Write(p); err != nil {
			return 0, err
		}
		startsMid := midLine
		midLine = len(p) > 0 && p[len(p)-1] != '\n'
		for rest, first := p, true; len(s.r.fatal) > 0 && len(rest) > 0; first = false {
			line := rest
			if i := bytes.IndexByte(rest, '\n'); i >= 0 {
				line, rest = rest[:i], rest[i+1:]
			} else {
				rest = nil
			}
			// Only a write's first line can continue an earlier one, and
			// only its last can go on in the next.
			endsMid := len(rest) == 0 && midLine
			text := strings.TrimSuffix(string(line), "\r")
			for _, re := range s.r.fatal {
				if !re.MatchString(text) {
					continue
				}
				s.fatalMu.Lock()
				if s.fatalLine == "" {
					s.fatalLine = s.fatalEvidence(text, re, first && startsMid, endsMid)
				}
				s.fatalMu.Unlock()
			}
		}
		return len(p), nil
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// checks runs the deterministic checks (docs/architecture.md, "The
// verdict").
func (s *runState) checks() []events.Check {
	var out []events.Check
	exitedOK := s.exitedSuccessfully() || s.exitedAsExpected()
	if s.app != nil {
		c := events.Check{Name: "process_alive", OK: s.app.Alive() || exitedOK}
		if !s.app.Alive() {
			c.Evidence = "the application " + s.app.ExitStatus().String()
			switch {
			case s.exitedAsExpected():
				c.Evidence += ", as the scenario expects (app.expect_exit)"
			case exitedOK:
				c.Evidence += ", a success exit code (app.success_exit_codes)"
			case s.expectExit() != nil:
				c.Evidence += fmt.Sprintf(", not with a code the scenario expects (app.expect_exit: %v)", s.expectExit().ExitCodes()) + s.lastWords()
			default:
				c.Evidence += s.lastWords()
			}
		}
		out = append(out, c)
	}
	if s.hasWin {
		c := events.Check{Name: "window_present", OK: true}
		w, err := s.desk.Window(s.win.ID)
		switch {
		case exitedOK:
			c.Evidence = "the application exited successfully, so its window is gone"
		case s.expectExit() != nil && (err != nil || !w.Viewable):
			// An app on its way out closes its window before its process
			// ends; the exit itself is checked once the steps are done.
			c.Evidence = "the window is gone; the application is expected to exit (app.expect_exit)"
		case err != nil:
			c.OK, c.Evidence = false, fmt.Sprintf("window 0x%x: %v", s.win.ID, err)+s.windowsInstead()
		case !w.Viewable:
			c.OK, c.Evidence = false, fmt.Sprintf("window 0x%x is no longer mapped", s.win.ID)+s.windowsInstead()
		default:
			s.win = w
		}
		out = append(out, c)
	}
	s.fatalMu.Lock()
	line := s.fatalLine
	s.fatalMu.Unlock()
	c := events.Check{Name: "fatal_pattern", OK: line == ""}
	if line != "" {
		c.Evidence = line
	}
	return append(out, c)
}

// exitedSuccessfully reports whether the app has exited with one of the
// scenario's success exit codes (an app that exits when its job is done).
func (s *runState) exitedSuccessfully() bool {
	if s.app == nil || s.app.Alive() || s.files.Scenario.App == nil {
		return false
	}
	st := s.app.ExitStatus()
	if st.Signal != 0 {
		return false
	}
	if s.expectedExit != nil && st.Code == *s.expectedExit {
		return true
	}
	for _, code := range s.files.Scenario.App.SuccessExitCodes {
		if st.Code == code {
			return true
		}
	}
	return false
}

// checkAfterStep runs the checks and stops the run on the first failure.
func (s *runState) checkAfterStep() bool {
	if s.exitedSuccessfully() {
		s.appFinished = true
		return false
	}
	if s.sessionLost() {
		return false
	}
	for _, c := range s.checks() {
		if c.OK {
			continue
		}
		// The final checks publish every result; here the first failure
		// only ends the run.
		outcome := map[string]string{"process_alive": OutcomeAppExited, "window_present": OutcomeWindowLost, "fatal_pattern": OutcomeFatalLog}[c.Name]
		s.stop(events.VerdictAppFailed, outcome, c.Evidence)
		return false
	}
	return true
}

// capture takes a screenshot (after the screen settles when settle is
// set), writes it to the report and announces it.
func (s *runState) capture(ctx context.Context, settle bool) (string, *image.RGBA, error) {
	var img *image.RGBA
	var err error
	settled := true
	switch {
	case s.web.pageIsTheScreen():
		img, err = s.web.screenshot(ctx)
	case settle:
		op := s.files.Operator.Runner
		img, settled, err = s.desk.WaitSettled(ctx, x11.SettleOptions{
			Interval: time.Duration(op.SettleIntervalMS) * time.Millisecond,
			Cap:      time.Duration(op.SettleCapMS) * time.Millisecond,
		})
	default:
		img, err = s.desk.Capture(ctx)
	}
	if err != nil {
		return "", nil, fmt.Errorf("capture the screen: %w", err)
	}
	rel, data, err := s.rep.SaveScreen(img)
	if err != nil {
		return "", nil, err
	}
	b := img.Bounds()
	s.lastScreen, s.lastPNG = img, data
	s.publish(events.Event{Screen: rel, Data: events.ScreenCaptured{
		Width: b.Dx(), Height: b.Dy(), Settled: settled,
	}})
	return rel, img, nil
}

// finish runs the final checks, decides the verdict, stops everything the
// run started and announces the end.
func (s *runState) finish(ctx context.Context) Result {
	var checks []events.Check
	s.sessionLost()
	if s.app != nil {
		checks = s.checks()
		if c, ok := s.expectedExitCheck(); ok {
			checks = append(checks, c)
		}
		for i := range checks {
			s.publish(events.Event{Kind: events.KindCheck, Check: &checks[i]})
		}
	}
	if s.loop.ran {
		s.publish(events.Event{Message: s.loop.ended, Data: events.LoopEnded{
			Iterations: s.loop.iterations, Malformed: s.loop.malformed,
			ToolErrors: s.loop.toolErrors, Rescued: s.loop.rescued,
		}})
	}
	v, concern := decideVerdict(s.facts(checks))
	if concern != "" {
		s.concern(concern)
	}
	s.finalCapture(ctx, v.Outcome)
	s.publish(events.Event{Kind: events.KindVerdict, Verdict: &v})
	s.shutdown()
	s.publish(events.Event{Data: events.RunEnded{Report: s.rep.Dir()}})
	return Result{Verdict: v.Verdict, Outcome: v.Outcome, Reasons: v.Reasons}
}

// shutdown stops the application and the session; nothing the run
// started outlives it.
func (s *runState) shutdown() {
	if err := s.web.close(); err != nil {
		s.log("close the browser: %v", err)
	}
	if s.app != nil {
		grace := time.Duration(0)
		if s.app.Alive() {
			grace = 2 * time.Second
		}
		if err := s.app.Stop(grace); err != nil {
			s.log("stop the application: %v", err)
		}
	}
	if s.appOut != nil {
		// The output pumps have ended with their processes.
		if err := s.appOut.Close(); err != nil {
			s.log("write app.log: %v", err)
		}
	}
	s.a11y.close()
	s.removeScratch()
	if s.desk != nil {
		_ = s.desk.Close()
	}
	if s.session != nil {
		if err := s.session.Close(); err != nil {
			s.log("stop the X session: %v", err)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// fileExists reports whether path exists (for wait_while file_missing).
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// truncate shortens s to at most n bytes on a character boundary. Redact
// before truncating: a secret cut in half no longer matches.
func truncate(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
