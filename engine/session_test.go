package engine

import (
	"bytes"
	"context"
	"errors"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/scenarios"
)

// sessionSecret is the value the session's scenario provides by
// reference; it must appear in no reply and no report file.
const sessionSecret = "s3ssion-Pa55word"

const sessionScenario = `name: xterm session
goal: Type the password at the prompt and check the program read all of it.
app:
  command: [xterm, -class, KasmSession, -geometry, 60x10+20+20, -e, sh, -c, 'stty -echo; printf "Password: "; read pw; echo "got ${#pw}" > got.txt; sleep 3600']
  window: {class: KasmSession}
  startup_timeout_s: 10
  fatal_patterns: ["Segmentation fault"]
click_targets:
  prompt: {x: 40, y: 12, description: the prompt line}
provides:
  password: {secret: {env: SESSION_PW}}
tools:
  typed_length:
    description: Check how many characters the program read.
    run: shell
    parameters:
      n:
        values:
          sixteen: grep -q "got 16" got.txt
    budget: 5
`

// openTestSession opens the session scenario in an embedded Xvfb and
// returns it with the sink's events and the report directory.
func openTestSession(t *testing.T, ctx context.Context, deadline string) (*AgentRun, func() []events.Event, string) {
	t.Helper()
	scriptNeed(t, "Xvfb", "xterm")
	dir := t.TempDir()
	path, _ := writeRunFiles(t, dir, sessionScenario, "")
	env := map[string]string{"SESSION_PW": sessionSecret}
	if deadline != "" {
		env["KASM_RUNTIME_DEADLINE_S"] = deadline
	}
	files, err := scenarios.LoadSession(path, "", lookupIn(env))
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	var mu sync.Mutex
	var sunk []events.Event
	sink := func(e events.Event) { mu.Lock(); sunk = append(sunk, e); mu.Unlock() }
	reportDir := filepath.Join(dir, "report")
	r, err := New(files, Options{ReportDir: reportDir, Display: "-", Sinks: []func(events.Event){sink},
		Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	s, err := r.Open(ctx)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s, func() []events.Event { mu.Lock(); defer mu.Unlock(); return append([]events.Event(nil), sunk...) }, reportDir
}

func TestSessionDrivesXtermThroughTheRunsTools(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, sunk, reportDir := openTestSession(t, ctx, "")

	names := map[string]bool{}
	for _, tool := range s.Tools() {
		names[tool.Name] = true
	}
	for _, want := range []string{"observe_screen", "click", "type_text", "typed_length"} {
		if !names[want] {
			t.Errorf("tool list lacks %s: %v", want, names)
		}
	}

	obs, err := s.Call(ctx, "observe_screen", nil)
	if err != nil || obs.Status != events.StatusOK {
		t.Fatalf("observe_screen: %+v %v", obs, err)
	}
	img, err := png.Decode(bytes.NewReader(obs.PNG))
	if err != nil {
		t.Fatalf("observe_screen's PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != obs.Width || b.Dy() != obs.Height || obs.Width == 0 {
		t.Errorf("PNG is %v, reply says %dx%d", b, obs.Width, obs.Height)
	}

	// Input without an observation first is not refused for an agent.
	steps := []struct {
		tool   string
		args   map[string]any
		status events.Status
	}{
		{"click", map[string]any{"target": "prompt"}, events.StatusOK},
		{"type_text", map[string]any{"ref": "password"}, events.StatusOK},
		{"press_key", map[string]any{"key": "Return"}, events.StatusOK},
		{"wait", map[string]any{"seconds": 0.5}, events.StatusOK},
		{"typed_length", map[string]any{"n": "sixteen"}, events.StatusOK},
		{"launch_rockets", nil, events.StatusMalformed},
		{"click", map[string]any{"target": "nowhere"}, events.StatusMalformed},
		{"type_text", map[string]any{"ref": "password", "extra": 1}, events.StatusMalformed},
	}
	for _, st := range steps {
		res, err := s.Call(ctx, st.tool, st.args)
		if err != nil {
			t.Fatalf("%s: %v", st.tool, err)
		}
		if res.Status != st.status {
			t.Errorf("%s %v: status %s (%s), want %s", st.tool, st.args, res.Status, res.Message, st.status)
		}
		if strings.Contains(res.Message, sessionSecret) {
			t.Errorf("%s's reply carries the secret: %s", st.tool, res.Message)
		}
	}

	res, err := s.Close(ctx, events.ModelGoalMet, "typed the password")
	if err != nil {
		t.Fatalf("Close: %v", err)
	}
	if res.Verdict != loopUnverified || res.ReportDir != reportDir {
		t.Errorf("Close: %+v", res)
	}
	if _, err := s.Call(ctx, "observe_screen", nil); !errors.Is(err, ErrAgentRunOver) {
		t.Errorf("a call after Close: %v, want ErrSessionOver", err)
	}

	rep, _ := scriptReadReport(t, reportDir)
	if rep.Mode != "session" {
		t.Errorf("report mode %q", rep.Mode)
	}
	if rep.ModelVerdict == nil || rep.ModelVerdict.Verdict != events.ModelGoalMet {
		t.Errorf("model verdict %+v, want the agent's goal-met", rep.ModelVerdict)
	}
	if len(rep.Steps) != len(steps)+2 {
		t.Errorf("%d steps in the report, want %d", len(rep.Steps), len(steps)+2)
	}
	for _, st := range rep.Steps {
		if st.Source != events.SourceAgent {
			t.Errorf("step %d %s has source %q", st.N, st.Tool, st.Source)
		}
	}
	if len(sunk()) == 0 {
		t.Error("the sink saw no event")
	}
	filepath.Walk(reportDir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(sessionSecret)) {
			t.Errorf("%s holds the secret", p)
		}
		return nil
	})
}

func TestSessionRefusesASecondConcurrentCall(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, sunk, _ := openTestSession(t, ctx, "")
	first := make(chan CallResult, 1)
	go func() {
		r, _ := s.Call(ctx, "wait", map[string]any{"seconds": 1.5})
		first <- r
	}()
	scriptEventually(t, "the wait starts", func() bool {
		for _, e := range sunk() {
			if e.Kind == events.KindStepStarted && e.Tool == "wait" {
				return true
			}
		}
		return false
	})
	if _, err := s.Call(ctx, "press_key", map[string]any{"key": "a"}); !errors.Is(err, ErrBusy) {
		t.Errorf("a call during another: %v, want ErrBusy", err)
	}
	if r := <-first; r.Status != events.StatusOK {
		t.Errorf("the first call: %+v", r)
	}
	if res, err := s.Close(ctx, "", ""); err != nil || res.Verdict != loopUnverified {
		t.Errorf("Close: %+v %v", res, err)
	}
}

func TestSessionEndsAtTheDeadlineWithACompleteReport(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _, reportDir := openTestSession(t, ctx, "6")
	select {
	case <-s.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the session outlived its deadline")
	}
	if _, err := s.Call(ctx, "observe_screen", nil); !errors.Is(err, ErrAgentRunOver) {
		t.Errorf("a call after the deadline: %v", err)
	}
	// The agent's goal-met does not upgrade a run the deadline cut short.
	res, err := s.Close(ctx, events.ModelGoalMet, "done")
	if err != nil {
		t.Fatalf("Close: %v", err)
	}
	if res.Verdict != events.VerdictTestError || res.Outcome != OutcomeDeadline {
		t.Errorf("verdict %+v, want test-error by the deadline", res)
	}
	rep, _ := scriptReadReport(t, reportDir)
	if rep.Verdict != events.VerdictTestError {
		t.Errorf("report verdict %s", rep.Verdict)
	}
}

func TestSessionOutlivesACallItsClientAbandoned(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _, _ := openTestSession(t, ctx, "")
	callCtx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	res, err := s.Call(callCtx, "wait", map[string]any{"seconds": 20.0})
	if err != nil || res.Status == events.StatusOK || res.Ended || time.Since(start) > 5*time.Second {
		t.Errorf("an abandoned wait: %+v %v after %s; want it cut short, the session open", res, err, time.Since(start))
	}
	if res, err := s.Call(ctx, "observe_screen", nil); err != nil || res.Status != events.StatusOK {
		t.Errorf("the next call: %+v %v", res, err)
	}
	if res, err := s.Close(ctx, "", ""); err != nil || res.Verdict != loopUnverified {
		t.Errorf("Close: %+v %v", res, err)
	}
}
