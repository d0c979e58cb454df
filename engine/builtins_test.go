package engine

import (
	"slices"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/scenarios"
)

// TestBuiltinToolsCoverTheCatalogue ties the table of implementations to
// the catalogue both ways: every built-in tool a run can offer has an
// implementation, and nothing is implemented that no run can offer.
func TestBuiltinToolsCoverTheCatalogue(t *testing.T) {
	t.Parallel()
	catalog := scenarios.Catalog(&scenarios.Scenario{}, &scenarios.Operator{})
	impls := builtinTools()
	for _, name := range sortedKeys(catalog) {
		if _, found := impls[name]; !found {
			t.Errorf("catalogue tool %s has no implementation in builtinTools", name)
		}
	}
	for _, name := range sortedKeys(impls) {
		if _, found := catalog[name]; !found {
			t.Errorf("builtinTools implements %s, which is not in the catalogue", name)
		}
	}
	if len(impls) == 0 || !slices.Contains(sortedKeys(impls), "observe_screen") {
		t.Fatalf("builtinTools() = %v", sortedKeys(impls))
	}
}

// TestUnimplementedToolIsARuntimeFault checks the one way a call can reach
// no implementation, a catalogue tool missing from the table: the run ends
// as a runtime fault, not as the model's or the app's failure.
func TestUnimplementedToolIsARuntimeFault(t *testing.T) {
	t.Parallel()
	s := &runState{book: guardBook{tools: map[string]scenarios.ToolSpec{"levitate": {Name: "levitate"}}}}
	res := s.run(t.Context(), 1, call{Tool: "levitate", Source: events.SourceModel})
	if res.fail != failResolution || res.message != "internal error: no implementation of levitate" {
		t.Errorf("result = %+v", res)
	}
	if s.outcome.end == nil || s.outcome.end.outcome != OutcomeRuntimeFault {
		t.Errorf("end = %+v, want a runtime fault", s.outcome.end)
	}
}
