package report

import (
	"encoding/json"
	"image"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/engine/events"
)

func TestFoldFillsEveryField(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	evs := []events.Event{
		{Seq: 1, T: at(0), Kind: events.KindRunStarted, Data: events.RunStarted{Scenario: "s", File: "s.yaml", SHA256: "ab", Mode: "goal",
			Goal: "g", Plan: []string{"p1"}, Tools: []string{"observe_screen", "wait"}, DeadlineS: 600}},
		{Seq: 2, T: at(1), Kind: events.KindTools, Data: events.ToolList{Tools: []string{"click_element", "observe_screen", "wait"}}},
		{Seq: 3, T: at(1), Kind: events.KindScreen, Screen: "screens/0001.png"},
		{Seq: 4, T: at(1), Kind: events.KindStepStarted, Step: 1, Tool: "observe_screen"},
		{Seq: 5, T: at(2), Kind: events.KindStepEnded, Step: 1, Tool: "observe_screen", Status: "ok", DurationMS: 1000, Screen: "screens/0001.png"},
		{Seq: 6, T: at(2), Kind: events.KindModelReply, Usage: map[string]float64{"prompt_tokens": 100, "completion_tokens": 5}},
		{Seq: 7, T: at(3), Kind: events.KindModelReply, Usage: map[string]float64{"prompt_tokens": 50, "completion_tokens": 5}},
		{Seq: 8, T: at(3), Kind: events.KindGrounding, Grounding: &events.Grounding{Step: 2, Attempt: 1, Description: "OK", Expect: "closes", Outcome: "confirmed"}},
		{Seq: 9, T: at(3), Kind: events.KindStepEnded, Step: 2, Tool: "record_verdict", Status: "ok", Args: map[string]any{"verdict": "goal-met", "reason": "done"}},
		{Seq: 10, T: at(3), Kind: events.KindConcern, Message: "c1"},
		{Seq: 11, T: at(3), Kind: events.KindQuestion, Question: &events.Question{ID: "q1", Text: "which?"}},
		{Seq: 12, T: at(4), Kind: events.KindAnswer, Question: &events.Question{ID: "q1", Text: "which?", Answer: "this", By: "console"}},
		{Seq: 13, T: at(4), Kind: events.KindSteer, Steer: &events.Steer{Action: "pause"}},
		{Seq: 14, T: at(4), Kind: events.KindCheck, Check: &events.Check{Name: "process_alive", OK: true}},
		{Seq: 15, T: at(4), Kind: events.KindCheck, Check: &events.Check{Name: "window_present", OK: false, Evidence: "gone"}},
		{Seq: 16, T: at(4), Kind: events.KindCheck, Check: &events.Check{Name: "fatal_pattern", OK: false, Evidence: "Segmentation fault"}},
		{Seq: 17, T: at(4), Kind: events.KindLoopEnded, Message: "verdict", Data: events.LoopEnded{Iterations: 2, Malformed: 1, ToolErrors: 0, Rescued: 1}},
		{Seq: 18, T: at(4), Kind: events.KindVerdict, Verdict: &events.Decision{Verdict: "app-failed", Outcome: "completed", Reasons: []string{"r"}}},
		{Seq: 19, T: at(5), Kind: events.KindAppWindows, Message: "no window", Data: events.AppWindows{Match: "x"}},
		{Seq: 20, T: at(5), Kind: events.KindFinal, Screen: "screens/0002.png", Data: events.FinalCapture{Width: 4, Height: 3, Ending: "completed"}},
		{Seq: 21, T: at(5), Kind: events.KindRunEnded},
	}
	r := Fold(evs)
	checks := []struct {
		name      string
		got, want any
	}{
		{"schema", r.Schema, Schema},
		{"scenario", r.Scenario, ScenarioInfo{Name: "s", File: "s.yaml", SHA256: "ab"}},
		{"tools as decided at launch", strings.Join(r.Tools, ","), "click_element,observe_screen,wait"},
		{"plan", strings.Join(r.Plan, ","), "p1"},
		{"steps", len(r.Steps), 2},
		{"step 1 started", r.Steps[0].Started, at(1)},
		{"step 2 args never nil", r.Steps[1].Args["verdict"], "goal-met"},
		{"model verdict", *r.ModelVerdict, ModelVerdict{Verdict: "goal-met", Reason: "done"}},
		{"usage summed", r.Usage.Total["prompt_tokens"], 150.0},
		{"usage calls", r.Usage.Calls, 2},
		{"grounding", r.Grounding[0].Outcome, "confirmed"},
		{"question answered", r.Questions[0].Answer, "this"},
		{"steering", r.Steering[0].Action, "pause"},
		{"process alive", *r.Checks.ProcessAlive, true},
		{"window present", *r.Checks.WindowPresent, false},
		{"fatal line", *r.Checks.FatalPattern, "Segmentation fault"},
		{"loop", r.Loop, Loop{Iterations: 2, Malformed: 1, Rescued: 1, Ended: "verdict"}},
		{"verdict", string(r.Verdict) + "/" + string(r.Outcome), "app-failed/completed"},
		{"ended", *r.Timing.Ended, at(5)},
		{"deadline", r.Timing.DeadlineS, 600.0},
		// The final capture is announced by its own event alone.
		{"screens", r.Screens, 2},
		{"final", r.Final.Screen + " " + string(r.Final.Ending), "screens/0002.png completed"},
		// report.json lists the windows seen even when there were none.
		{"startup windows a list", r.Startup.Windows != nil && len(r.Startup.Windows) == 0, true},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

// TestEmptyReportHasEveryField: a run that ended before anything happened
// still writes every field, with lists empty rather than null.
func TestEmptyReportHasEveryField(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(NewBuilder().Report())
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"schema", "scenario", "verdict", "outcome", "model_verdict", "concerns", "checks", "loop", "tools", "steps", "grounding", "usage", "timing"} {
		if _, ok := m[k]; !ok {
			t.Errorf("report.json lacks %q", k)
		}
	}
	for _, k := range []string{"concerns", "tools", "steps", "grounding"} {
		if m[k] == nil {
			t.Errorf("%s is null, want an empty list", k)
		}
	}
}

func TestWriterRedactsAndWritesAtomically(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "r")
	redact := func(s string) string { return strings.ReplaceAll(s, "hunter2", "[REDACTED]") }
	w, err := Create(dir, redact)
	if err != nil {
		t.Fatal(err)
	}
	w.Event(events.Event{Seq: 1, Kind: events.KindRunStarted, Data: events.RunStarted{Scenario: "pw hunter2"}})
	if _, err := w.AppLog().Write([]byte("login with hunter2\n")); err != nil {
		t.Fatal(err)
	}
	rel, _, err := w.SaveScreen(image.NewRGBA(image.Rect(0, 0, 4, 3)))
	if err != nil || rel != "screens/0001.png" {
		t.Fatalf("SaveScreen = %q, %v", rel, err)
	}
	if err := w.WriteReport(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"events.jsonl", "app.log", "report.json"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "hunter2") || !strings.Contains(string(b), "[REDACTED]") {
			t.Errorf("%s is not redacted:\n%s", name, b)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, rel)); err != nil {
		t.Error(err)
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, ".report-*"))
	if len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}

// TestStepStartWithoutItsStartEvent: a step whose step.started is missing
// (a damaged stream) starts its duration before its end.
func TestStepStartWithoutItsStartEvent(t *testing.T) {
	t.Parallel()
	end := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	r := Fold([]events.Event{{Kind: events.KindStepEnded, T: end, Step: 1, Tool: "wait", Status: events.StatusOK, DurationMS: 1500}})
	if len(r.Steps) != 1 || !r.Steps[0].Started.Equal(end.Add(-1500*time.Millisecond)) {
		t.Errorf("steps %+v, want one started 1.5 s before %v", r.Steps, end)
	}
}
