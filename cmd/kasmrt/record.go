package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/spf13/cobra"

	"github.com/kasmrt/kasmrt/engine"
	"github.com/kasmrt/kasmrt/engine/baseline"
	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/scenarios"
	"github.com/kasmrt/kasmrt/themes"
	"github.com/kasmrt/kasmrt/tui"
	"github.com/kasmrt/kasmrt/tui/sanitize"
)

// recordDeadlineS is the least time a recording session is given.
const recordDeadlineS = 3600

type recordFlags struct {
	operator     string
	out          string
	overwrite    bool
	reportDir    string
	replayReport string
	display      string
	graphics     string
	theme        string
}

func newRecordCommand() *cobra.Command {
	var f recordFlags
	cmd := &cobra.Command{
		Use:   "record SCENARIO --out NEW.yaml",
		Short: "Record a scripted scenario by demonstration in the console",
		Long: `record launches SCENARIO's application (its app, browser, provides, targets
and declared tools; it needs neither a goal nor steps, and any it has are
left out) in its session and opens the console in recording mode.

Pick each call from what the run offers — named controls, click targets,
cdp targets, values to type by ref, a key chord, declared tools, a window to
switch to — from a list you filter by typing; enter runs it as a scripted
step, through the same guards. After each step the console proposes checks
(the window title, a control's state, the text OCR reads near the pointer,
a page element's text): a digit accepts one as the step's expect:, enter
keeps the step. A window or a control can be named on the spot; the name
is a {class, title} or an accessible name, never pixels.

"finish" writes NEW.yaml (a comment above each step says what it saw;
secrets stay references), validates it and replays it once headless.

Exit codes: the replay's, as run's (0 pass, 1 app-failed, 2 test-error);
2 when the recording was abandoned or nothing was recorded; 3 bad input
(nothing was launched), or a written scenario that does not validate.`,
		Example: `  kasmrt record scenarios/examples/mousepad-save-as.yaml --out mousepad-typed.yaml`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return recordScenario(cmd, args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.out, "out", "", "the scenario to write (required); an existing file is refused unless --overwrite")
	fl.BoolVar(&f.overwrite, "overwrite", false, "replace an existing --out file")
	fl.StringVarP(&f.operator, "operator", "o", "", "operator file (budgets, session), for the recording and the replay")
	fl.StringVar(&f.reportDir, "report", "", "the recording session's report directory, new or empty (default: a fresh reports/<scenario>-record-<time>)")
	fl.StringVar(&f.replayReport, "replay-report", "", "the replay's report directory, new or empty (default: a fresh reports/<scenario>-<time>)")
	fl.StringVar(&f.display, "display", "", `existing X display to use, e.g. :1 (default: an embedded Xvfb; "-" forces one)`)
	fl.StringVar(&f.graphics, "graphics", "auto", "console screenshots: auto, kitty, sixel, blocks or none")
	fl.StringVar(&f.theme, "theme", "", "console theme: auto (the default), dark, light, high-contrast or a theme file")
	return cmd
}

func recordScenario(cmd *cobra.Command, path string, f recordFlags) error {
	if f.out == "" {
		return refuse(cmd, errors.New("--out: name the scenario to write"))
	}
	if err := refuseBlockingOutput("--out", f.out); err != nil {
		return refuse(cmd, err)
	}
	if _, err := os.Stat(f.out); err == nil && !f.overwrite {
		return refuse(cmd, fmt.Errorf("--out %s exists; pass --overwrite to replace it", f.out))
	}
	if dir := filepath.Dir(f.out); dir != "" {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return refuse(cmd, fmt.Errorf("--out %s: its directory %s does not exist", f.out, dir))
		}
	}
	if f.display != "" && f.display != "-" {
		if err := scenarios.CheckDisplay(f.display); err != nil {
			return refuse(cmd, fmt.Errorf("--display: %w", err))
		}
	}
	if _, builtin := themes.Builtin(f.theme); f.theme != "" && !builtin {
		if err := requireRegularFile("--theme", f.theme); err != nil {
			return refuse(cmd, err)
		}
	}
	cs, err := loadConsoleSettings(runFlags{graphics: f.graphics, theme: f.theme})
	if err != nil {
		return err
	}
	files, err := engine.LoadRecording(path, f.operator, os.LookupEnv)
	if err != nil {
		printProblems(errOut(cmd), err)
		return &exitError{code: exitBadInput}
	}
	printWarnings(errOut(cmd), files)
	// A person demonstrates at a person's pace: the recording session
	// gets an hour unless the operator file allows more.
	files.Operator.DeadlineS = max(files.Operator.DeadlineS, recordDeadlineS)
	source, err := os.ReadFile(path)
	if err != nil {
		return refuse(cmd, fmt.Errorf("read %s: %w", path, unwrapPath(err)))
	}
	if !isTerminal(cmd.OutOrStdout()) {
		return refuse(cmd, errors.New("record needs a terminal: the console is where the steps are picked"))
	}
	dir, err := recordReportDir(f.reportDir, files.Scenario.Name+"-record", path, f.operator)
	if err != nil {
		return refuse(cmd, err)
	}
	defer dir.discard()

	rec, ok, err := recordInConsole(cmd, files, engine.Options{ReportDir: dir.path, Display: f.display, Version: version}, cs)
	if err != nil {
		return err
	}
	w := sanitize.NewWriter(cmd.OutOrStdout())
	if !ok {
		fmt.Fprintf(w, "recording abandoned: nothing written\n")
		return &exitError{code: exitTestError}
	}
	if len(rec.Steps) == 0 {
		fmt.Fprintf(w, "nothing was recorded: nothing written\n")
		return &exitError{code: exitTestError}
	}
	data, err := scenarios.Recording{
		Source:       source,
		Header:       fmt.Sprintf("Recorded with kasmrt record from %s on %s.", filepath.Base(path), time.Now().UTC().Format(time.DateOnly)),
		Windows:      rec.Windows,
		ClickTargets: rec.ClickTargets,
		Steps:        rec.Steps,
	}.Write()
	if err != nil {
		fmt.Fprintf(errOut(cmd), "kasmrt: %v\n", err)
		return &exitError{code: exitTestError}
	}
	if err := writeNew(f.out, data, f.overwrite); err != nil {
		fmt.Fprintf(errOut(cmd), "kasmrt: %v\n", err)
		return &exitError{code: exitTestError}
	}
	fmt.Fprintf(w, "wrote %s: %d step(s)\n", f.out, len(rec.Steps))
	n, err := writeBaselines(f.out, rec.Steps)
	if err != nil {
		fmt.Fprintf(errOut(cmd), "kasmrt: %v\n", err)
		return &exitError{code: exitTestError}
	}
	if n > 0 {
		fmt.Fprintf(w, "wrote %d baseline(s) in %s\n", n, scenarios.BaselineDir(f.out))
	}
	replayFiles, err := engine.Load(f.out, f.operator, os.LookupEnv)
	if err != nil {
		fmt.Fprintf(errOut(cmd), "the written scenario does not validate:\n")
		printProblems(errOut(cmd), err)
		return &exitError{code: exitBadInput}
	}
	fmt.Fprintf(w, "replaying %s headless…\n", f.out)
	rdir, err := recordReportDir(f.replayReport, replayFiles.Scenario.Name, f.out, f.operator)
	if err != nil {
		return refuse(cmd, err)
	}
	defer rdir.discard()
	return replayRecorded(cmd, replayFiles, engine.Options{ReportDir: rdir.path, Display: f.display, Version: version})
}

// recordReportDir is --report (or --replay-report) made ready, or a fresh
// default directory.
func recordReportDir(flag, name string, inputs ...string) (reportDir, error) {
	if flag == "" {
		return newDefaultReportDir(defaultReportsDir, name, time.Now())
	}
	return prepareReportDir(flag, false, inputs...)
}

// writeNew writes the recorded scenario; without overwrite the file is
// created exclusively, so one made since the check is not replaced.
func writeNew(path string, data []byte, overwrite bool) error {
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if overwrite {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	fh, err := os.OpenFile(path, flags, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("--out %s appeared during the recording; pass --overwrite to replace it", path)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, unwrapPath(err))
	}
	if _, err := fh.Write(data); err != nil {
		fh.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := fh.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// writeBaselines writes the baseline of every recorded screenshot check
// beside the scenario written at out, where the replay's check reads it.
// The images are the window as the check captures it, secrets blacked
// out already. It returns how many it wrote.
func writeBaselines(out string, steps []scenarios.RecordedStep) (int, error) {
	n := 0
	for _, st := range steps {
		if st.Expect == nil || st.Expect.Screenshot == nil || st.Baseline == nil {
			continue
		}
		file := filepath.Join(scenarios.BaselineDir(out), st.Expect.Screenshot.Name+".png")
		if err := baseline.Write(file, st.Baseline); err != nil {
			return n, fmt.Errorf("write the baseline of %s: %w", st.Expect.Screenshot.Name, err)
		}
		n++
	}
	return n, nil
}

// recordInConsole opens the scenario as a session and runs the recording
// console on it until the operator finishes or abandons it; the session
// is then closed and its report written.
func recordInConsole(cmd *cobra.Command, files *scenarios.Files, opts engine.Options, cs consoleSettings) (tui.Recorded, bool, error) {
	var (
		mu   sync.Mutex
		sink func(events.Event)
	)
	opts.Sinks = append(opts.Sinks, func(e events.Event) {
		mu.Lock()
		s := sink
		mu.Unlock()
		if s != nil {
			s(e)
		}
	})
	runner, err := engine.New(files, opts)
	if err != nil {
		return tui.Recorded{}, false, err
	}
	fmt.Fprintf(errOut(cmd), "launching %s for recording…\n", files.Scenario.Name)
	sess, err := runner.Open(cmd.Context())
	if err != nil {
		var ns *engine.NotStartedError
		if errors.As(err, &ns) {
			return tui.Recorded{}, false, refuse(cmd, err)
		}
		fmt.Fprintf(errOut(cmd), "kasmrt: %v\n", runner.Redact(err.Error()))
		return tui.Recorded{}, false, &exitError{code: exitTestError}
	}
	model, live := tui.NewRecord(tui.Options{
		Dir:      opts.ReportDir,
		Theme:    cs.theme,
		Graphics: cs.mode,
		Env:      os.Getenv,
		Profile:  colorprofile.Detect(os.Stdout, os.Environ()),
	}, sess)
	mu.Lock()
	sink = live
	mu.Unlock()
	p := tea.NewProgram(model, tea.WithContext(cmd.Context()), tea.WithInput(cmd.InOrStdin()), tea.WithOutput(cmd.OutOrStdout()))
	_, perr := p.Run()
	res, cerr := sess.Close(cmd.Context(), "", "")
	if perr != nil {
		fmt.Fprintf(errOut(cmd), "kasmrt: console: %v\n", perr)
	}
	if cerr != nil {
		fmt.Fprintf(errOut(cmd), "kasmrt: close the recording session: %v\n", runner.Redact(cerr.Error()))
	} else {
		fmt.Fprintf(sanitize.NewWriter(cmd.OutOrStdout()), "recording session report: %s\n", res.ReportDir)
	}
	out := model.Result()
	return out, out.Finished && perr == nil && cmd.Context().Err() == nil, nil
}

// replayRecorded runs the written scenario once, headless, and exits with
// its verdict's code.
func replayRecorded(cmd *cobra.Command, files *scenarios.Files, opts engine.Options) error {
	printer := tui.NewPrinter(cmd.OutOrStdout())
	opts.Sinks = append(opts.Sinks, printer.Event)
	runner, err := engine.New(files, opts)
	if err != nil {
		return err
	}
	res, err := runner.Run(cmd.Context())
	if printer.Printed() > 0 {
		if perr := printer.Summary(nil); perr != nil {
			fmt.Fprintf(errOut(cmd), "kasmrt: %v\n", perr)
		}
	}
	if err != nil {
		fmt.Fprintf(errOut(cmd), "kasmrt: %v\n", runner.Redact(err.Error()))
		return &exitError{code: exitTestError}
	}
	verdict := "passed"
	if res.ExitCode(false) != exitPass {
		verdict = "did not pass"
	}
	fmt.Fprintf(sanitize.NewWriter(cmd.OutOrStdout()), "replay %s: %s (%s)\nreport: %s\n", verdict, res.Verdict, res.Outcome, res.ReportDir)
	return &exitError{code: res.ExitCode(false)}
}
