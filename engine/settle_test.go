package engine

import (
	"image/color"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/drivers/desktop"
	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/internal/lateapp"
	"github.com/kasmrt/kasmrt/scenarios"
)

// lateAppDelay, in the environment of this test binary, makes
// TestLateAppHelper the late-drawing app: the delay after a key before it
// draws.
const lateAppDelay = "KASM_LATE_APP_DELAY"

func TestLateAppHelper(t *testing.T) {
	delay := os.Getenv(lateAppDelay)
	if delay == "" {
		t.Skip("not a test: the app TestPressKeyCapturesLateDrawing runs (needs " + lateAppDelay + ")")
	}
	d, err := time.ParseDuration(delay)
	if err != nil {
		t.Fatal(err)
	}
	if err := lateapp.Run(os.Getenv("DISPLAY"), d); err != nil {
		t.Fatal(err)
	}
}

// TestPressKeyCapturesLateDrawing presses a key in an app that answers by
// drawing 200 ms later: the step's screen must show the answer, not the
// screen before it. The operator waits up to 1.5 s for the answer to
// begin: the default 300 ms leaves a loaded machine, where the app wakes
// late, too little to tell the rule from the scheduler.
func TestPressKeyCapturesLateDrawing(t *testing.T) {
	t.Parallel()
	o := scriptRun(t, scriptRunSpec{
		operator: "runner:\n  settle_response_ms: 1500\n",
		scenario: `name: late drawing
app:
  command: [` + os.Args[0] + `, -test.run=^TestLateAppHelper$]
  env: {` + lateAppDelay + `: 200ms}
  window: {class: ` + lateapp.Class + `}
steps:
  - observe_screen: {}
  - press_key: a
`,
	})
	if o.res.Verdict != events.VerdictPass {
		t.Fatalf("verdict %s/%s, want pass; reasons %q", o.res.Verdict, o.res.Outcome, o.res.Reasons)
	}
	var box *events.Rect
	var screen string
	for _, e := range o.events {
		switch {
		case e.Kind == events.KindAppWindow:
			box = e.Box
		case e.Kind == events.KindStepEnded && e.Tool == "press_key":
			screen = e.Screen
		}
	}
	if box == nil || screen == "" {
		t.Fatalf("no window (%v) or no screen after press_key (%q)", box, screen)
	}
	img := readScreen(t, filepath.Join(o.info.reportDir, screen))
	got := color.RGBAModel.Convert(img.At(box.X+box.W/2, box.Y+box.H/2)).(color.RGBA)
	if got != (color.RGBA{0, 0, 0, 255}) {
		t.Fatalf("%s shows %v at the window's centre: captured before the app drew (want black)", screen, got)
	}
}

// TestRulesSettleOptions: the settle wait takes runner.settle_* in
// milliseconds, and only after an input the wait for the answer to start.
func TestRulesSettleOptions(t *testing.T) {
	t.Parallel()
	op := &scenarios.Operator{}
	op.Runner.SettleIntervalMS, op.Runner.SettleCapMS, op.Runner.SettleQuietMS, op.Runner.SettleResponseMS = 30, 400, 60, 250
	s := &runState{env: environment{files: &scenarios.Files{Operator: op}}}
	ms := time.Millisecond
	if got, want := s.env.settleOptions(false), (desktop.SettleOptions{Interval: 30 * ms, Cap: 400 * ms, Quiet: 60 * ms}); got != want {
		t.Errorf("settle options %+v, want %+v", got, want)
	}
	if got, want := s.env.settleOptions(true), (desktop.SettleOptions{Interval: 30 * ms, Cap: 400 * ms, Quiet: 60 * ms, Response: 250 * ms}); got != want {
		t.Errorf("settle options after input %+v, want %+v", got, want)
	}
}
