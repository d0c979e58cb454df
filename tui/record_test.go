package tui

import (
	"reflect"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/kasmrt/kasmrt/engine"
	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/scenarios"
	"github.com/kasmrt/kasmrt/tui/graphics"
)

// TestRecorderChoices offers the calls of the tools the run has, with the
// names they take — the named controls first, as the Environment Update
// lists them — then names to give on the spot (a window by class and
// title, a control by accessible name, the words under the pointer), and
// finishing last; a tool the run does not offer is left out.
func TestRecorderChoices(t *testing.T) {
	seen := engine.Seen{
		Tools: []string{"click_element", "click", "type_text", "press_key", "switch_window", "wait_while", "greet", "observe_screen"},
		Vocabulary: engine.Vocabulary{
			ClickTargets: []string{"ok"}, Refs: []string{"line"}, Windows: []string{"main"},
			WaitConditions: []string{"settling"}, CDPTargets: []string{"submit"},
			Declared: []engine.DeclaredCall{{Tool: "greet", Args: map[string]any{"who": "ada"}}},
		},
		Controls: []engine.SeenControl{{Name: "Save As…", Role: "push button"}},
		Windows:  []engine.SeenWindow{{Class: "Mousepad", Title: "Save As", Focused: true}},
		Pointer:  &events.Point{X: 3, Y: 4},
		NearText: "Cancel",
	}
	rec := Recorded{Windows: map[string]scenarios.WindowMatch{}, ClickTargets: map[string]scenarios.ClickTarget{}}
	got := buildChoices(seen, rec)
	var labels []string
	for _, c := range got {
		labels = append(labels, c.label)
	}
	want := []string{
		`click_element "Save As…" (push button)`,
		"click ok",
		"type_text line",
		"press_key … (type a chord)",
		"switch_window main",
		"wait_while settling",
		"greet who=ada (declared tool)",
		"observe_screen",
		`name window "Save As" {class: Mousepad, title: Save As} and switch to it`,
		`name click target "Save As…" by its accessible name and click it`,
		`name click target "Cancel" by the text read there and click it`,
		"finish: write the scenario and replay it",
	}
	if !reflect.DeepEqual(labels, want) {
		t.Fatalf("choices:\n got %q\nwant %q", labels, want)
	}
	if d := got[8].def; d.Window != "save_as" || d.WindowMatch != (scenarios.WindowMatch{Class: "Mousepad", Title: "Save As"}) {
		t.Errorf("window named on the spot: %+v", d)
	}
	if d := got[9].def; d.Target != "save_as" || d.ClickTarget.Name != "Save As…" || d.ClickTarget.Role != "push button" {
		t.Errorf("control named on the spot: %+v", d)
	}
	// A name taken by the scenario or earlier in the recording is not
	// proposed again.
	rec.ClickTargets["save_as"] = scenarios.ClickTarget{Name: "Other"}
	if d := buildChoices(seen, rec)[9].def; d.Target != "save_as_2" {
		t.Errorf("a taken name was proposed again: %+v", d)
	}
	if d := got[10].def; d.Target != "cancel" || d.ClickTarget.Text != "Cancel" || d.ClickTarget.X != 0 {
		t.Errorf("text named on the spot: %+v", d)
	}
}

// TestRecorderFitsSmallTerminal draws the recording console at 80x24, the
// terminal the README's smallest layout promises: the live console above
// keeps the height it needs to draw (it said "terminal too small" when the
// panel took a fixed 14 rows), the panel lists calls below it, and the
// whole frame is the terminal's height.
func TestRecorderFitsSmallTerminal(t *testing.T) {
	t.Parallel()
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		m, _ := NewRecord(Options{Graphics: graphics.None, Env: func(string) string { return "" }}, nil)
		m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		m.looked(lookMsg{seen: engine.Seen{Tools: []string{"type_text", "press_key"}, Vocabulary: engine.Vocabulary{Refs: []string{"line"}}}})
		frame := ansi.Strip(m.View().Content)
		if strings.Contains(frame, "terminal too small") {
			t.Errorf("%dx%d: the live console is too small to draw:\n%s", size[0], size[1], frame)
		}
		if !strings.Contains(frame, "type_text line") {
			t.Errorf("%dx%d: the panel does not list the calls:\n%s", size[0], size[1], frame)
		}
		if n := len(strings.Split(frame, "\n")); n != size[1] {
			t.Errorf("%dx%d: the frame is %d lines tall", size[0], size[1], n)
		}
	}
}
