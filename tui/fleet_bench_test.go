package tui

import (
	"fmt"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/tui/graphics"
)

// BenchmarkFleetEvent is the cost of one event of one run in a suite of
// 200: the run's panes fold it and the screen is rendered, as the program
// does for every batch; every tenth event the refresh tick recomputes the
// table (filter, sort, cells), as at 100 events a second.
func BenchmarkFleetEvent(b *testing.B) {
	f := NewFleet(b.Context(), FleetOptions{Source: newFakeFleet(), Title: "bench", Run: Options{
		Graphics: graphics.None, Env: func(string) string { return "" }, Now: func() time.Time { return fleetAt(100) },
	}})
	for i := range 200 {
		f.intake.Run(FleetRun{ID: fmt.Sprintf("s%03d.yaml#0", i), Scenario: fmt.Sprintf("scenario %03d", i), State: RunRunning})
	}
	f.Update(f.intake.listen()())
	for _, fr := range f.runs {
		f.Update(fleetRunMsg{run: fr, msg: eventsMsg{{Seq: 1, T: fleetAt(0), Kind: events.KindRunStarted, Data: events.RunStarted{Scenario: fr.desc.Scenario, Mode: "goal", DeadlineS: 600}}}})
	}
	f.Update(tea.WindowSizeMsg{Width: 160, Height: 50})
	f.Update(keyPress("s")) // sorted by sample: every refresh sorts
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		fr := f.runs[i%len(f.runs)]
		step := i/len(f.runs) + 1
		f.Update(fleetRunMsg{run: fr, msg: eventsMsg{{Seq: int64(step + 1), T: fleetAt(float64(step)), Kind: events.KindStepStarted, Step: step, Tool: "observe_screen", Source: events.SourceModel}}})
		if i%10 == 9 {
			f.Update(fleetRefreshMsg{})
		}
		_ = f.View()
	}
}
