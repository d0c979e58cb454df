package engine

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"time"

	"github.com/kasmrt/kasmrt/drivers/proc"
	"github.com/kasmrt/kasmrt/engine/capacity"
	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/redact"
	"github.com/kasmrt/kasmrt/engine/report"
	"github.com/kasmrt/kasmrt/engine/report/page"
	"github.com/kasmrt/kasmrt/engine/stage"
	"github.com/kasmrt/kasmrt/inbox"
	"github.com/kasmrt/kasmrt/internal/httpguard"
	"github.com/kasmrt/kasmrt/scenarios"
)

// Options are the parts of a run that come from how it was started rather
// than from the files.
type Options struct {
	// ReportDir is where the report is written; it is created.
	ReportDir string
	// Sinks receive every event, redacted, in order (console, --json).
	// They are called synchronously and must not block.
	Sinks []func(events.Event)
	// Display overrides the operator file's session.display; "-" forces an
	// embedded Xvfb. $DISPLAY is never used on its own, so a run started
	// from a desktop terminal does not drive the operator's own screen.
	Display string
	// Interactive marks a run with an operator at a console: it gets an
	// inbox of its own, so ask_human is offered.
	Interactive bool
	// ModelTransport, when set, carries the model's HTTP requests (used to
	// record or replay a model's exchanges).
	ModelTransport http.RoundTripper
	// ModelSleep, when set, replaces the model client's wait between
	// retries (tests use it so nine attempts do not take minutes).
	ModelSleep func(ctx context.Context, d time.Duration) error
	// Getenv reads the environment (nil: os.Getenv).
	Getenv func(string) string
	// Version is kasmrt's version, recorded in manifest.json.
	Version string
	// Published is the URL under which the caller serves this run's HTTP
	// API (kasmrt run --listen, or inbox.listen, in package serve); the
	// runner then binds no inbox.listen of its own.
	Published string
	// SampleIndex numbers this run among repeated samples of one scenario
	// (0 for the first): it is recorded in manifest.json and shifts the
	// paired sampling seed so samples differ.
	SampleIndex int
	// Gates bound the requests to each capacity group
	// (services.<group>.max_concurrent) and are shared by every run of a
	// suite; nil gives the run gates of its own from the operator file.
	Gates *capacity.Gates
	// Cache overrides the operator file's cache: (read-write, read-only,
	// off) for a goal run; "" keeps the file's.
	Cache string
	// Machine is where the run's session, app and browser come from; nil
	// is the real drivers. A suite's worker passes one that keeps its
	// display between runs.
	Machine stage.Machine
	// Takeover, when set, lets the operator take the desktop over
	// (Runner.TakeOver): the loopback host:port its VNC server listens on,
	// port 0 for any. TakeoverPausesDeadline stops the deadline's clock
	// while the operator has the desktop (engine/takeover.go).
	Takeover               string
	TakeoverPausesDeadline bool
	// UpdateBaselines makes every screenshot check write the window as its
	// baseline (beside the scenario) instead of comparing it.
	UpdateBaselines bool
}

// Result is how a run ended.
type Result struct {
	Verdict   events.Verdict
	Outcome   events.Outcome
	Reasons   []string
	ReportDir string
}

// ExitCode maps the verdict to `kasmrt run`'s exit code (docs/architecture.md, "The verdict"); with
// strict, concerns give 4.
func (r Result) ExitCode(strict bool) int { return ExitCodeFor(r.Verdict, strict) }

// ExitCodeFor maps a verdict to `kasmrt run`'s exit code; with strict,
// concerns give 4. Anything but a judged verdict (test-error, a run that
// never ran) is 2: the run could not be judged.
func ExitCodeFor(verdict events.Verdict, strict bool) int {
	switch verdict {
	case events.VerdictPass:
		return 0
	case events.VerdictPassConcerns:
		if strict {
			return 4
		}
		return 0
	case events.VerdictAppFailed:
		return 1
	}
	return 2
}

// Runner runs one scenario. Create it with New, start it with Run; while
// it runs, Answer and Steer act on it from other goroutines (the console).
type Runner struct {
	files  *scenarios.Files
	opts   Options
	redact *redact.Redactor
	// answers masks the answers the operator marked secret during the run.
	answers answerSecrets
	fatal   []*regexp.Regexp
	inbox   *inbox.Inbox
	steer   *steering
	getenv  func(string) string
	// machine provides the session and the app: the real drivers, or the
	// rule tests' double.
	machine machine
	// serverGrace is how long a dead app's X server is given to be noticed
	// gone too, so the cause rather than the symptom ends the run.
	serverGrace time.Duration

	// inboxListener is the inbox's bound address (inbox.listen), bound by
	// Listen before anything launches.
	inboxListener net.Listener
	// notifier announces questions to inbox.notify.webhook (nil: none).
	notifier *notifier
	// agent, when set, makes the run a session: its calls come from an
	// outside agent (Open) instead of steps or a model.
	agent *agentFeed

	mu  sync.Mutex
	bus *events.Bus
	// early holds operator actions taken before the run started, published
	// once it has; over is set when the stream is complete.
	early []events.Event
	over  bool
	// agentOffers are a session's offers once it has launched.
	agentOffers Offers

	// takeover is the operator's takeover of the desktop, nil unless
	// Options.Takeover is set; vnc starts its server; clock is the work
	// context when a takeover pauses the deadline (engine/takeover.go).
	takeover *takeoverDesk
	vnc      vncStarter
	clock    *pausableDeadline
}

// New resolves the files and options into a runner. Nothing is launched.
func New(files *scenarios.Files, opts Options) (*Runner, error) {
	if opts.ReportDir == "" {
		return nil, errors.New("run: no report directory")
	}
	// Problems only the engine can see (model profiles and their options)
	// are bad input too: refuse them before anything launches.
	if err := Check(files); err != nil {
		return nil, err
	}
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if opts.Gates == nil {
		g, err := capacity.New(files.Operator.ServiceLimits())
		if err != nil {
			return nil, err
		}
		opts.Gates = g
	}
	r := &Runner{
		files:  files,
		opts:   opts,
		redact: RedactorFor(files),
		getenv: getenv,
		steer:  newSteering(),

		machine:     stage.Drivers{},
		serverGrace: 300 * time.Millisecond,
	}
	if files.Scenario.App != nil {
		for _, p := range files.Scenario.App.FatalPatterns {
			r.fatal = append(r.fatal, regexp.MustCompile(p)) // validated at load
		}
	}
	if opts.Machine != nil {
		r.machine = opts.Machine
	}
	if opts.Takeover != "" {
		r.takeover, r.vnc = newTakeoverDesk(opts.Takeover, opts.TakeoverPausesDeadline), x11vnc{}
	}
	if files.Operator.HasInbox() || opts.Interactive {
		opts := inbox.Options{Redact: r.Redact, OnSecret: r.answers.addSecret}
		if r.notifier = newNotifier(r); r.notifier != nil {
			opts.Notify = r.notifier.question
		}
		r.inbox = inbox.New(opts)
	}
	return r, nil
}

// NoBaselineToUpdate is the report's log line, and the command line's
// warning, when --update-baselines meets a scenario without a screenshot
// check.
const NoBaselineToUpdate = "--update-baselines: the scenario has no screenshot check (expect: screenshot: in a step or success:), so no baseline is written"

// RedactorFor returns the redactor for a run of files: the scenario's
// secrets and the operator file's credentials, whole and by their
// prefixes, and the texts that carry a credential (a webhook's URL and
// header values), whole.
func RedactorFor(files *scenarios.Files) *redact.Redactor {
	secrets := append(files.Scenario.SecretValues(), files.Operator.Credentials()...)
	return redact.NewWith(secrets, files.Operator.CredentialCarriers())
}

// Redact removes the run's secrets from s.
func (r *Runner) Redact(s string) string { return r.answers.redact(r.redact.String(s)) }

// deadlines returns the whole-run deadline and the reserve kept at its end
// for diagnosis and the report: 30 s, or a third of a deadline shorter than
// 90 s so short test deadlines still leave time to act.
func (r *Runner) deadlines() (total, reserve time.Duration) {
	total = time.Duration(r.files.Operator.DeadlineS * float64(time.Second))
	reserve = scenarios.DeadlineReserveS * time.Second
	if total < 3*reserve {
		reserve = total / 3
	}
	return total, reserve
}

// NotStartedError is a run that could not begin: nothing was launched and
// no report was written. The command line treats it as bad input.
type NotStartedError struct{ Err error }

func (e *NotStartedError) Error() string { return e.Err.Error() }
func (e *NotStartedError) Unwrap() error { return e.Err }

// Listen binds the inbox's HTTP address (inbox.listen) so a busy or
// forbidden port is an error before anything launches, not a log line
// while ask_human waits out the deadline. Run calls it when the caller has
// not.
func (r *Runner) Listen() error {
	addr := r.files.Operator.Inbox.Listen
	if r.inbox == nil || addr == "" || r.inboxListener != nil || r.opts.Published != "" {
		return nil
	}
	// A suite's runs bind inbox.listen here: the address is held to the
	// same token rule as run --listen and serve.
	token, key := r.files.Operator.InboxToken()
	if err := httpguard.CheckListen("inbox.listen", addr, token, key); err != nil {
		return &NotStartedError{Err: err}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return &NotStartedError{Err: fmt.Errorf("serve the inbox on %s (inbox.listen): %w", addr, err)}
	}
	r.inboxListener = ln
	return nil
}

// Run runs the scenario and always writes a complete report, whatever ends
// the run: the verdict, the deadline, a fault or ctx (Ctrl-C). Only a run
// that cannot begin (a NotStartedError) writes none.
func (r *Runner) Run(ctx context.Context) (Result, error) {
	if err := r.Listen(); err != nil {
		return Result{}, err
	}
	if r.opts.UpdateBaselines && !r.files.Scenario.HasScreenshotCheck() {
		// Not an error: a suite updates the baselines of all its
		// scenarios, and most have none. But a run asked to write
		// baselines that writes none says so in its report (published
		// right after run.started).
		r.publish(events.Event{Kind: events.KindLog, Message: NoBaselineToUpdate})
	}
	rep, err := report.Create(r.opts.ReportDir, r.Redact)
	if err != nil {
		if r.inboxListener != nil {
			r.inboxListener.Close()
		}
		return Result{}, err
	}
	rep.LimitAppLog(r.files.Operator.Runner.AppLogMaxBytes)
	manifest := r.startManifest()
	sinks := append([]func(events.Event){rep.Event}, r.opts.Sinks...)
	bus := events.NewBus(r.Redact, sinks...)
	r.mu.Lock()
	r.bus = bus
	r.mu.Unlock()

	// Work stops when the reserve begins; the report still has the reserve.
	_, reserve := r.deadlines()
	workCtx, cancelWork := r.workContext(ctx)
	defer cancelWork()
	r.steer.bind(cancelWork)

	// The inbox and its HTTP surface stop before the stream is closed, so
	// no late event reaches a finished report.
	stopInbox := func() {}
	if r.inbox != nil {
		stopObserving := r.inbox.Observe(func(u inbox.Update) { publishInboxUpdate(r.publish, u) })
		stopInbox = stopObserving
		if r.inboxListener != nil {
			shutdown := r.serveInbox(r.inboxListener)
			stopInbox = func() { stopObserving(); shutdown() }
		}
	}
	// The app lives until finish has run the final checks and stopped it,
	// not just until the work ends: Ctrl-C or the deadline must not kill it
	// before the checks look, or they would blame the app for our own stop.
	// This context only backs up that explicit stop.
	lifeCtx, cancelLife := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelLife()
	st := newRunState(r, bus, rep)
	st.env.life = lifeCtx
	st.start()
	r.mu.Lock()
	early := r.early
	r.early = nil
	r.mu.Unlock()
	for _, e := range early {
		bus.Publish(e)
	}
	st.execute(workCtx)
	if r.takeover != nil {
		r.takeover.close()
	}

	// Finish within the reserve even when ctx (Ctrl-C) is done: diagnosis
	// and the report are not cancelled with the work.
	finishCtx, cancelFinish := context.WithTimeout(context.WithoutCancel(ctx), reserve)
	defer cancelFinish()
	st.interruption(ctx, workCtx)
	res := st.finish(finishCtx)
	res.ReportDir = r.opts.ReportDir
	manifest.end(rep.Report(), res)
	stopInbox()
	// The stream is complete: later operator actions have nothing to act on.
	r.mu.Lock()
	r.bus, r.over = nil, true
	r.mu.Unlock()
	werr := rep.WriteReport()
	if err := rep.Close(); err != nil && werr == nil {
		werr = fmt.Errorf("write report: %w", err)
	}
	if err := page.Write(r.opts.ReportDir, page.Options{Redact: r.Redact}); err != nil && werr == nil {
		werr = err
	}
	// The manifest is written last: a run is complete on resume only when
	// its manifest says it ended, so everything else is on disk first.
	if err := manifest.write(); err != nil && werr == nil {
		werr = err
	}
	return res, werr
}

// publish adds an event from outside the run's goroutine (an operator
// action, an inbox change) to the run's stream. Before the run starts it
// is kept and published right after run.started; after the run is over it
// is dropped. It publishes under r.mu so nothing slips in after the end.
func (r *Runner) publish(e events.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.bus != nil:
		r.bus.Publish(e)
	case !r.over:
		r.early = append(r.early, e)
	}
}

// Answer answers an ask_human question without a mark, so privately: the
// model can type the answer by its ref but is not shown it.
func (r *Runner) Answer(id, text string) error {
	if r.inbox == nil {
		return errors.New("this run has no inbox")
	}
	return r.inbox.Answer(id, text, "console")
}

// AnswerMarked answers an ask_human question with the operator's mark:
// shareable lets the model read the answer, private (the default, and
// Answer's) keeps it from the model, which can still type it by ref, and
// secret masks it like any secret of the run.
func (r *Runner) AnswerMarked(id, text string, m inbox.Mark) error {
	if r.inbox == nil {
		return errors.New("this run has no inbox")
	}
	return r.inbox.AnswerMarked(id, text, "console", m)
}

// Inbox returns the run's inbox, or nil when it has none.
func (r *Runner) Inbox() *inbox.Inbox { return r.inbox }

// Steer applies an operator action: pause, resume, step mode, approve or
// reject a proposed call, abort, or a note to the model. Every action is an
// event, so it is in the report.
func (r *Runner) Steer(s events.Steer) error {
	switch s.Action {
	case events.SteerPause, events.SteerResume, events.SteerStep, events.SteerApprove,
		events.SteerReject, events.SteerAbort, events.SteerNote:
	default:
		return fmt.Errorf("unknown steering action %q", s.Action)
	}
	r.publish(events.Event{Kind: events.KindSteer, Steer: &s, Source: events.SourceOperator})
	r.steer.apply(s)
	return nil
}

// scenarioDir is the directory relative paths in the scenario resolve
// against.
func (r *Runner) scenarioDir() string { return filepath.Dir(r.files.Scenario.File) }

// appDir is where the application and declared tools run.
func (r *Runner) appDir() string {
	if a := r.files.Scenario.App; a != nil && a.Dir != "" {
		if filepath.IsAbs(a.Dir) {
			return a.Dir
		}
		return filepath.Join(r.scenarioDir(), a.Dir)
	}
	return r.scenarioDir()
}

// display picks the X display: the flag, the operator file, or "" for an
// embedded Xvfb. $DISPLAY is deliberately not consulted: every desktop
// terminal sets it, and using it would put the app on the operator's
// screen, move their pointer and send their desktop to the model.
func (r *Runner) display() string {
	switch d := r.opts.Display; d {
	case "-":
		return ""
	case "":
	default:
		return d
	}
	return r.files.Operator.Desktop.Display
}

// Ensure the drivers' types satisfy what the engine needs of them.
var (
	_ app = (*proc.Process)(nil)
)

// publishInboxUpdate turns inbox changes into question and answer events.
func publishInboxUpdate(publish func(events.Event), u inbox.Update) {
	switch u.Kind {
	case inbox.KindAsked:
		publish(events.Event{Kind: events.KindQuestion, Question: &events.Question{ID: u.QuestionID, Text: u.Text}})
	case inbox.KindAnswered:
		q := &events.Question{ID: u.QuestionID, Answer: u.Text, By: u.By}
		if u.Question != nil {
			q.Text = u.Question.Text
		}
		publish(events.Event{Kind: events.KindAnswer, Question: q})
	case inbox.KindUnanswered:
		q := &events.Question{ID: u.QuestionID, Unanswered: u.Text}
		if u.Question != nil {
			q.Text = u.Question.Text
		}
		publish(events.Event{Kind: events.KindAnswer, Question: q})
	}
}

// serveInbox exposes the inbox over HTTP for remote operators and
// messaging bridges, authenticated with the operator file's token.
func (r *Runner) serveInbox(ln net.Listener) func() {
	token := r.files.Operator.Inbox.SessionToken
	if token == "" {
		token = r.files.Operator.Inbox.MessagingToken
	}
	srv := &http.Server{Handler: r.inbox.Handler(token), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	r.publish(events.Event{Kind: events.KindLog, Message: "inbox listening on http://" + ln.Addr().String()})
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		// An open event stream never ends on its own: close what Shutdown
		// could not drain.
		if srv.Shutdown(ctx) != nil {
			_ = srv.Close()
		}
	}
}
