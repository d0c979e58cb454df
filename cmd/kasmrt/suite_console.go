package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/spf13/cobra"

	"github.com/kasmrt/kasmrt/engine"
	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/inbox"
	"github.com/kasmrt/kasmrt/suite"
	"github.com/kasmrt/kasmrt/tui"
)

// suiteSource is a suite in this process as the fleet console's source:
// every planned run, each run's events, and its runner to answer and
// steer it. What happens before the console watches is kept and replayed
// to it, so it misses nothing.
type suiteSource struct {
	mu      sync.Mutex
	sink    tui.FleetSink
	backlog []func(tui.FleetSink)
	runners map[string]*engine.Runner
	done    chan struct{}
}

func newSuiteSource(plan *suite.Plan, out string) *suiteSource {
	s := &suiteSource{runners: map[string]*engine.Runner{}, done: make(chan struct{})}
	for _, p := range plan.Runs {
		s.send(func(k tui.FleetSink) { k.Run(plannedRun(p, out, tui.RunQueued)) })
	}
	return s
}

func plannedRun(p suite.Planned, out string, state tui.RunState) tui.FleetRun {
	mode := "scripted"
	if p.Files.Scenario.Goal != "" {
		mode = "goal"
	}
	return tui.FleetRun{ID: p.Key, Scenario: p.Scenario, Sample: p.Sample, Mode: mode, State: state, Dir: filepath.Join(out, p.Dir)}
}

// send delivers to the console, or keeps it until the console watches.
func (s *suiteSource) send(fn func(tui.FleetSink)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sink == nil {
		s.backlog = append(s.backlog, fn)
		return
	}
	fn(s.sink)
}

func (s *suiteSource) Watch(ctx context.Context, sink tui.FleetSink) error {
	s.mu.Lock()
	s.sink = sink
	for _, fn := range s.backlog {
		fn(sink)
	}
	s.backlog = nil
	s.mu.Unlock()
	select {
	case <-ctx.Done():
	case <-s.done:
	}
	return nil
}

func (s *suiteSource) runner(id string) (*engine.Runner, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.runners[id]
	if r == nil {
		return nil, fmt.Errorf("run %s has not started", id)
	}
	return r, nil
}

func (s *suiteSource) AnswerMarked(runID, questionID, text string, mark inbox.Mark) error {
	r, err := s.runner(runID)
	if err != nil {
		return err
	}
	return r.AnswerMarked(questionID, text, mark)
}

func (s *suiteSource) Steer(runID string, st events.Steer) error {
	r, err := s.runner(runID)
	if err != nil {
		return err
	}
	return r.Steer(st)
}

// hook sets the suite's options so every run reaches the source.
func (s *suiteSource) hook(opts *suite.Options, plan *suite.Plan, out string, onEnd func(suite.RunResult)) {
	planned := map[string]suite.Planned{}
	for _, p := range plan.Runs {
		planned[p.Key] = p
	}
	opts.Interactive = true
	opts.RunSinks = func(p suite.Planned) []func(events.Event) {
		return []func(events.Event){func(e events.Event) { s.send(func(k tui.FleetSink) { k.Event(p.Key, e) }) }}
	}
	opts.OnRunner = func(p suite.Planned, r *engine.Runner) {
		s.mu.Lock()
		s.runners[p.Key] = r
		s.mu.Unlock()
	}
	opts.OnStart = func(p suite.Planned) {
		s.send(func(k tui.FleetSink) { k.Run(plannedRun(p, out, tui.RunRunning)) })
	}
	opts.OnEnd = func(r suite.RunResult) {
		onEnd(r)
		p := planned[r.Key]
		state := tui.RunEnded
		if r.Verdict == suite.VerdictNotRun {
			state = tui.RunNotRun
		}
		d := plannedRun(p, out, state)
		d.Verdict, d.DurationMS, d.Tokens = r.Verdict, r.DurationMS, r.Tokens
		s.send(func(k tui.FleetSink) { k.Run(d) })
	}
}

// runSuiteConsole runs a prepared suite with the fleet console in the
// foreground. Quitting the console stops the suite: the running runs end
// with complete reports, the rest are not run. The summary is printed
// once the console is gone.
func runSuiteConsole(cmd *cobra.Command, plan *suite.Plan, opts suite.Options, cs consoleSettings) (*suite.Summary, error) {
	src := newSuiteSource(plan, opts.Out)
	src.hook(&opts, plan, opts.Out, func(suite.RunResult) {})
	ready, err := suite.Prepare(cmd.Context(), plan, opts)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	type outcome struct {
		sum *suite.Summary
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		sum, err := ready.Run(ctx)
		close(src.done)
		done <- outcome{sum, err}
	}()
	fleet := tui.NewFleet(ctx, tui.FleetOptions{Source: src, Title: plan.Name, Run: tui.Options{
		Theme: cs.theme, Graphics: cs.mode, Env: os.Getenv, Profile: colorprofile.Detect(os.Stdout, os.Environ()),
	}})
	p := tea.NewProgram(fleet, tea.WithContext(cmd.Context()), tea.WithInput(cmd.InOrStdin()), tea.WithOutput(cmd.OutOrStdout()))
	_, perr := p.Run()
	cancel()
	out := <-done
	if perr != nil {
		fmt.Fprintf(errOut(cmd), "kasmrt: console: %v\n", perr)
	}
	return out.sum, out.err
}
