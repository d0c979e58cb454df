package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/themes"
)

// TestBudgetsShowTokensAndTheRunsReserve: the budgets pane counts tokens
// from the model's replies and shows the reserve the run announced (a
// short deadline keeps a shorter one).
func TestBudgetsShowTokensAndTheRunsReserve(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)
	evs := []events.Event{
		{Seq: 1, T: t0, Kind: events.KindRunStarted, Data: map[string]any{"scenario": "s", "deadline_s": 45.0, "reserve_s": 15.0}},
		{Seq: 2, T: t0.Add(time.Second), Kind: events.KindModelReply, Usage: map[string]float64{"prompt_tokens": 1200, "completion_tokens": 34, "total_tokens": 1234}},
		{Seq: 3, T: t0.Add(2 * time.Second), Kind: events.KindModelReply, Usage: map[string]float64{"prompt_tokens": 1300, "completion_tokens": 20}},
	}
	st := FoldState(evs)
	got := budgetsView(themes.NoColorStyles(), st, 60)
	for _, want := range []string{"tokens 1234", "(2 model calls)", "0:15 reserve"} {
		if !strings.Contains(got, want) {
			t.Errorf("budgets pane lacks %q:\n%s", want, got)
		}
	}
}
