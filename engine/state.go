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

	"github.com/kasmrt/kasmrt/drivers/desktop"
	"github.com/kasmrt/kasmrt/drivers/ocr"
	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/redact"
	"github.com/kasmrt/kasmrt/engine/report"
	"github.com/kasmrt/kasmrt/engine/stage"
	"github.com/kasmrt/kasmrt/internal/screenpng"
	"github.com/kasmrt/kasmrt/scenarios"
)

// Outcomes that end a run early, and the verdicts they lead to.
const (
	OutcomeCompleted      events.Outcome = "completed"
	OutcomeEscalated      events.Outcome = "escalated"
	OutcomeDeadline       events.Outcome = "deadline"
	OutcomeDegraded       events.Outcome = "degraded"
	OutcomeInterrupted    events.Outcome = "interrupted"
	OutcomeAborted        events.Outcome = "aborted"
	OutcomeLaunchFailed   events.Outcome = "launch-failed"
	OutcomeStartup        events.Outcome = "startup-timeout"
	OutcomeAppExited      events.Outcome = "app-exited"
	OutcomeWindowLost     events.Outcome = "window-lost"
	OutcomeFatalLog       events.Outcome = "fatal-log"
	OutcomeSessionLost    events.Outcome = "session-lost"
	OutcomeStepFailed     events.Outcome = "step-failed"
	OutcomeStepError      events.Outcome = "step-error"
	OutcomeRuntimeFault   events.Outcome = "runtime-fault"
	OutcomeNoModelVerdict events.Outcome = "no-model-verdict"
	// OutcomeSuccessFailed is a goal run whose success criteria did not
	// hold; OutcomeSuccessError one whose criteria could not be evaluated.
	OutcomeSuccessFailed events.Outcome = "success-failed"
	OutcomeSuccessError  events.Outcome = "success-error"
	// OutcomeCheckFailed is a run whose declared tool marked check: true
	// failed its last call.
	OutcomeCheckFailed events.Outcome = "check-failed"
)

// ending is why a run stopped before its natural end, with the verdict it
// forces.
type ending struct {
	verdict events.Verdict
	outcome events.Outcome
	reason  string
}

// runState is one run while it runs: its life (start, execute, finish),
// the steps every source of calls goes through, the checks after a step
// and the verdict's facts. What the run acts on, how it acts and checks,
// its model and the planner of its turns are owned types of their own
// (the environment, the actor, the checker, the model's state, the
// planner); the actor, the checker, the model and the planner hold
// pointers to the parts they read and write, set once in newRunState. Only the run's own goroutine touches it, except where a
// field says otherwise.
type runState struct {
	r     *Runner
	bus   *events.Bus
	rep   *report.Writer
	files *scenarios.Files

	// env is what the run launched and acts on (environment).
	env environment
	// act runs the built-in tools' actions and keeps the screens they
	// leave (actor.go); it holds pointers to the parts below it writes.
	act actor
	// check runs the checks of expect: and of the success criteria
	// (checks.go).
	check checker
	// book is what a call is checked against and the budgets it spends
	// (guardbook.go).
	book guardBook
	// outcome is what the verdict is decided from, gathered as the run
	// goes: how it ended, what the model said, the concerns raised and
	// what became of the calls (verdict.go).
	outcome verdictFacts

	// startedAt is when the run began, for the deadline budget.
	startedAt time.Time
	// loop counts what the agentic loop did, for the report; model is
	// the run's model, its health and what it is asked (loop.go), one
	// value from the run's start that the parts reading it share.
	loop  loopStats
	model *modelState
	// planner plans the goal loop's turns: the action cache's replay,
	// else the model (planner.go).
	planner planner
}

// environment is what the run launched and acts on: the stage's parts,
// the window input goes to, the readers of the screen and what the
// application says.
type environment struct {
	// r, files and bus are the run's runner, files and event bus, which
	// the environment reads its settings from and logs to.
	r     *Runner
	files *scenarios.Files
	bus   *events.Bus

	// life bounds what the run launches; it outlasts the work context.
	life context.Context
	// stage is what the run launched (engine/stage); the fields below
	// are the parts of it the rules act on, taken once it is set.
	stage   *stage.Stage
	session displayServer
	desk    stage.Desktop
	app     app
	win     desktop.Window
	hasWin  bool
	// target is the window switch_window chose, while hasTarget.
	target    desktop.Window
	hasTarget bool
	// appEnv is what the run adds to the app's environment (display,
	// isolation); declared tools get it too.
	appEnv []string

	a11y *accessibility
	// answers are the operator's answers to ask_human, typed by ref.
	answers []answerValue
	// controlsSeen is the named controls' list as the last two updates
	// saw it, which decides whether click_element offers them as an enum.
	controlsSeen [2][]string
	// ocrReader reads text for text targets and conditions (seeing.go).
	ocrReader *ocr.Reader
	// onScreen is where secrets may show, masked on every kept screen
	// (mask.go).
	onScreen secretsOnScreen
	// web is the browser over CDP, when the scenario has a browser: section.
	web *browserRun

	// appOut redacts the app's and the browser's output on its way to
	// app.log as one stream, so a secret split between reads is masked.
	appOut *redact.Stream
	// appFinished is set when the app exited with a success exit code: the
	// run ends normally.
	appFinished bool
	// expectedExit is the exit code a step's expect: saw the app end with.
	expectedExit *int
	// responsive is the newest app_responsive check (responsive.go), nil
	// until the application was asked.
	responsive *events.Check

	// fatalLine is set from the output pump's goroutine.
	fatalMu   sync.Mutex
	fatalLine string
}

type loopStats struct {
	iterations, malformed, rescued int
	ended                          string // why the loop ended, in words
	ran                            bool

	// totalToolErrors counts every declared-tool failure of the run, for
	// the report (loop.tool_errors); the consecutive count that
	// runner.max_tool_errors bounds is guardBook.consecutiveToolErrors.
	totalToolErrors int
}

func newRunState(r *Runner, bus *events.Bus, rep *report.Writer) *runState {
	s := &runState{
		r: r, bus: bus, rep: rep, files: r.files,
		env:       environment{r: r, files: r.files, bus: bus},
		book:      guardBook{declaredCalls: map[string]int{}},
		startedAt: time.Now(),
	}
	s.model = &modelState{files: r.files, r: r, bus: bus, outcome: &s.outcome, book: &s.book, env: &s.env, act: &s.act, rep: rep}
	s.check = checker{env: &s.env, act: &s.act, book: &s.book, outcome: &s.outcome, files: r.files, r: r, bus: bus}
	s.act = actor{env: &s.env, book: &s.book, outcome: &s.outcome, model: s.model, loop: &s.loop,
		rep: rep, bus: bus, files: r.files, r: r}
	s.planner = planner{env: &s.env, book: &s.book, model: s.model, check: &s.check, outcome: &s.outcome, loop: &s.loop,
		judges: s.judgesSuccess, bus: bus, files: r.files, r: r}
	return s
}

func (s *runState) log(format string, args ...any) { logTo(s.bus, format, args...) }

func (e *environment) log(format string, args ...any) { logTo(e.bus, format, args...) }

// logTo publishes a log line on bus.
func logTo(bus *events.Bus, format string, args ...any) {
	bus.Publish(events.Event{Kind: events.KindLog, Message: fmt.Sprintf(format, args...)})
}

// concern raises a concern once, however often it is raised.
func (s *runState) concern(msg string) { raiseConcern(s.bus, &s.outcome, msg) }

// raiseConcern adds msg to the verdict's concerns and publishes it, once
// however often it is raised.
func raiseConcern(bus *events.Bus, facts *verdictFacts, msg string) {
	if facts.addConcern(msg) {
		bus.Publish(events.Event{Kind: events.KindConcern, Message: msg})
	}
}

// start announces the run with everything the files decided.
func (s *runState) start() {
	sc := s.files.Scenario
	total, reserve := s.r.deadlines()
	s.setTools(OffersFromFiles(s.files))
	s.env.watchGivenSecrets()
	mode := sc.Mode()
	if s.r.agent != nil {
		mode = "session"
	}
	plan := sc.Plan
	if plan == nil {
		plan = []string{}
	}
	s.bus.Publish(events.Event{Data: events.RunStarted{
		Scenario: sc.Name, File: sc.File, SHA256: sc.SHA256,
		Mode: mode,
		Goal: sc.Goal, Plan: plan, DeadlineS: total.Seconds(), ReserveS: reserve.Seconds(),
		Tools: s.book.names, Steps: len(sc.Steps),
	}})
}

// setTools fixes the run's tool list for the given offers.
func (s *runState) setTools(offers Offers) {
	if s.r.inbox != nil {
		offers.Inbox = true
	}
	s.book.setTools(offers, ToolList(s.files, offers), s.env.withAnswerRefs)
}

// execute launches the app and runs the steps or the loop. A panic in
// either is recorded as a runtime fault, so the report still completes.
func (s *runState) execute(ctx context.Context) {
	defer func() {
		if p := recover(); p != nil {
			s.outcome.stop(events.VerdictTestError, OutcomeRuntimeFault, fmt.Sprintf("internal error: %v", p))
			s.log("internal error: %v\n%s", p, debug.Stack())
		}
	}()
	if err := s.launch(ctx); err != nil {
		// A launch cut short by the deadline or Ctrl-C is named by
		// interruption, not reported as a fault. The stage's failures
		// were judged already; stop keeps that first reason.
		if ctx.Err() == nil {
			s.outcome.stop(events.VerdictTestError, OutcomeRuntimeFault, err.Error())
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
	s.check.awaitExpectedExit(ctx)
	s.judgeSuccess(ctx)
}

// interruption records why the work context ended, if it did: an abort,
// a signal or the deadline.
func (s *runState) interruption(parent, work context.Context) {
	if work.Err() == nil {
		return
	}
	switch {
	case s.r.steer.isAborted():
		s.outcome.stop(events.VerdictTestError, OutcomeAborted, "the operator aborted the run")
	case parent.Err() != nil:
		s.outcome.stop(events.VerdictTestError, OutcomeInterrupted, fmt.Sprintf("the run was interrupted (%v)", context.Cause(parent)))
	default:
		total, reserve := s.r.deadlines()
		s.outcome.stop(events.VerdictTestError, OutcomeDeadline,
			fmt.Sprintf("the %gs deadline was reached (the last %gs are kept for the report)", total.Seconds(), reserve.Seconds()))
	}
}

// outputScanner is the application's stdout/stderr sink: app.log, and the
// fatal log patterns.
func (s *runState) outputScanner() io.Writer {
	if s.env.appOut == nil {
		s.env.appOut = s.r.redact.Stream(s.rep.AppLog())
	}
	// midLine is set while this source's line continues in its next write
	// (the pump splits lines longer than its read).
	midLine := false
	return writerFunc(func(p []byte) (int, error) {
		if _, err := s.env.appOut.Write(p); err != nil {
			return 0, err
		}
		if len(p) == 0 || len(s.r.fatal) == 0 {
			return len(p), nil
		}
		startsMid := midLine
		midLine = p[len(p)-1] != '\n'
		for rest, first := p, true; len(rest) > 0; first = false {
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
				s.env.fatalMu.Lock()
				if s.env.fatalLine == "" {
					s.env.fatalLine = s.fatalEvidence(text, re, first && startsMid, endsMid)
				}
				s.env.fatalMu.Unlock()
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
	exitedOK := s.env.exitedSuccessfully() || s.check.exitedAsExpected()
	if s.env.app != nil {
		c := events.Check{Name: "process_alive", OK: s.env.app.Alive() || exitedOK}
		if !s.env.app.Alive() {
			c.Evidence = "the application " + s.env.app.ExitStatus().String()
			switch {
			case s.check.exitedAsExpected():
				c.Evidence += ", as the scenario expects (app.expect_exit)"
			case exitedOK:
				c.Evidence += ", a success exit code (app.success_exit_codes)"
			case s.env.expectExit() != nil:
				c.Evidence += fmt.Sprintf(", not with a code the scenario expects (app.expect_exit: %v)", s.env.expectExit().ExitCodes()) + s.lastWords()
			default:
				c.Evidence += s.lastWords()
			}
		}
		out = append(out, c)
	}
	if s.env.hasWin {
		c := events.Check{Name: "window_present", OK: true}
		w, err := s.env.desk.Window(s.env.win.ID)
		switch {
		case exitedOK:
			c.Evidence = "the application exited successfully, so its window is gone"
		case s.env.expectExit() != nil && (err != nil || !w.Viewable):
			// An app on its way out closes its window before its process
			// ends; the exit itself is checked once the steps are done.
			c.Evidence = "the window is gone; the application is expected to exit (app.expect_exit)"
		case err != nil:
			c.OK, c.Evidence = false, fmt.Sprintf("window 0x%x: %v", s.env.win.ID, err)+s.env.windowsInstead()
		case !w.Viewable:
			c.OK, c.Evidence = false, fmt.Sprintf("window 0x%x is no longer mapped", s.env.win.ID)+s.env.windowsInstead()
		default:
			s.env.win = w
		}
		out = append(out, c)
	}
	if s.env.responsive != nil {
		out = append(out, *s.env.responsive)
	}
	s.env.fatalMu.Lock()
	line := s.env.fatalLine
	s.env.fatalMu.Unlock()
	c := events.Check{Name: "fatal_pattern", OK: line == ""}
	if line != "" {
		c.Evidence = line
	}
	return append(out, c)
}

// exitedSuccessfully reports whether the app has exited with one of the
// scenario's success exit codes (an app that exits when its job is done).
func (e *environment) exitedSuccessfully() bool {
	if e.app == nil || e.app.Alive() || e.files.Scenario.App == nil {
		return false
	}
	st := e.app.ExitStatus()
	if st.Signal != 0 {
		return false
	}
	if e.expectedExit != nil && st.Code == *e.expectedExit {
		return true
	}
	for _, code := range e.files.Scenario.App.SuccessExitCodes {
		if st.Code == code {
			return true
		}
	}
	return false
}

// exitGrace is how long an app that may exit when its job is done
// (app.success_exit_codes) is given to end after its window goes, before
// the lost window counts as a failure: a dialog unmaps its window before
// its process has exited, and on a busy machine the gap is seconds (a
// toolkit takes its leave of the accessibility bus on the way out). It is
// the time the app may take to answer at all, app.hang_timeout_s.
func (e *environment) exitGrace() time.Duration {
	return time.Duration(e.files.Scenario.App.HangTimeoutS() * float64(time.Second))
}

// checkAfterStep runs the checks, asking a running application whether it
// still answers, and stops the run on the first failure.
func (s *runState) checkAfterStep(ctx context.Context) bool {
	if s.env.exitedSuccessfully() {
		s.env.appFinished = true
		return false
	}
	if s.act.sessionLost() {
		return false
	}
	checks := s.env.checksOnItsWayOut(ctx, s.checks)
	if s.env.exitedSuccessfully() {
		s.env.appFinished = true
		return false
	}
	if !slices.ContainsFunc(checks, func(c events.Check) bool { return !c.OK }) {
		s.checkResponsive(ctx)
		if r := s.env.responsive; r != nil && !r.OK {
			checks = append(checks, *r)
		}
	}
	for _, c := range checks {
		if c.OK {
			continue
		}
		// The final checks publish every result; here the first failure
		// only ends the run.
		outcome, _ := failedCheckOutcome(c.Name)
		s.outcome.stop(events.VerdictAppFailed, outcome, c.Evidence)
		return false
	}
	return true
}

// checksOnItsWayOut runs checks; when the window has gone from an app
// that may end with a success exit code, it first gives the app the time
// to exit (exitGrace) and checks again, so a dialog answered is not
// judged in the moment between its window going and its process ending.
func (e *environment) checksOnItsWayOut(ctx context.Context, checks func() []events.Check) []events.Check {
	cs := checks()
	if !e.windowGoneBeforeExit(cs) {
		return cs
	}
	select {
	case <-e.app.Done():
	case <-time.After(e.exitGrace()):
	case <-ctx.Done():
	}
	return checks()
}

// windowGoneBeforeExit reports whether the window check failed while an
// app that may end with a success exit code is still running: it may be
// on its way out.
func (e *environment) windowGoneBeforeExit(checks []events.Check) bool {
	// An app that exited since the checks began counts too: its window
	// went first, and the wait for its end returns at once.
	if e.app == nil || e.files.Scenario.App == nil || len(e.files.Scenario.App.SuccessExitCodes) == 0 {
		return false
	}
	for _, c := range checks {
		if c.Name == "window_present" && !c.OK {
			return true
		}
	}
	return false
}

// capture takes a screenshot (after the screen settles when settle is
// set), writes it to the report and announces it, and returns its pixels
// for the caller to look at. sent says whether the step hands the screen
// on to the model or an outside agent in its result (see saveScreen).
func (a *actor) capture(ctx context.Context, settle, sent bool) (string, *image.RGBA, error) {
	var opts *desktop.SettleOptions
	if settle {
		o := a.env.settleOptions(false)
		opts = &o
	}
	rel, frame, err := a.captureWith(ctx, opts, sent)
	if err != nil {
		return "", nil, err
	}
	img, err := frame.Image()
	if err != nil {
		return "", nil, fmt.Errorf("capture the screen: %w", err)
	}
	return rel, img, nil
}

// captureWith takes a screenshot, after the screen settles as settle says
// when it is not nil, writes it to the report and announces it; sent is
// capture's. A headless page's capture is kept as the browser encoded it
// and decoded only when its frame's pixels are asked for: an action's
// step, which only keeps its settled screen, never waits on a decode.
func (a *actor) captureWith(ctx context.Context, settle *desktop.SettleOptions, sent bool) (string, *report.Frame, error) {
	var img *image.RGBA
	var encoded []byte
	var err error
	settled := true
	switch {
	case a.env.web.PageIsTheScreen():
		encoded, err = a.env.web.CapturePNG(ctx)
	case settle != nil:
		img, settled, err = a.env.desk.WaitSettled(ctx, *settle)
	default:
		img, err = a.env.desk.Capture(ctx)
	}
	if err != nil {
		return "", nil, fmt.Errorf("capture the screen: %w", err)
	}
	rel, frame, err := a.keepCapture(ctx, img, encoded, settled, sent)
	if err != nil {
		return "", nil, fmt.Errorf("capture the screen: %w", err)
	}
	return rel, frame, nil
}

// keepCapture writes a capture to the report and announces it, and
// returns its path in the report and its frame. The capture is img, or,
// when img is nil, encoded: a headless page's PNG as the browser encoded
// it, kept as it is and not decoded here unless a secret may be masked on
// it. sent is capture's. The error is a PNG that could not be read.
func (a *actor) keepCapture(ctx context.Context, img *image.RGBA, encoded []byte, settled, sent bool) (string, *report.Frame, error) {
	if img == nil && a.env.onScreen.any() {
		// Masking needs the pixels, and the report then writes the
		// masked ones, encoded again.
		var err error
		if img, err = screenpng.Decode(encoded); err != nil {
			return "", nil, fmt.Errorf("decode the page's capture: %w", err)
		}
	}
	// Secrets are masked before the frame exists: it is encoded later,
	// in the background for the report.
	var shown []string
	var frame *report.Frame
	if img != nil {
		shown = a.env.maskSecrets(ctx, img)
		if encoded == nil {
			frame = a.rep.NewCaptureFrame(img) // the X server's pixels, opaque
		} else {
			frame = a.rep.NewFrame(img)
		}
	} else {
		var err error
		if frame, err = a.rep.NewPNGFrame(encoded); err != nil {
			return "", nil, err
		}
	}
	rel := a.saveScreen(frame, sent)
	a.reportShown(shown, rel)
	b := frame.Bounds()
	a.book.keep(frame, img)
	a.publish(events.Event{Screen: rel, Data: events.ScreenCaptured{
		Width: b.Dx(), Height: b.Dy(), Settled: settled, Window: a.env.screenWindow(), Pixels: frame,
	}})
	return rel, frame, nil
}

// finish runs the final checks, decides the verdict, stops everything the
// run started and announces the end.
func (s *runState) finish(ctx context.Context) Result {
	var checks []events.Check
	s.act.sessionLost()
	s.announce(ctx, true)
	if s.env.app != nil {
		// The last step may have been what ends the app (a dialog's
		// answer): its window can go after that step's checks.
		checks = s.env.checksOnItsWayOut(ctx, s.checks)
		if c, ok := s.check.expectedExitCheck(); ok {
			checks = append(checks, c)
		}
	}
	checks = append(checks, s.outcome.calls.toolChecks()...)
	for i := range checks {
		s.bus.Publish(events.Event{Kind: events.KindCheck, Check: &checks[i]})
	}
	if s.loop.ran {
		s.bus.Publish(events.Event{Message: s.loop.ended, Data: events.LoopEnded{
			Iterations: s.loop.iterations, Malformed: s.loop.malformed,
			ToolErrors: s.loop.totalToolErrors, Rescued: s.loop.rescued,
		}})
	}
	v, raised := decideVerdict(s.facts(checks))
	for _, c := range raised {
		s.concern(c)
	}
	s.planner.closeCache(v.Verdict)
	s.act.finalCapture(ctx, v.Outcome)
	s.bus.Publish(events.Event{Kind: events.KindVerdict, Verdict: &v})
	s.env.shutdown()
	s.bus.Publish(events.Event{Data: events.RunEnded{Report: s.rep.Dir()}})
	return Result{Verdict: v.Verdict, Outcome: v.Outcome, Reasons: v.Reasons}
}

// shutdown stops everything the run launched, then closes app.log once
// the output pumps have ended with their processes.
func (e *environment) shutdown() {
	if e.stage != nil {
		e.stage.Strike()
	}
	if e.appOut != nil {
		if err := e.appOut.Close(); err != nil {
			e.log("write app.log: %v", err)
		}
	}
	if e.ocrReader != nil {
		_ = e.ocrReader.Close() // the long-lived tesseract, if one ran
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
func truncate(s string, n int) string { return stage.Truncate(s, n) }
