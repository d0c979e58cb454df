package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/kasmrt/kasmrt/engine"
	"github.com/kasmrt/kasmrt/engine/cache"
	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/model"
	"github.com/kasmrt/kasmrt/scenarios"
	"github.com/kasmrt/kasmrt/themes"
	"github.com/kasmrt/kasmrt/tui"
	"github.com/kasmrt/kasmrt/tui/sanitize"
)

type runFlags struct {
	operator    string
	reportDir   string
	overwrite   bool
	tui         bool
	headless    bool
	json        bool
	strict      bool
	display     string
	desktop     string
	graphics    string
	theme       string
	recordModel string
	replayModel string
	listen      string
	tokenFile   string
	// takeover is the VNC address of an operator's takeover;
	// takeoverPausesDeadline stops the deadline while it lasts.
	takeover               string
	takeoverPausesDeadline bool
	// updateBaselines writes screenshot checks' baselines.
	updateBaselines bool
	// reapOrphans is set when kasmrt runs as its own process (not in
	// tests that call run in-process alongside other runs).
	reapOrphans bool
	// cache is --cache: the action cache's mode for this run.
	cache string
}

func newRunCommand() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run SCENARIO",
		Short: "Run a scenario and write its report",
		Long: `run launches the scenario's application in an X11 session (its own Xvfb,
unless --display or session.display names an existing display; $DISPLAY is
never used on its own), runs its steps or its goal, and writes the report
directory. The console shows the run live when stdout is a terminal; otherwise,
or with --headless, a line per event and the end state are printed, as replay
--print prints them (--json prints every event as JSON).

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
	fl.StringVar(&f.reportDir, "report", "", "report directory, new or empty (default: a fresh reports/<scenario>-<time>)")
	fl.BoolVar(&f.tui, "tui", false, "show the live console (default when stdout is a terminal)")
	fl.BoolVar(&f.headless, "headless", false, "print a line per event and the end state instead of the console")
	fl.BoolVar(&f.json, "json", false, "print every event as a JSON line (implies --headless)")
	fl.BoolVar(&f.overwrite, "overwrite", false, "replace the earlier report in an existing --report directory that kasmrt wrote (its manifest and only its files), instead of refusing it")
	fl.BoolVar(&f.strict, "strict", false, "exit 4 when the verdict is pass-with-concerns")
	fl.BoolVar(&f.updateBaselines, "update-baselines", false, "write the window of every screenshot check as its baseline (beside the scenario) instead of comparing it")
	fl.StringVar(&f.display, "display", "", `existing X display to use, e.g. :1 (default: an embedded Xvfb; "-" forces one)`)
	fl.StringVar(&f.desktop, "desktop", "", "the session's desktop: x11 or wayland (a headless sway of the run's own); overrides session.desktop")
	fl.StringVar(&f.graphics, "graphics", "auto", "console screenshots: auto, kitty, sixel, blocks or none")
	fl.StringVar(&f.theme, "theme", "", "console theme: auto (the default: light or dark as the terminal's background is), dark, light, high-contrast or a theme file")
	fl.StringVar(&f.recordModel, "record-model", "", "write every model exchange (redacted) to this file; a write failure stops the recording (a concern), never the run")
	fl.StringVar(&f.replayModel, "replay-model", "", "serve the model's turns from a recorded file instead of an endpoint")
	fl.StringVar(&f.listen, "listen", "", "serve this run's HTTP API (events, screens, questions, steering) at this address, for kasmrt attach")
	fl.StringVar(&f.cache, "cache", "", "the action cache beside the scenario (NAME.kasmrt-cache/): read-write, read-only or off (default: the operator file's cache:, else off)")
	fl.StringVar(&f.tokenFile, "token-file", "", "file holding --listen's bearer token (default: $"+envToken+")")
	fl.StringVar(&f.takeover, "takeover", "", "let the operator take the desktop over (T in the console, POST /v1/runs/{id}/takeover) through a VNC server on this loopback address, e.g. 127.0.0.1:5900 (port 0: any free port)")
	fl.BoolVar(&f.takeoverPausesDeadline, "takeover-pauses-deadline", false, "stop the run's deadline while the operator has the desktop (default: it keeps counting)")
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
	if _, err := cache.ParseMode(f.cache); err != nil {
		return badInput(fmt.Errorf("--cache: %w", err))
	}
	if f.display != "" && f.display != "-" {
		if err := scenarios.CheckDisplay(f.display); err != nil {
			return refuse(cmd, fmt.Errorf("--display: %w", err))
		}
	}
	if f.takeover != "" {
		addr, err := takeoverAddr(f.takeover)
		if err != nil {
			return refuse(cmd, err)
		}
		f.takeover = addr
	} else if f.takeoverPausesDeadline {
		return refuse(cmd, fmt.Errorf("--takeover-pauses-deadline needs --takeover"))
	}
	if f.replayModel != "" {
		if err := requireRegularFile("--replay-model", f.replayModel); err != nil {
			return refuse(cmd, err)
		}
	}
	if f.recordModel != "" {
		if err := refuseBlockingOutput("--record-model", f.recordModel); err != nil {
			return refuse(cmd, err)
		}
	}
	if _, builtin := themes.Builtin(f.theme); f.theme != "" && !builtin {
		if err := requireRegularFile("--theme", f.theme); err != nil {
			return refuse(cmd, err)
		}
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
	files, err := engine.Load(path, f.operator, lookup)
	if err != nil {
		printProblems(errOut(cmd), err)
		return &exitError{code: exitBadInput}
	}
	if err := applyDesktop(files, f.desktop, f.display); err != nil {
		return refuse(cmd, fmt.Errorf("--desktop: %w", err))
	}
	if f.takeover != "" && files.Operator.Desktop.Desktop == scenarios.DesktopWayland {
		// The takeover's VNC server (x11vnc) serves an X display: on
		// Wayland the flag would be taken and the first T would fail with
		// x11vnc's own words about cookie files.
		return refuse(cmd, errors.New("--takeover: the Wayland desktop cannot be taken over (its VNC server, x11vnc, serves an X display); take over a run on the X11 desktop (--desktop x11)"))
	}
	if (f.cache == "read-write" || f.cache == "read-only") && files.Scenario.Mode() != "goal" {
		// The cache stores and replays a goal run's model calls; a
		// scripted run has none, and the flag would be taken and do
		// nothing.
		return refuse(cmd, fmt.Errorf("--cache %s: a scripted scenario makes no model calls to cache (the action cache is for goal runs); leave the flag out", f.cache))
	}
	printWarnings(errOut(cmd), files)
	if f.updateBaselines && !files.Scenario.HasScreenshotCheck() {
		fmt.Fprintf(errOut(cmd), "warning: %s\n", engine.NoBaselineToUpdate)
	}
	var dir reportDir
	if f.reportDir == "" {
		dir, err = newDefaultReportDir(defaultReportsDir, files.Scenario.Name, time.Now())
	} else {
		dir, err = prepareReportDir(f.reportDir, f.overwrite, path, f.operator)
	}
	if err != nil {
		return refuse(cmd, err)
	}
	// A run refused before it began wrote nothing: it leaves no empty
	// directory behind either. (A directory with a report in it is not
	// empty, and stays.)
	defer dir.discard()
	opts := engine.Options{ReportDir: dir.path, Display: f.display, Version: version, UpdateBaselines: f.updateBaselines, Cache: f.cache,
		Takeover: f.takeover, TakeoverPausesDeadline: f.takeoverPausesDeadline}
	pub, err := bindPublication(cmd.Context(), f, files, dir.path)
	if err != nil {
		return refuse(cmd, err)
	}
	defer pub.close()
	pub.prepare(&opts)
	switch {
	case f.recordModel != "":
		red := engine.RedactorFor(files)
		rec, err := model.NewRecorder(f.recordModel, nil, red.Bytes)
		if err != nil {
			return badInput(fmt.Errorf("--record-model: %w", err))
		}
		defer func() {
			if err := rec.Close(); err != nil {
				fmt.Fprintf(errOut(cmd), "kasmrt: --record-model: %v\n", err)
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
		return runWithConsole(cmd, files, opts, f, cs, pub)
	}
	return runHeadless(cmd, files, opts, f, pub)
}

// runHeadless runs with progress lines or JSON events on stdout.
func runHeadless(cmd *cobra.Command, files *scenarios.Files, opts engine.Options, f runFlags, pub *publication) error {
	out := cmd.OutOrStdout()
	var printer *tui.Printer
	if f.json {
		opts.Sinks = append(opts.Sinks, jsonSink(out))
	} else {
		printer = tui.NewPrinter(out)
		opts.Sinks = append(opts.Sinks, printer.Event)
	}
	runner, err := engine.New(files, opts)
	if err != nil {
		return err
	}
	if err := runner.Listen(); err != nil {
		return refuse(cmd, err)
	}
	pub.start(errOut(cmd), runner, files.Scenario.File)
	res, err := runner.Run(cmd.Context())
	pub.close()
	if printer != nil && printer.Printed() > 0 {
		if perr := printer.Summary(nil); perr != nil {
			fmt.Fprintf(errOut(cmd), "kasmrt: %v\n", perr)
		}
	}
	if err != nil {
		fmt.Fprintf(errOut(cmd), "kasmrt: %v\n", runner.Redact(err.Error()))
		return &exitError{code: exitTestError}
	}
	return &exitError{code: res.ExitCode(f.strict)}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// jsonSink prints every event as one JSON line. The encoder escapes C0
// controls itself; the sanitizer escapes the C1 controls and bidi
// overrides it leaves raw, as \u escapes that keep each line the same JSON.
func jsonSink(w io.Writer) func(events.Event) {
	var mu sync.Mutex
	enc := json.NewEncoder(sanitize.NewWriter(w))
	return func(e events.Event) {
		mu.Lock()
		defer mu.Unlock()
		_ = enc.Encode(e)
	}
}

// refuse reports bad input that is not a file's problem (a flag, the
// inbox's address taken) as written, and exits 3: nothing was launched.
// applyDesktop puts --desktop over the operator file's session.desktop,
// refusing a desktop that does not fit the run: a Wayland session borrows
// no X display and runs no X window manager, and has no browser.
func applyDesktop(files *scenarios.Files, desktop, display string) error {
	s := &files.Operator.Desktop
	if desktop == "" {
		desktop = s.Desktop
	} else if err := scenarios.CheckDesktop(desktop, files.Scenario); err != nil {
		return err
	}
	if desktop != scenarios.DesktopWayland {
		s.Desktop = desktop
		return nil
	}
	switch {
	case display != "" && display != "-":
		return errors.New("a Wayland session is always the run's own compositor; --display borrows an X display")
	case s.Display != "" && display != "-":
		return errors.New("a Wayland session is always the run's own compositor; the operator file's session.display borrows an X display")
	case s.WindowManager != "":
		return errors.New("a Wayland session's compositor (sway) manages its windows; the operator file's session.window_manager is for the X11 session")
	}
	s.Desktop = desktop
	return nil
}

func refuse(cmd *cobra.Command, err error) error {
	fmt.Fprintf(errOut(cmd), "error: %v; nothing was launched\n", err)
	return &exitError{code: exitBadInput}
}

// printWarnings prints what the files allow but should not go unnoticed.
func printWarnings(w io.Writer, files *scenarios.Files) {
	for _, p := range append(slices.Clip(files.Scenario.Warnings), files.Operator.Warnings...) {
		fmt.Fprintf(w, "warning: %s\n", p.Error())
	}
}

// errOut is the command's standard error through the sanitizer: error
// messages quote scenario text, server replies and application output,
// none of which may act on the terminal.
func errOut(cmd *cobra.Command) io.Writer { return sanitize.NewWriter(cmd.ErrOrStderr()) }
