package engine

import (
	"image"
	"image/color"
	"image/draw"
	"os"
	"path/filepath"
	"testing"

	"github.com/kasmrt/kasmrt/drivers/ocr"
	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/internal/screenpng"
)

// TestRulesCheckKeepsTheScreenItHeldOn: a check that holds only after the
// app drew its answer late keeps, as the step's screen, the screen on
// which it held — not the capture taken before it polled, which shows the
// answer missing and contradicts "checked: the screen shows ...".
func TestRulesCheckKeepsTheScreenItHeldOn(t *testing.T) {
	t.Parallel()
	scriptNeed(t, ocr.Command)
	blank := image.NewRGBA(image.Rect(0, 0, 640, 400))
	draw.Draw(blank, blank.Bounds(), image.White, image.Point{}, draw.Src)
	answered := image.NewRGBA(blank.Bounds())
	draw.Draw(answered, answered.Bounds(), image.White, image.Point{}, draw.Src)
	maskDrawText(t, answered, image.Pt(60, 100), "5535")
	// A red corner, outside the window the check reads, tells the
	// answered screen apart in the report.
	red := color.RGBA{R: 0xff, A: 0xff}
	draw.Draw(answered, image.Rect(600, 360, 640, 400), image.NewUniform(red), image.Point{}, draw.Src)
	// The step's own capture and the check's first reading show the blank
	// screen; the answer is drawn after them.
	f := &fakeMachine{frames: []*image.RGBA{blank, blank, answered}, lateDraw: 2}
	r := loopRun(t, loopCase{scenario: rulesApp + "steps:\n  - press_key: {key: Return}\n    expect:\n      screen_text: {contains: \"5535\", within_s: 10}\n",
		operator: "runner: {}\n", machine: f})
	loopWant(t, r, events.VerdictPass, OutcomeCompleted, 0, 0)
	loopWantSteps(t, r.rep, loopStep{"press_key", "ok", `checked: the screen shows "5535"`})
	img := firstStepScreen(t, r)
	if got := color.RGBAModel.Convert(img.At(620, 380)).(color.RGBA); got != red {
		t.Errorf("the step's screen %s is the one before the answer was drawn (corner %v)", r.rep.Steps[0].Screen, got)
	}
}

// TestRulesCheckHeldAtOnceKeepsTheStepsScreen: a check that holds on its
// first try held on the screen the step's own capture shows, so the step
// keeps that capture and takes no other. The double's app draws once more
// after the step's capture; a step that captured again would keep that
// later screen.
func TestRulesCheckHeldAtOnceKeepsTheStepsScreen(t *testing.T) {
	t.Parallel()
	f := &fakeMachine{title: "notes.txt - Saved", lateDraw: 1}
	r := loopRun(t, loopCase{scenario: rulesApp + "steps:\n  - press_key: {key: ctrl+s}\n    expect:\n      window_title: {contains: Saved}\n",
		operator: "runner: {}\n", machine: f})
	loopWant(t, r, events.VerdictPass, OutcomeCompleted, 0, 0)
	loopWantSteps(t, r.rep, loopStep{"press_key", "ok", `checked: the window title contains "Saved"`})
	img := firstStepScreen(t, r)
	// The double paints frame n in red n*40: the key moved it to frame 1,
	// the late drawing after the step's capture to frame 2.
	if got := color.RGBAModel.Convert(img.At(0, 0)).(color.RGBA); got.R != 40 {
		t.Errorf("the step's screen %s has red %d, want 40 (the step's own capture, not a later one)", r.rep.Steps[0].Screen, got.R)
	}
}

// firstStepScreen is the screen the run's first step kept, decoded.
func firstStepScreen(t *testing.T, r loopResult) image.Image {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.dir, r.rep.Steps[0].Screen))
	if err != nil {
		t.Fatalf("the step's screen: %v", err)
	}
	img, err := screenpng.Decode(b)
	if err != nil {
		t.Fatalf("the step's screen %s: %v", r.rep.Steps[0].Screen, err)
	}
	return img
}
