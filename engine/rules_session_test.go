package engine

import (
	"bytes"
	"context"
	"errors"
	"image/png"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/scenarios"
)

// rulesSession opens scenario, loaded as `kasmrt serve` loads a
// session's, as an outside agent's session on the double and returns it
// with the run's events so far.
func rulesSession(t *testing.T, ctx context.Context, scenario string, f *fakeMachine) (*AgentRun, func() []events.Event) {
	t.Helper()
	dir := t.TempDir()
	path, _ := writeRunFiles(t, dir, scenario, "")
	files, err := scenarios.LoadSession(path, "", lookupIn(nil))
	if err != nil {
		t.Fatal(err)
	}
	return rulesOpen(t, ctx, dir, files, f)
}

// rulesOpen opens loaded files as a session on the double.
func rulesOpen(t *testing.T, ctx context.Context, dir string, files *scenarios.Files, f *fakeMachine) (*AgentRun, func() []events.Event) {
	t.Helper()
	var (
		mu  sync.Mutex
		evs []events.Event
	)
	r, err := New(files, Options{ReportDir: filepath.Join(dir, "report"), Display: "-", Machine: f,
		Getenv: func(string) string { return "" },
		Sinks:  []func(events.Event){func(e events.Event) { mu.Lock(); evs = append(evs, e); mu.Unlock() }}})
	if err != nil {
		t.Fatal(err)
	}
	r.serverGrace = 100 * time.Millisecond
	s, err := r.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return s, func() []events.Event { mu.Lock(); defer mu.Unlock(); return append([]events.Event(nil), evs...) }
}

// TestRulesSession: an outside agent's calls go through the run's guards
// and come back with the screen they made; the agent's verdict is recorded
// as the model's would be, with a reason even when it gave none; the
// closed session takes no more calls.
func TestRulesSession(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f := &fakeMachine{}
	s, evs := rulesSession(t, ctx, rulesGoal, f)

	obs, err := s.Call(ctx, "observe_screen", nil)
	if err != nil || obs.Status != events.StatusOK || obs.Ended {
		t.Fatalf("observe_screen: %+v %v", obs, err)
	}
	img, err := png.Decode(bytes.NewReader(obs.PNG))
	if err != nil {
		t.Fatalf("observe_screen's PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 1280 || b.Dy() != 800 || obs.Width != 1280 || obs.Height != 800 || obs.Screen == "" {
		t.Errorf("observe_screen: PNG %v, reply %dx%d, screen %q", b, obs.Width, obs.Height, obs.Screen)
	}
	key, err := s.Call(ctx, "press_key", map[string]any{"key": "Return"})
	if err != nil || key.Status != events.StatusOK || key.Ended || key.Step != 2 {
		t.Errorf("press_key: %+v %v", key, err)
	}
	if bad, err := s.Call(ctx, "launch_rockets", nil); err != nil || bad.Status != events.StatusMalformed || bad.Ended {
		t.Errorf("an unknown tool: %+v %v", bad, err)
	}
	if err := s.Steer(events.Steer{Action: events.SteerPause}); err == nil {
		t.Error("a session took a pause")
	}
	if err := s.Steer(events.Steer{Action: events.SteerNote, Value: "looks fine"}); err != nil {
		t.Errorf("a note: %v", err)
	}

	res, err := s.Close(ctx, events.ModelGoalMet, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != loopUnverified {
		t.Errorf("verdict %s (%q)", res.Verdict, res.Reasons)
	}
	if _, err := s.Call(ctx, "observe_screen", nil); !errors.Is(err, ErrAgentRunOver) {
		t.Errorf("a call after Close: %v, want ErrSessionOver", err)
	}
	rep, _ := scriptReadReport(t, s.ReportDir())
	if rep.ModelVerdict == nil || rep.ModelVerdict.Verdict != events.ModelGoalMet || rep.ModelVerdict.Reason != "no reason given" {
		t.Errorf("model verdict %+v, want the agent's goal-met with no reason given", rep.ModelVerdict)
	}
	for _, e := range evs() {
		if e.Kind == events.KindLog && strings.Contains(e.Message, "steps are not run") {
			t.Errorf("a goal's session logs %q", e.Message)
		}
	}
}

// TestRulesSessionPageScreenNotDecoded: an outside agent's observe_screen
// on a headless page hands over the PNG the browser encoded, with its
// size, without decoding it: the double's captures do not decode.
func TestRulesSessionPageScreenNotDecoded(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f := &fakeMachine{spoilShots: true}
	s, _ := rulesSession(t, ctx, "name: session page\nbrowser:\n  mode: launch\n  start_url: http://app.test/login\n  headless: true\ngoal: Log in.\n", f)
	defer s.Close(ctx, "", "")
	obs, err := s.Call(ctx, "observe_screen", nil)
	if err != nil || obs.Status != events.StatusOK {
		t.Fatalf("observe_screen: %+v %v", obs, err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !slices.ContainsFunc(f.shotPNG, func(b []byte) bool { return bytes.Equal(b, obs.PNG) }) {
		t.Errorf("observe_screen's PNG (%d bytes) is not the one the browser encoded", len(obs.PNG))
	}
	if obs.Width != f.width || obs.Height != f.height {
		t.Errorf("observe_screen: %dx%d, want the page's %dx%d", obs.Width, obs.Height, f.width, f.height)
	}
}

// TestRulesSessionOfAScriptedScenario: a runner made from a scripted
// scenario (the engine's API allows it; `kasmrt serve` loads goals only)
// and opened as a session runs none of the steps, and its log says so.
func TestRulesSessionOfAScriptedScenario(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir := t.TempDir()
	files := loadRunFiles(t, dir, rulesApp+"steps:\n  - press_key: {key: Return}\n", "runner: {}\n", nil)
	f := &fakeMachine{}
	s, evs := rulesOpen(t, ctx, dir, files, f)
	if _, err := s.Close(ctx, "", ""); err != nil {
		t.Fatal(err)
	}
	if ins := f.inputs(); len(ins) != 0 {
		t.Errorf("inputs %q: want none of the scenario's steps", ins)
	}
	logged := false
	for _, e := range evs() {
		logged = logged || e.Kind == events.KindLog && strings.Contains(e.Message, "the scenario's 1 steps are not run")
	}
	if !logged {
		t.Error("the log does not say the scenario's steps are not run")
	}
}

// TestRulesSessionClosedWithoutVerdict: an agent that closes its session
// without a verdict records none; the run is judged without one.
func TestRulesSessionClosedWithoutVerdict(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, _ := rulesSession(t, ctx, rulesGoal, &fakeMachine{})
	if _, err := s.Close(ctx, "", ""); err != nil {
		t.Fatal(err)
	}
	rep, _ := scriptReadReport(t, s.ReportDir())
	if rep.ModelVerdict != nil {
		t.Errorf("model verdict %+v, want none", rep.ModelVerdict)
	}
	for _, st := range rep.Steps {
		if st.Tool == "record_verdict" {
			t.Errorf("a record_verdict step without a verdict: %+v", st)
		}
	}
}

// TestRulesSessionEndedByCall: a call that ends the session (the app
// exits under it) says so, and the session takes no more calls.
func TestRulesSessionEndedByCall(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f := &fakeMachine{on: func(f *fakeMachine, in string) { f.exitApp(1) }}
	s, _ := rulesSession(t, ctx, rulesGoal, f)
	res, err := s.Call(ctx, "press_key", map[string]any{"key": "Return"})
	if err != nil || !res.Ended {
		t.Fatalf("press_key that ends the app: %+v %v", res, err)
	}
	select {
	case <-s.Done():
	case <-ctx.Done():
		t.Fatal("the session did not end")
	}
	if _, err := s.Call(ctx, "observe_screen", nil); !errors.Is(err, ErrAgentRunOver) {
		t.Errorf("a call after the end: %v, want ErrSessionOver", err)
	}
}

// TestRulesSessionJudgesTheSuccessCriteria: an outside agent's session
// runs no goal loop, yet the goal's success criteria judge it as they
// judge a model's run: the agent's goal-met does not pass an app whose
// window title never says what the criteria want.
func TestRulesSessionJudgesTheSuccessCriteria(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	scenario := rulesGoal + "success:\n  within_s: 0.1\n  window_title: {contains: Saved}\n"
	s, _ := rulesSession(t, ctx, scenario, &fakeMachine{title: "Main"})
	if obs, err := s.Call(ctx, "observe_screen", nil); err != nil || obs.Status != events.StatusOK {
		t.Fatalf("observe_screen: %+v %v", obs, err)
	}
	res, err := s.Close(ctx, events.ModelGoalMet, "saved")
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != events.VerdictAppFailed || res.Outcome != OutcomeSuccessFailed {
		t.Errorf("verdict %s (%s), want app-failed (%s); reasons %q", res.Verdict, res.Outcome, OutcomeSuccessFailed, res.Reasons)
	}
	if why := strings.Join(res.Reasons, "\n"); !strings.Contains(why, `success.window_title failed: expected the window title contains "Saved"`) {
		t.Errorf("reasons %q, want the failed criterion", res.Reasons)
	}
}
