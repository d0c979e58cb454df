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
	"github.com/kasmrt/kasmrt/tui"
	"github.com/kasmrt/kasmrt/tui/sanitize"
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
3 bad input (nothing was launched).`,
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
	fl.StringVar(&f.recordModel, "record-model", "", "write every model exchange (redacted) to this file")
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
		printProblems(errOut(cmd), err)
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
	useTUI := f.tui || (!f.headless && !f.json && isTerminal(cmd.OutOrStdout()))
	if useTUI {
		return runWithConsole(cmd, files, opts, f, cs)
	}
	return runHeadless(cmd, files, opts, f)
}

// runHeadless runs with progress lines or JSON events on stdout.
func runHeadless(cmd *cobra.Command, files *scenarios.Files, opts engine.Options, f runFlags) error {
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
	res, err := runner.Run(cmd.Context())
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

// errOut is the command's standard error through the sanitizer: error
// messages quote scenario text, server replies and application output,
// none of which may act on the terminal.
func errOut(cmd *cobra.Command) io.Writer { return sanitize.NewWriter(cmd.ErrOrStderr()) }
