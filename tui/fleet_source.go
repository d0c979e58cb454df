package tui

import (
	"context"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/inbox"
)

// RunState is where a run of a fleet is in its life, as the table shows it.
type RunState string

// The states of a fleet's run.
const (
	RunQueued  RunState = "queued"
	RunRunning RunState = "running"
	RunEnded   RunState = "ended"
	// RunNotRun is a run that will never start (the suite was stopped).
	RunNotRun RunState = "not-run"
)

// FleetRun describes one run of a fleet: a suite's planned run, or a run
// or session a server holds. The source sends it when the run appears and
// again whenever its state changes; the events say the rest.
type FleetRun struct {
	// ID names the run within its source, stably (a suite's run key).
	ID       string
	Scenario string
	Sample   int
	// Mode is "scripted", "goal" or a server's "session"; it may stay
	// empty until the run's run.started event says it.
	Mode  string
	State RunState
	// Dir is the run's report directory, where its screens are read from
	// ("" when the source has none on this machine).
	Dir string
	// Verdict, DurationMS and Tokens describe a run that ended without
	// sending its events (a suite's resumed run, a run ended before the
	// console attached); events, when they come, take precedence.
	Verdict    events.Verdict
	DurationMS int64
	Tokens     float64
}

// FleetSink receives a source's runs and their events. Its methods never
// block, and are safe to call from any goroutine.
type FleetSink interface {
	// Run adds a run or updates its description.
	Run(r FleetRun)
	// Event delivers one event of the run with that ID, in the run's
	// order. Events of a run the sink has not been told about are dropped.
	Event(runID string, e events.Event)
}

// FleetSource is what the fleet console shows and steers: the runs of a
// suite in this process, or of a server it attached to.
type FleetSource interface {
	// Watch delivers every run and every event to sink until ctx ends or
	// the source has nothing more to send. The console calls it once, from
	// a goroutine of its own.
	Watch(ctx context.Context, sink FleetSink) error
	// AnswerMarked answers the pending question with id questionID of a
	// run, with the operator's mark, as Controls.AnswerMarked does.
	AnswerMarked(runID, questionID, text string, mark inbox.Mark) error
	// Steer performs an operator action on a run, as Controls.Steer does.
	Steer(runID string, s events.Steer) error
}

// runControls is one run's Controls over its fleet's source, so the panes
// of a watched run steer that run.
type runControls struct {
	src FleetSource
	id  string
}

func (c runControls) AnswerMarked(questionID, text string, mark inbox.Mark) error {
	return c.src.AnswerMarked(c.id, questionID, text, mark)
}

func (c runControls) Steer(s events.Steer) error { return c.src.Steer(c.id, s) }
