package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

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
		{Seq: 1, T: t0, Kind: events.KindRunStarted, Data: events.RunStarted{Scenario: "s", DeadlineS: 45, ReserveS: 15}},
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

// TestLiveQueueKeepsEveryModelReply: screens and gauges are lossy, but
// model replies are summed into the token count, so a burst of them all
// reaches the console.
func TestLiveQueueKeepsEveryModelReply(t *testing.T) {
	t.Parallel()
	m, sink := NewLive(Options{})
	for i := 0; i < 3; i++ {
		sink(events.Event{Seq: int64(2 * i), Kind: events.KindModelReply, Usage: map[string]float64{"total_tokens": 100}})
		sink(events.Event{Seq: int64(2*i + 1), Kind: events.KindBudget, Budgets: []events.Budget{{Name: "iterations", Used: float64(i + 1), Limit: 5}}})
	}
	m.Update(m.queue.listen()())
	if got := m.st.Usage["total_tokens"]; got != 300 {
		t.Errorf("tokens = %v, want 300 from three replies", got)
	}
	if len(m.st.Budgets) != 1 || m.st.Budgets[0].Used != 3 {
		t.Errorf("budgets = %+v, want the newest", m.st.Budgets)
	}
}

// TestBudgetsSayWhyNoClickElement: the budgets pane shows why the run
// offers no click_element, keeps it when a later tools event (a browser
// tab) says nothing about it, and drops it once controls are offered.
func TestBudgetsSayWhyNoClickElement(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 12, 1, 1, 0, 0, 0, time.UTC)
	why := "the application did not connect to the accessibility bus within 2s"
	missing := events.Event{Seq: 2, T: t0, Kind: events.KindTools, Message: "click_element is not offered: " + why,
		Data: events.ToolList{Tools: []string{"click", "observe_screen"}, NoClickElement: why}}
	browser := events.Event{Seq: 3, T: t0, Kind: events.KindTools, Message: "a browser tab is attached over CDP",
		Data: events.ToolList{Tools: []string{"cdp_url", "click"}, CDPTab: true}}
	offered := events.Event{Seq: 3, T: t0, Kind: events.KindTools, Message: "zenity (gtk 3.24) published 2 named controls",
		Data: events.ToolList{Tools: []string{"click_element"}, ATSPIControls: 2}}
	start := events.Event{Seq: 1, T: t0, Kind: events.KindRunStarted, Data: events.RunStarted{Scenario: "s", DeadlineS: 60}}
	tests := []struct {
		name   string
		evs    []events.Event
		shown  bool
		reason string
	}{
		{"missing", []events.Event{start, missing}, true, "not connect to the accessibility bus"},
		{"kept after a browser tab", []events.Event{start, missing, browser}, true, "no click_element:"},
		{"offered", []events.Event{start, offered}, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := budgetsView(themes.NoColorStyles(), FoldState(tt.evs), 40)
			if has := strings.Contains(got, "no click_element"); has != tt.shown || !strings.Contains(got, tt.reason) {
				t.Errorf("budgets pane (want the reason shown: %v, %q):\n%s", tt.shown, tt.reason, got)
			}
			for _, line := range strings.Split(got, "\n") {
				if ansi.StringWidth(line) > 40 {
					t.Errorf("line wider than the pane: %q", line)
				}
			}
		})
	}
}
