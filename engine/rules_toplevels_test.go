package engine

import (
	"slices"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/drivers/desktop"
	"github.com/kasmrt/kasmrt/engine/events"
)

// The double's other windows, by id: the application's own dialog, its
// help window from an Xt client that sets no pid but shares the startup
// window's WM_CLASS, windows that are not the application's, a hidden one
// and an untitled one.
const (
	prefsID   = 0x400002
	helpID    = 0x400003
	strangeID = 0x400004
	otherID   = 0x400005
)

// dialogDesktop is the double with the application's main window
// ("Main") and the other windows.
func dialogDesktop() *fakeMachine {
	return &fakeMachine{title: "Main", others: []desktop.Window{
		{ID: prefsID, PID: fakePID, Class: "Fake", Instance: "fake", Title: "Preferences", X: 100, Y: 100, Width: 200, Height: 100, Viewable: true},
		{ID: helpID, Class: "Fake", Instance: "fake", Title: "Help", X: 0, Y: 0, Width: 50, Height: 50, Viewable: true},
		{ID: strangeID, Class: "Fake", Instance: "other", Title: "Same class, other instance", Width: 50, Height: 50, Viewable: true},
		{ID: 0x400006, Class: "Other", Instance: "fake", Title: "Other class", Width: 50, Height: 50, Viewable: true},
		{ID: otherID, PID: 4242, Class: "Other", Instance: "other", Title: "Other App", X: 300, Y: 300, Width: 100, Height: 60, Viewable: true},
		{ID: 0x400007, PID: fakePID, Title: "Hidden", Width: 50, Height: 50},
		{ID: 0x400008, PID: fakePID, Width: 50, Height: 50, Viewable: true},
	}}
}

// focusOnF1 is dialogDesktop where pressing F1 gives a window the focus.
func focusOnF1(id uint32) func() *fakeMachine {
	return func() *fakeMachine {
		f := dialogDesktop()
		f.on = func(f *fakeMachine, in string) {
			if in == "key F1" {
				f.mu.Lock()
				f.focus = id
				f.mu.Unlock()
			}
		}
		return f
	}
}

// toplevelsApp declares the windows switch_window may name.
const toplevelsApp = rulesApp + `windows:
  prefs: {title: Preferences}
  other: {title: Other App, pid: false}
  foreign: {title: Other App}
`

// TestRulesSwitchWindow checks the application's windows as the model
// and the report see them, and switch_window: only the app's mapped,
// titled windows are listed, top first with the focused one marked; the
// window switched to gets the focus, the clicks and the keys until it
// closes; pid: false reaches another client's window.
func TestRulesSwitchWindow(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		machine func() *fakeMachine
		steps   string
		want    []loopStep
		inputs  []string
		focused []uint32
	}{
		{
			name: "the app's windows are listed top first", machine: dialogDesktop,
			steps: "  - observe_screen: {}\n",
			want:  []loopStep{{"observe_screen", "ok", `; the application's windows: "Help", "Preferences", "Main" (focused)`}},
		},
		{
			name: "the window switched to has the focus, the clicks and the keys", machine: dialogDesktop,
			steps: "  - switch_window: prefs\n  - observe_screen: {}\n  - click: center\n  - press_key: a\n",
			want: []loopStep{{"switch_window", "ok", `switched to window "prefs" ("Preferences")`},
				{"observe_screen", "ok", `"Help", "Preferences" (focused), "Main"`},
				{"click", "ok", ""}, {"press_key", "ok", ""}},
			inputs: []string{"click 200,150", "key a"}, focused: []uint32{prefsID},
		},
		{
			name: "a window switched to that closes gives the clicks back to the startup window",
			machine: func() *fakeMachine {
				f := dialogDesktop()
				f.on = func(f *fakeMachine, in string) {
					if in == "key Escape" {
						f.changeOther(prefsID, func(w *desktop.Window) { w.Viewable = false })
					}
				}
				return f
			},
			steps:  "  - switch_window: prefs\n  - press_key: Escape\n  - click: center\n",
			want:   []loopStep{{"switch_window", "ok", ""}, {"press_key", "ok", ""}, {"click", "ok", ""}},
			inputs: []string{"key Escape", "click 220,140"}, focused: []uint32{prefsID},
		},
		{
			name: "pid: false reaches another client's window", machine: dialogDesktop,
			steps:  "  - switch_window: other\n  - click: center\n",
			want:   []loopStep{{"switch_window", "ok", `switched to window "other" ("Other App")`}, {"click", "ok", ""}},
			inputs: []string{"click 350,330"}, focused: []uint32{otherID},
		},
		{
			name: "a dialog the app gave the focus keeps the keys", machine: focusOnF1(prefsID),
			steps:  "  - press_key: F1\n  - press_key: a\n",
			want:   []loopStep{{"press_key", "ok", ""}, {"press_key", "ok", ""}},
			inputs: []string{"key F1", "key a"},
		},
		{
			name: "another client's window with the focus gives it back to the app", machine: focusOnF1(otherID),
			steps:  "  - press_key: F1\n  - press_key: a\n",
			want:   []loopStep{{"press_key", "ok", ""}, {"press_key", "ok", ""}},
			inputs: []string{"key F1", "key a"}, focused: []uint32{fakeWindowID},
		},
		{
			name: "a window the app shares no class with is not the app's", machine: focusOnF1(strangeID),
			steps:  "  - press_key: F1\n  - press_key: a\n",
			want:   []loopStep{{"press_key", "ok", ""}, {"press_key", "ok", ""}},
			inputs: []string{"key F1", "key a"}, focused: []uint32{fakeWindowID},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := c.machine()
			r := loopRun(t, loopCase{scenario: toplevelsApp + "steps:\n" + c.steps, operator: "runner: {}\n", machine: f})
			loopWant(t, r, events.VerdictPass, OutcomeCompleted, 0, 0)
			loopWantSteps(t, r.rep, c.want...)
			if got := f.inputs(); !slices.Equal(got, c.inputs) {
				t.Errorf("input = %q, want %q", got, c.inputs)
			}
			// The run gives the startup window the focus once it is found.
			if got, want := f.focusCalls(), append([]uint32{fakeWindowID}, c.focused...); !slices.Equal(got, want) {
				t.Errorf("focus given to %x, want %x", got, want)
			}
			if strings.Contains(strings.Join(r.rep.Concerns, " "), "focus") {
				t.Errorf("concerns = %q", r.rep.Concerns)
			}
			// Focus given without trouble is not logged as a failure.
			for _, e := range r.events {
				if e.Kind == events.KindLog && strings.Contains(e.Message, "focus the application window") {
					t.Errorf("log %q", e.Message)
				}
			}
		})
	}
}

// TestRulesSwitchWindowNotFound: switch_window to a window the
// application does not have fails, naming the match and listing the
// application's windows (a window with that title of another process is
// not the application's without pid: false); one cut short by the
// deadline says it was interrupted.
func TestRulesSwitchWindowNotFound(t *testing.T) {
	t.Parallel()
	t.Run("another process's window", func(t *testing.T) {
		t.Parallel()
		r := loopRun(t, loopCase{scenario: toplevelsApp + "steps:\n  - switch_window: foreign\n", operator: "runner: {}\n", machine: dialogDesktop()})
		loopWant(t, r, events.VerdictTestError, OutcomeStepError, 0, 0)
		loopWantSteps(t, r.rep, loopStep{"switch_window", "error",
			`(window "foreign") is open; the application's windows: "Help", "Preferences", "Main" (focused)`})
	})
	t.Run("cut short by the deadline", func(t *testing.T) {
		t.Parallel()
		r := loopRun(t, loopCase{scenario: toplevelsApp + "steps:\n  - switch_window: foreign\n", operator: "runner: {}\n", machine: dialogDesktop(),
			env: map[string]string{"KASM_RUNTIME_DEADLINE_S": "1.5"}})
		loopWant(t, r, events.VerdictTestError, OutcomeDeadline, 0, 0)
		loopWantSteps(t, r.rep, loopStep{"switch_window", "error", "switch_window was interrupted"})
	})
}
