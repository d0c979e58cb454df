package engine

import (
	"context"
	"testing"

	"github.com/kasmrt/kasmrt/engine/capacity"
	"github.com/kasmrt/kasmrt/engine/events"
	mt "github.com/kasmrt/kasmrt/engine/model/modeltest"
)

// TestRulesSharedGates checks that a run given capacity groups (a suite's
// workers share theirs) waits on those, not on groups of its own: with
// the model's one slot held elsewhere, the model call waits until it is
// given back, and says so.
func TestRulesSharedGates(t *testing.T) {
	t.Parallel()
	gates, err := capacity.New(map[string]int{"model": 1})
	if err != nil {
		t.Fatal(err)
	}
	release, err := gates.Acquire(context.Background(), "model", capacity.Waiter{})
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	r := loopRun(t, loopCase{machine: &fakeMachine{}, gates: gates, script: []mt.Exchange{loopGoalMet},
		sink: func(_ *Runner, e events.Event) {
			if _, waits := e.Data.(events.CapacityWait); waits {
				release()
			}
		}})
	loopWant(t, r, loopUnverified, OutcomeCompleted, 1, 0)
	waited := false
	for _, e := range r.events {
		if d, ok := e.Data.(events.CapacityAcquired); ok && d.Group == "model" {
			waited = true
		}
	}
	if !waited {
		t.Error("the model call did not wait for the shared group's slot")
	}
}
