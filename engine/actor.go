package engine

import (
	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/report"
	"github.com/kasmrt/kasmrt/scenarios"
)

// actor is the run's hands and eyes on the application: the built-in
// tools' actions, the settling and capture of the screen after them, the
// screens kept for the report and the model, and the failures of the
// drivers underneath. It holds the parts of the run those write: the
// guard book's observation record (the last screen), the verdict's facts
// (a lost session stops the run) and the report.
type actor struct {
	env     *environment
	book    *guardBook
	outcome *verdictFacts
	// model and loop say whether a goal loop sends its model screens, and
	// at what size.
	model *modelState
	loop  *loopStats
	rep   *report.Writer
	bus   *events.Bus
	files *scenarios.Files
	r     *Runner
}

func (a *actor) publish(e events.Event) events.Event { return a.bus.Publish(e) }

func (a *actor) log(format string, args ...any) { logTo(a.bus, format, args...) }

// concern raises a concern once, however often it is raised.
func (a *actor) concern(msg string) { raiseConcern(a.bus, a.outcome, msg) }
