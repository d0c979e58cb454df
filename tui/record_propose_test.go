package tui

import (
	"fmt"
	"image"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine"
	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/redact"
	"github.com/kasmrt/kasmrt/scenarios"
)

func labels(ps []proposal) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.label
	}
	return out
}

// TestProposeChecks proposes, after a step, what it changed before what
// merely holds, bounded, and nothing that quotes a masked secret.
func TestProposeChecks(t *testing.T) {
	ctl := func(name, role string, checked bool) engine.SeenControl {
		return engine.SeenControl{Name: name, Role: role, Enabled: true, Checked: checked, Stated: true}
	}
	var menu []engine.SeenControl
	for _, n := range []string{"Undo", "Redo", "Cut", "Copy", "Paste", "Delete"} {
		menu = append(menu, ctl(n, "menu item", false))
	}
	tests := []struct {
		name          string
		before, after engine.Seen
		want          []string
	}{
		{
			name:   "typed text: the title changed, a new line is read, the cursor left out",
			before: engine.Seen{Title: "Untitled 1 - Mousepad", Lines: []string{"File Edit Search"}},
			after:  engine.Seen{Title: "*Untitled 1 - Mousepad", Lines: []string{"File Edit Search", "Typed while recording|"}},
			want: []string{
				`the window title became "*Untitled 1 - Mousepad"`,
				`the screen shows "Typed while recording" (OCR, new in the window)`,
			},
		},
		{
			name:   "a click toggled a check box; the text near the pointer",
			before: engine.Seen{Title: "Prefs", Controls: []engine.SeenControl{ctl("Bold", "check box", false), ctl("OK", "push button", false)}},
			after: engine.Seen{Title: "Prefs", Controls: []engine.SeenControl{ctl("Bold", "check box", true), ctl("OK", "push button", false)},
				Pointer: &events.Point{X: 5, Y: 5}, NearText: "Bold text"},
			want: []string{
				`the check box "Bold" is now checked`,
				`the screen shows "Bold text" (OCR, near the pointer)`,
				`the window title is "Prefs"`,
			},
		},
		{
			name:   "a menu opened: three of its items, then the title",
			before: engine.Seen{Title: "Editor", Controls: []engine.SeenControl{ctl("Edit", "menu", false)}},
			after:  engine.Seen{Title: "Editor", Controls: append([]engine.SeenControl{ctl("Edit", "menu", false)}, menu...)},
			want: []string{
				`the menu item "Undo" appeared`, `the menu item "Redo" appeared`, `the menu item "Cut" appeared`,
				`the window title is "Editor"`,
			},
		},
		{
			name:   "a dialog closed: its controls are gone",
			before: engine.Seen{Title: "Editor", Controls: []engine.SeenControl{ctl("Edit", "menu", false), ctl("Cancel", "push button", false)}},
			after:  engine.Seen{Title: "Editor", Controls: []engine.SeenControl{ctl("Edit", "menu", false)}},
			want:   []string{`the push button "Cancel" is gone`, `the window title is "Editor"`},
		},
		{
			name: "a page element's text changed; an unchanged one holds",
			before: engine.Seen{Elements: []engine.SeenElement{{Target: "greeting", Found: true, Text: "Hello"},
				{Target: "footer", Found: true, Text: "v1"}}},
			after: engine.Seen{Elements: []engine.SeenElement{{Target: "greeting", Found: true, Text: "Hello,   Ada"},
				{Target: "footer", Found: true, Text: "v1"}, {Target: "missing"}}},
			want: []string{`the page's greeting reads "Hello, Ada"`, `the page's footer reads "v1"`},
		},
		{
			name:   "a masked secret is never quoted",
			before: engine.Seen{Title: "Sign in"},
			after: engine.Seen{Title: "Welcome " + redact.Mask, Pointer: &events.Point{}, NearText: "pin " + redact.Mask,
				Elements: []engine.SeenElement{{Target: "pin", Found: true, Text: redact.Mask}}},
			want: nil,
		},
		{
			name:   "stray marks are not worth a check",
			before: engine.Seen{},
			after:  engine.Seen{Pointer: &events.Point{}, NearText: "| . ,"},
			want:   nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := labels(proposeChecks(tt.before, tt.after, ""))
			if !reflect.DeepEqual(got, tt.want) && (len(got) > 0 || len(tt.want) > 0) {
				t.Errorf("proposals:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestProposalsMakeTheirChecks accepts every proposal of a step and gets
// the expect: they describe, each check on its own key.
func TestProposalsMakeTheirChecks(t *testing.T) {
	before := engine.Seen{Title: "A", Controls: []engine.SeenControl{{Name: "Bold", Role: "check box", Enabled: true, Stated: true}}}
	after := engine.Seen{Title: "B", Controls: []engine.SeenControl{{Name: "Bold", Role: "check box", Enabled: true, Checked: true, Stated: true}},
		Pointer: &events.Point{X: 1, Y: 1}, NearText: "Bold is on",
		Elements: []engine.SeenElement{{Target: "status", Found: true, Text: "saved"}}}
	var e scenarios.Expect
	for _, p := range proposeChecks(before, after, "") {
		p.add(&e)
	}
	yes := true
	want := scenarios.Expect{
		WindowTitle: &scenarios.TitleCheck{Equals: "B"},
		ScreenText:  &scenarios.ScreenTextCheck{Contains: "Bold is on"},
		CDP:         map[string]scenarios.ElementCheck{"status": {TextContains: "saved"}},
		Controls:    map[string]scenarios.ControlCheck{"Bold": {Checked: &yes}},
	}
	if !reflect.DeepEqual(e, want) {
		t.Errorf("checks:\n got %+v\nwant %+v", e, want)
	}
}

// TestRecorderNames proposes names a scenario takes and a window match by
// class and title, never by position.
func TestRecorderNames(t *testing.T) {
	for in, want := range map[string]string{
		"Save As…":                        "save_as",
		"*Untitled 1 - Mousepad":          "untitled_1_mousepad",
		"42":                              "w_42",
		"":                                "w_",
		strings.Repeat("long title ", 10): "long_title_long_title_long_title_long_ti",
	} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
	taken := map[string]bool{"save_as": true, "save_as_2": true}
	if got := unique("save_as", func(n string) bool { return taken[n] }); got != "save_as_3" {
		t.Errorf("unique = %q", got)
	}
	m := windowMatch(engine.SeenWindow{Class: "Mousepad", Title: "Save As"})
	if m != (scenarios.WindowMatch{Class: "Mousepad", Title: "Save As"}) {
		t.Errorf("windowMatch = %+v", m)
	}
}

// TestProposeScreenshot proposes, after a step whose window was captured
// steady, that the window looks like this: a screenshot check named after
// the step, kept within the nine proposals however many others there
// are. Accepted, it puts the check in the step's expect: and the captured
// window in the step as its baseline; without a capture nothing is
// proposed.
func TestProposeScreenshot(t *testing.T) {
	window := image.NewRGBA(image.Rect(0, 0, 40, 30))
	var many []engine.SeenElement
	for i := range 12 {
		many = append(many, engine.SeenElement{Target: fmt.Sprintf("cell%d", i), Found: true, Text: "changed"})
	}
	before := engine.Seen{Title: "A"}
	after := engine.Seen{Title: "B", Elements: many, Window: window}

	got := proposeChecks(before, after, "step4")
	if len(got) != maxProposals {
		t.Fatalf("%d proposals, want %d: %q", len(got), maxProposals, labels(got))
	}
	last := got[len(got)-1]
	if want := "the window looks like this (screenshot step4, 40x30)"; last.label != want {
		t.Fatalf("last proposal %q, want %q; all: %q", last.label, want, labels(got))
	}
	if ps := proposeChecks(before, engine.Seen{Title: "B", Elements: many}, "step4"); slices.ContainsFunc(ps, func(p proposal) bool { return p.baseline != nil }) {
		t.Errorf("a screenshot was proposed without a capture: %q", labels(ps))
	}

	m, _ := NewRecord(Options{}, nil)
	m.step = scenarios.RecordedStep{Tool: "press_key", Args: map[string]any{"key": "Escape"}}
	m.proposals = got
	m.accepted = map[int]bool{len(got) - 1: true}
	m.keep()
	steps := m.Result().Steps
	if len(steps) != 1 {
		t.Fatalf("%d steps kept", len(steps))
	}
	st := steps[0]
	if st.Expect == nil || st.Expect.Screenshot == nil || st.Expect.Screenshot.Name != "step4" {
		t.Errorf("the step's check: %+v", st.Expect)
	}
	if st.Baseline != image.Image(window) {
		t.Errorf("the step's baseline is not the captured window: %v", st.Baseline)
	}
}
