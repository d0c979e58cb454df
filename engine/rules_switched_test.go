package engine

import (
	"image"
	"image/draw"
	"slices"
	"testing"

	"github.com/kasmrt/kasmrt/drivers/desktop"
	"github.com/kasmrt/kasmrt/drivers/ocr"
	"github.com/kasmrt/kasmrt/engine/events"
)

// savedDialogDesktop is the double with a dialog larger than the main
// window and reaching past it, showing "Saved" where only the dialog is.
func savedDialogDesktop(t *testing.T) *fakeMachine {
	t.Helper()
	screen := image.NewRGBA(image.Rect(0, 0, 640, 400))
	draw.Draw(screen, screen.Bounds(), image.White, image.Point{}, draw.Src)
	// The main window is fakeWindowBox (20,20)-(420,260); the word is
	// right of and below it.
	maskDrawText(t, screen, image.Pt(470, 330), "Saved")
	return &fakeMachine{title: "Main", frames: []*image.RGBA{screen}, others: []desktop.Window{
		{ID: prefsID, PID: fakePID, Class: "Fake", Instance: "fake", Title: "Save As", X: 300, Y: 200, Width: 320, Height: 180, Viewable: true},
	}}
}

// TestRulesSwitchedWindowReadAsItIs: a window switch_window goes to is
// ready by the startup window's rule (painted, then still) before the step
// ends, and the text checks and text targets after it read the switched
// window's own box, not the startup window's.
func TestRulesSwitchedWindowReadAsItIs(t *testing.T) {
	t.Parallel()
	scriptNeed(t, ocr.Command)
	const scenario = rulesApp + `windows:
  save_dialog: {title: Save As}
click_targets:
  saved_word: {text: Saved}
steps:
  - switch_window: save_dialog
  - expect:
      screen_text: {contains: Saved, within_s: 0.5}
  - click: saved_word
`
	f := savedDialogDesktop(t)
	r := loopRun(t, loopCase{scenario: scenario, operator: "runner: {}\n", machine: f})
	loopWant(t, r, events.VerdictPass, OutcomeCompleted, 0, 0)
	loopWantSteps(t, r.rep, loopStep{"switch_window", "ok", ""}, loopStep{"expect", "ok", `checked: the screen shows "Saved"`},
		loopStep{"click", "ok", "clicked saved_word"})
	f.mu.Lock()
	painted := slices.Clone(f.painted)
	f.mu.Unlock()
	if !slices.Contains(painted, prefsID) {
		t.Errorf("windows waited on to paint: %x; want the dialog 0x%x among them", painted, prefsID)
	}
	var p image.Point
	if ins := f.inputs(); len(ins) != 1 || !fakeClickAt(ins[0], &p) || !p.In(image.Rect(440, 300, 640, 380)) {
		t.Errorf("inputs %q, want one click on the word in the dialog", ins)
	}
}
