package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/kasmrt/kasmrt/engine"
	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/model"
	"github.com/kasmrt/kasmrt/scenarios"
)

type runFlags struct {
	operator    string
	reportDir   string
	tui         bool
	headless    bool
	json        bool
	strict      bool
	display     string
	graphics    string
	theme       string
	recordModel string
	replayModel string
	// reapOrphans is set when kasmrt runs as its own process (not in
	// tests that call run in-process alongside other runs).
	reapOrphans bool
}

func newRunCommand() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run SCENARIO",
		Short: "Run a scenario and write its report",
		Long: `run launches the scenario's application in an X11 session ($DISPLAY, or its
own Xvfb when there is none), runs its steps or its goal, and writes the report
directory. The console shows the run live when stdout is a terminal; otherwise,
or with --headless, a line per step is printed (--json prints every event).

Exit codes: 0 pass or pass-with-concerns (--strict: concerns give 4),
1 app-failed, 2 test-error (escalated, deadline, runtime fault),
3 bad input (nothing was launched).

Ctrl-C, SIGTERM and SIGHUP (the terminal closing) end the run with a complete
report and exit 2; a reader that closes stdout early (| head) does not stop it.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.reapOrphans, _ = cmd.Context().Value(ownProcessKey{}).(bool)
			return runScenario(cmd, args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.operator, "operator", "o", "", "operator file (budgets, model, session, inbox)")
	fl.StringVar(&f.reportDir, "report", "", "report directory (default reports/<scenario>-<time>)")
	fl.BoolVar(&f.tui, "tui", false, "show the live console (default when stdout is a terminal)")
	fl.BoolVar(&f.headless, "headless", false, "print progress lines instead of the console")
	fl.BoolVar(&f.json, "json", false, "print every event as a JSON line (implies --headless)")
	fl.BoolVar(&f.strict, "strict", false, "exit 4 when the verdict is pass-with-concerns")
	fl.StringVar(&f.display, "display", "", `X display to use ("-" forces an embedded Xvfb)`)
	fl.StringVar(&f.graphics, "graphics", "auto", "console screenshots: auto, kitty, sixel, blocks or none")
	fl.StringVar(&f.theme, "theme", "", "console theme: dark, light, high-contrast or a theme file")
	fl.StringVar(&f.recordModel, "record-model", "", "write every model exchange (redacted) to this file; a write failure stops the recording (a concern), never the run")
	fl.StringVar(&f.replayModel, "replay-model", "", "serve the model's turns from a recorded file instead of an endpoint")
	return cmd
}

func runScenario(cmd *cobra.Command, path string, f runFlags) error {
	if f.reapOrphans {
		becomeSubreaper()
		defer killOrphans()
	}
	if f.tui && (f.headless || f.json) {
		return badInput(errors.New("--tui cannot be combined with --headless or --json"))
	}
	if f.recordModel != "" && f.replayModel != "" {
		return badInput(errors.New("--record-model and --replay-model cannot be combined"))
	}
	cs, err := loadConsoleSettings(f)
	if err != nil {
		return err
	}
	lookup := os.LookupEnv
	if f.replayModel != "" {
		// A replayed run needs no endpoint; give the loader a placeholder
		// so goal scenarios validate.
		lookup = func(name string) (string, bool) {
			if name == scenarios.EnvVisionEndpoint {
				if v, ok := os.LookupEnv(name); ok && v != "" {
					return v, true
				}
				return "http://replay.invalid/v1", true
			}
			return os.LookupEnv(name)
		}
	}
	files, err := scenarios.Load(path, f.operator, lookup)
	if err == nil {
		err = engine.Check(files)
	}
	if err != nil {
		printProblems(cmd.ErrOrStderr(), err)
		return &exitError{code: exitBadInput}
	}
	dir := f.reportDir
	if dir == "" {
		dir = filepath.Join("reports", slug(files.Scenario.Name)+"-"+time.Now().Format("20060102-150405"))
	}
	opts := engine.Options{ReportDir: dir, Display: f.display}
	switch {
	case f.recordModel != "":
		red := engine.RedactorFor(files)
		rec, err := model.NewRecorder(f.recordModel, nil, red.Bytes)
		if err != nil {
			return badInput(fmt.Errorf("--record-model: %w", err))
		}
		defer func() {
			if err := rec.Close(); err != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "kasmrt: --record-model: %v\n", err)
			}
		}()
		opts.ModelTransport = rec
	case f.replayModel != "":
		rep, err := model.NewReplayer(f.replayModel)
		if err != nil {
			return badInput(fmt.Errorf("--replay-model: %w", err))
		}
		opts.ModelTransport = rep
	}
	if files.Scenario.Goal != "" {
		// The model's name is settled before anything launches: a server
		// that cannot name its one model is a problem in the operator file.
		if err := engine.ResolveModelName(cmd.Context(), files, opts.ModelTransport); err != nil {
			printProblems(cmd.ErrOrStderr(), err)
			return &exitError{code: exitBadInput}
		}
	}
	useTUI := f.tui || (!f.headless && !f.json && isTerminal(cmd.OutOrStdout()))
	if useTUI {
		return runWithConsole(cmd, files, opts, f, cs)
	}
	return runHeadless(cmd, files, opts, f)
}

// runHeadless runs with progress lines or JSON events on stdout.
func runHeadless(cmd *cobra.Command, files *scenarios.Files, opts engine.Options, f runFlags) error {
	out := cmd.OutOrStdout()
	if f.json {
		opts.Sinks = append(opts.Sinks, jsonSink(out))
	} else {
		printer := &progressPrinter{w: out}
		opts.Sinks = append(opts.Sinks, printer.event)
	}
	runner, err := engine.New(files, opts)
	if err != nil {
		return err
	}
	res, err := runner.Run(cmd.Context())
	if err != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "kasmrt: %v\n", runner.Redact(err.Error()))
		return &exitError{code: exitTestError}
	}
	return &exitError{code: res.ExitCode(f.strict)}
}

var slugRE = regexp.MustCompile(`[^a-z0-9]+`)

func slug(s string) string {
	s = strings.Trim(slugRE.ReplaceAllString(strings.ToLower(s), "-"), "-")
	if s == "" {
		return "run"
	}
	return s
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// jsonSink prints every event as one JSON line.
func jsonSink(w io.Writer) func(events.Event) {
	var mu sync.Mutex
	enc := json.NewEncoder(w)
	return func(e events.Event) {
		mu.Lock()
		defer mu.Unlock()
		_ = enc.Encode(e)
	}
}

// progressPrinter writes a concise line per step and the verdict.
type progressPrinter struct {
	mu sync.Mutex
	w  io.Writer
}

func (p *progressPrinter) event(e events.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch e.Kind {
	case events.KindRunStarted:
		d, _ := e.Data.(events.RunStarted)
		fmt.Fprintf(p.w, "scenario %q (%s)\n", d.Scenario, d.Mode)
	case events.KindSessionStarted:
		d, _ := e.Data.(events.SessionStarted)
		fmt.Fprintf(p.w, "session %s (%dx%d)\n", d.Display, d.Width, d.Height)
	case events.KindAppWindow:
		d, _ := e.Data.(events.AppWindow)
		fmt.Fprintf(p.w, "window %q at %d,%d %dx%d\n", d.Title, e.Box.X, e.Box.Y, e.Box.W, e.Box.H)
	case events.KindStepEnded:
		mark := map[string]string{events.StatusOK: "ok", events.StatusRefused: "REFUSED", events.StatusMalformed: "MALFORMED", events.StatusError: "ERROR"}[e.Status]
		args, _ := json.Marshal(e.Args)
		fmt.Fprintf(p.w, "%3d %-9s %s %s (%dms) %s\n", e.Step, mark, e.Tool, args, e.DurationMS, e.Message)
	case events.KindGrounding:
		g := e.Grounding
		fmt.Fprintf(p.w, "    grounding attempt %d: %s — %s\n", g.Attempt, g.Outcome, g.Reason)
	case events.KindConcern:
		fmt.Fprintf(p.w, "    concern: %s\n", e.Message)
	case events.KindConsole:
		// Only what a tester acts on: the page's warnings, errors and
		// uncaught exceptions; every message is in the report.
		switch d, _ := e.Data.(events.ConsoleMessage); d.Level {
		case "warning", "error", "exception":
			fmt.Fprintf(p.w, "    browser %s: %s\n", d.Level, d.Text)
		}

	case events.KindQuestion:
		fmt.Fprintf(p.w, "    question %s: %s\n", e.Question.ID, e.Question.Text)
	case events.KindModelRetry:
		fmt.Fprintf(p.w, "    model retry: %s\n", e.Message)
	case events.KindModelDisabled:
		fmt.Fprintf(p.w, "    model off: %s\n", e.Message)
	case events.KindCheck:
		if !e.Check.OK {
			fmt.Fprintf(p.w, "    check %s FAILED: %s\n", e.Check.Name, e.Check.Evidence)
		}
	case events.KindLoopEnded:
		fmt.Fprintf(p.w, "loop ended: %s\n", e.Message)
	case events.KindVerdict:
		fmt.Fprintf(p.w, "verdict: %s (%s)\n", e.Verdict.Verdict, e.Verdict.Outcome)
		for _, r := range e.Verdict.Reasons {
			fmt.Fprintf(p.w, "  - %s\n", r)
		}
	case events.KindRunEnded:
		d, _ := e.Data.(events.RunEnded)
		fmt.Fprintf(p.w, "report: %s\n", d.Report)
	}
}
