package engine

import (
	"image"
	"slices"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/drivers/desktop"
	"github.com/kasmrt/kasmrt/engine/events"
)

// TestRulesPointerParkedOffTheApp: the pointer rests off the
// application's window from its launch on, as a person's does, so the
// first screen shows no hover and no tooltip.
func TestRulesPointerParkedOffTheApp(t *testing.T) {
	t.Parallel()
	f := &fakeMachine{}
	r := loopRun(t, loopCase{scenario: rulesApp + "steps:\n  - observe_screen: {}\n", operator: "runner: {}\n", machine: f})
	loopWant(t, r, events.VerdictPass, OutcomeCompleted, 0, 0)
	f.mu.Lock()
	moves := slices.Clone(f.moves)
	w, h := f.width, f.height
	f.mu.Unlock()
	if len(moves) == 0 {
		t.Fatal("the pointer was never moved: it rests wherever the server put it (the screen's centre)")
	}
	if last := moves[len(moves)-1]; last.In(fakeWindowBox()) || !last.In(image.Rect(0, 0, w, h)) {
		t.Errorf("the pointer rests at %v, want a point of the %dx%d screen off the window %v", last, w, h, fakeWindowBox())
	}
}

// TestRulesPopupsAreNotWindows: a tooltip the application shows over its
// window carries the app's pid, class and even its title, but it is
// reported as a tooltip showing, not as one of the application's windows.
func TestRulesPopupsAreNotWindows(t *testing.T) {
	t.Parallel()
	f := dialogDesktop()
	f.others = append(f.others, desktop.Window{ID: 0x400009, PID: fakePID, Class: "Fake", Instance: "fake", Title: "Main",
		X: 30, Y: 30, Width: 80, Height: 20, Viewable: true, Popup: "tooltip"})
	r := loopRun(t, loopCase{scenario: toplevelsApp + "steps:\n  - observe_screen: {}\n", operator: "runner: {}\n", machine: f})
	loopWant(t, r, events.VerdictPass, OutcomeCompleted, 0, 0)
	loopWantSteps(t, r.rep, loopStep{"observe_screen", "ok",
		`; the application's windows: "Help", "Preferences", "Main" (focused); showing over them: tooltip`})
	if msg := r.rep.Steps[0].Message; strings.Count(msg, `"Main"`) != 1 {
		t.Errorf("the tooltip is listed as a window: %q", msg)
	}
}
