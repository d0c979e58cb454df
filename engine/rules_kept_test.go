package engine

import (
	"context"
	"errors"
	"image"
	"image/color"
	"image/draw"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/drivers/ocr"
	"github.com/kasmrt/kasmrt/engine/events"
	mt "github.com/kasmrt/kasmrt/engine/model/modeltest"
)

// TestRulesManifest: a finished run on the double leaves a manifest that
// resume can read, ended when the report says the run ended, with the
// tokens the model server counted (total_tokens only, not every usage
// field summed).
func TestRulesManifest(t *testing.T) {
	t.Parallel()
	// A cached prompt makes the usage fields other than total_tokens sum
	// to more than it.
	cached := map[string]any{"prompt_tokens_details": map[string]any{"cached_tokens": 60}}
	r := loopRun(t, loopCase{scenario: rulesGoal, machine: &fakeMachine{},
		script: []mt.Exchange{loopObserve.WithUsage(cached), loopGoalMet.WithUsage(cached)}})
	loopWant(t, r, loopUnverified, OutcomeCompleted, 2, 0)
	m, err := ReadManifest(r.dir)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Complete() || m.Verdict != r.rep.Verdict || m.Outcome != r.rep.Outcome {
		t.Errorf("manifest ended=%v verdict=%q outcome=%q, report %q/%q", m.Ended, m.Verdict, m.Outcome, r.rep.Verdict, r.rep.Outcome)
	}
	if r.rep.Timing.Ended == nil || m.Ended == nil || !m.Ended.Equal(*r.rep.Timing.Ended) {
		t.Errorf("manifest ended %v, report ended %v: want the same instant", m.Ended, r.rep.Timing.Ended)
	}
	if !m.Started.Equal(r.rep.Timing.Started) {
		t.Errorf("manifest started %v, report started %v", m.Started, r.rep.Timing.Started)
	}
	// The model test server counts 110 total tokens per reply.
	if want := r.rep.Usage.Total["total_tokens"]; m.Tokens != want || want != 220 {
		t.Errorf("manifest tokens %v, report's total_tokens %v, want 220", m.Tokens, want)
	}
}

// TestRulesManifestWithoutIdentity: when the run's identity cannot be
// computed (here a model profile no run with a model would have accepted,
// in an operator file without a model) no manifest is written, so resume
// never takes the run for a finished one, and writing it is the report's
// error.
func TestRulesManifestWithoutIdentity(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := loadRunFiles(t, dir, rulesApp+"steps:\n  - observe_screen: {}\n", "model:\n  profile: no-such-profile\n", nil)
	r := &Runner{files: files, opts: Options{ReportDir: dir}}
	rm := r.startManifest()
	err := rm.write()
	if err == nil || !strings.Contains(err.Error(), "write manifest") || !strings.Contains(err.Error(), "no-such-profile") {
		t.Errorf("write = %v, want the identity's error", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ManifestFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a manifest without an identity was written (stat: %v)", err)
	}
}

// TestRulesFinalCapture: every run whose display is alive ends with a
// capture of the whole screen kept in the report; a run whose X server
// went away says so instead of reporting a failed capture.
func TestRulesFinalCapture(t *testing.T) {
	t.Parallel()
	final := func(t *testing.T, r loopResult) events.Event {
		t.Helper()
		for _, e := range r.events {
			if e.Kind == events.KindFinal {
				return e
			}
		}
		t.Fatal("no final event")
		return events.Event{}
	}
	rulesRun(t, []rulesCase{
		{loopTurnCase: loopTurnCase{
			name:   "a live display is captured",
			script: []mt.Exchange{loopObserve, loopGoalMet}, verdict: loopUnverified, outcome: OutcomeCompleted, iterations: 2,
			steps: loopOKSteps,
			check: func(t *testing.T, r loopResult) {
				e := final(t, r)
				d, _ := e.Data.(events.FinalCapture)
				if e.Message != "" || e.Screen == "" || d.Width != 640 || d.Height != 400 || d.Ending != OutcomeCompleted {
					t.Fatalf("final = %q, screen %q, %+v: want a 640x400 capture of a completed run", e.Message, e.Screen, d)
				}
				if _, err := os.Stat(filepath.Join(r.dir, e.Screen)); err != nil {
					t.Errorf("the final capture is not in the report: %v", err)
				}
			},
		}},
		{loopTurnCase: loopTurnCase{
			name:    "a display gone is said so",
			script:  []mt.Exchange{loopObserve, mt.Call("press_key", `{"key": "Return"}`), loopGoalMet},
			verdict: events.VerdictTestError, outcome: OutcomeSessionLost, iterations: 2,
			steps: []loopStep{{"observe_screen", "ok", ""}, {"press_key", "error", "capture the screen: X connection closed"}},
			check: func(t *testing.T, r loopResult) {
				if e := final(t, r); e.Message != "no final capture: the X server went away" || e.Screen != "" {
					t.Errorf("final = %q, screen %q", e.Message, e.Screen)
				}
			},
		}, machine: func() (*fakeMachine, []mt.Exchange) {
			return &fakeMachine{on: func(f *fakeMachine, in string) { f.loseSession() }}, nil
		}},
	})
}

// TestRulesSecretTypedMasked: a secret typed where the runtime knows no
// field (no browser, no accessible with the focus) is masked where the
// typing changed the screen, on the screen after it and every later one;
// the rest of the screen is kept.
func TestRulesSecretTypedMasked(t *testing.T) {
	t.Parallel()
	before := image.NewRGBA(image.Rect(0, 0, 640, 400))
	draw.Draw(before, before.Bounds(), image.White, image.Point{}, draw.Src)
	typed := image.Rect(100, 100, 160, 112)
	after := image.NewRGBA(before.Bounds())
	draw.Draw(after, after.Bounds(), before, image.Point{}, draw.Src)
	draw.Draw(after, typed, image.NewUniform(color.RGBA{R: 0x40, G: 0x40, B: 0x40, A: 0xff}), image.Point{}, draw.Src)
	f := &fakeMachine{frames: []*image.RGBA{before, after}}
	sc := strings.Replace(rulesApp, "  quit: exit\n", "  quit: exit\n  password: {secret: {env: APP_PASSWORD}}\n", 1) +
		"steps:\n  - type_text: {ref: password}\n  - observe_screen: {}\n"
	r := loopRun(t, loopCase{scenario: sc, operator: "runner: {}\n", machine: f, env: map[string]string{"APP_PASSWORD": "hunter2-correct-horse"}})
	loopWant(t, r, events.VerdictPass, OutcomeCompleted, 0, 0)
	if len(r.rep.Steps) != 2 {
		t.Fatalf("steps %+v", r.rep.Steps)
	}
	for _, st := range r.rep.Steps {
		img := readScreen(t, filepath.Join(r.dir, st.Screen))
		black := func(x, y int) bool { r, g, b, _ := img.At(x, y).RGBA(); return r|g|b == 0 }
		if !black(typed.Min.X, typed.Min.Y) || !black(typed.Max.X-1, typed.Max.Y-1) || black(300, 300) {
			t.Errorf("step %d %s: the typed place is not blacked out alone", st.N, st.Tool)
		}
	}
}

// TestRulesSecretGivenShown: a secret the application was given in its
// environment is looked for on every kept screen; where the application
// shows it, it is blacked out, and one concern says it was displayed.
func TestRulesSecretGivenShown(t *testing.T) {
	t.Parallel()
	scriptNeed(t, ocr.Command)
	screen := image.NewRGBA(image.Rect(0, 0, 640, 400))
	draw.Draw(screen, fakeWindowBox(), image.White, image.Point{}, draw.Src)
	maskDrawText(t, screen, image.Pt(40, 100), "password: "+maskSecret)
	f := &fakeMachine{frames: []*image.RGBA{screen}}
	sc := strings.Replace(rulesApp, "  command: [fake-app]\n", "  command: [fake-app]\n  env: {APP_PW: \"${APP_PASSWORD}\"}\n", 1) +
		"  password: {secret: {env: APP_PASSWORD}}\nsteps:\n  - observe_screen: {}\n  - observe_screen: {}\n"
	r := loopRun(t, loopCase{scenario: sc, operator: "runner: {}\n", machine: f, env: map[string]string{"APP_PASSWORD": maskSecret}})
	loopWant(t, r, events.VerdictPassConcerns, OutcomeCompleted, 0, 0)
	want := `the application displayed the secret "password" on the screen (first in screens/0001.png)`
	if len(r.rep.Concerns) != 1 || !strings.HasPrefix(r.rep.Concerns[0], want) {
		t.Errorf("concerns %q, want one saying %q", r.rep.Concerns, want)
	}
	words, err := ocr.NewReader(1).Read(context.Background(), readScreen(t, filepath.Join(r.dir, r.rep.Steps[1].Screen)))
	if err != nil {
		t.Fatal(err)
	}
	if text := ocr.Text(words); maskTrace(text, maskSecret) || !strings.Contains(text, "password") {
		t.Errorf("the kept screen reads %q: want the label and no trace of the secret", text)
	}
}
