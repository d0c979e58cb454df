package engine

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
	mt "github.com/kasmrt/kasmrt/engine/model/modeltest"
)

// TestRulesControlsCacheRefused checks that an application whose controls
// cannot be cached (the registry refused the events) is still offered its
// controls, and that the run's log says why every read walks.
func TestRulesControlsCacheRefused(t *testing.T) {
	t.Parallel()
	f := fakeDialog()
	f.noCache = errors.New("register for object:children-changed events: access denied")
	r := loopRun(t, loopCase{scenario: rulesGoal, machine: f,
		script: []mt.Exchange{mt.Call("click_element", `{"name": "OK"}`), loopGoalMet}})
	loopWant(t, r, loopUnverified, OutcomeCompleted, 2, 0)
	if !slices.ContainsFunc(r.events, func(e events.Event) bool {
		return e.Kind == events.KindLog && strings.HasPrefix(e.Message, "read the controls of fake without a cache") &&
			strings.HasSuffix(e.Message, ": register for object:children-changed events: access denied")
	}) {
		t.Error("no log line says why the controls are read without a cache")
	}
}
