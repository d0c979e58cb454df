package main

import (
	"context"
	"fmt"
	"os"
	"sync"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/spf13/cobra"

	"github.com/kasmrt/kasmrt/engine"
	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/scenarios"
	"github.com/kasmrt/kasmrt/themes"
	"github.com/kasmrt/kasmrt/tui"
	"github.com/kasmrt/kasmrt/tui/graphics"
	"github.com/kasmrt/kasmrt/tui/sanitize"
)

// consoleSettings are the console flags, checked before anything launches.
type consoleSettings struct {
	mode  graphics.Mode
	theme themes.Theme
}

func loadConsoleSettings(f runFlags) (consoleSettings, error) {
	mode, err := graphics.ParseMode(f.graphics)
	if err != nil {
		return consoleSettings{}, badInput(fmt.Errorf("--graphics: %w", err))
	}
	name, file := "", f.theme
	if _, ok := themes.Builtin(f.theme); ok {
		name, file = f.theme, ""
	}
	theme, err := themes.Load(name, file, os.Getenv)
	if err != nil {
		return consoleSettings{}, badInput(fmt.Errorf("--theme: %w", err))
	}
	return consoleSettings{mode: mode, theme: theme}, nil
}

// runWithConsole runs the scenario with the live console in the
// foreground. The engine's events reach the program through the console's
// sink, which never blocks the run; quitting the console during a run
// aborts it, and the report is still written.
func runWithConsole(cmd *cobra.Command, files *scenarios.Files, opts engine.Options, f runFlags, cs consoleSettings, pub *publication) error {
	var (
		mu   sync.Mutex
		sink func(events.Event)
	)
	opts.Interactive = true
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
		return err
	}
	if err := runner.Listen(); err != nil {
		return refuse(cmd, err)
	}
	pub.start(errOut(cmd), runner, files.Scenario.File)
	model, live := tui.NewLive(tui.Options{
		Dir:      opts.ReportDir,
		Controls: consoleControls{runner},
		Theme:    cs.theme,
		Graphics: cs.mode,
		Env:      os.Getenv,
		Profile:  colorprofile.Detect(os.Stdout, os.Environ()),
	})
	mu.Lock()
	sink = live
	mu.Unlock()

	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	type outcome struct {
		res engine.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := runner.Run(ctx)
		done <- outcome{res, err}
	}()
	p := tea.NewProgram(model, tea.WithContext(cmd.Context()), tea.WithInput(cmd.InOrStdin()), tea.WithOutput(cmd.OutOrStdout()))
	_, perr := p.Run()
	// The operator left the console: a run still going is aborted, and
	// its report completes. A signal (the terminal closed) has already
	// interrupted the run, and is named as the reason instead.
	if cmd.Context().Err() == nil {
		_ = runner.Steer(events.Steer{Action: events.SteerAbort, Reason: "the console was closed"})
	}
	out := <-done
	pub.close()
	if perr != nil {
		fmt.Fprintf(errOut(cmd), "kasmrt: console: %v\n", perr)
	}
	if out.err != nil {
		fmt.Fprintf(errOut(cmd), "kasmrt: %v\n", runner.Redact(out.err.Error()))
		return &exitError{code: exitTestError}
	}
	fmt.Fprintf(sanitize.NewWriter(cmd.OutOrStdout()), "verdict: %s (%s)\nreport: %s\n", out.res.Verdict, out.res.Outcome, out.res.ReportDir)
	return &exitError{code: out.res.ExitCode(f.strict)}
}
