package tui

import (
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/engine/events"
)

// sampleStart is the fixed start of the sample run, so rendered output is
// the same on every machine.
var sampleStart = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// sampleEvents is a small run with one of everything the console shows: a
// refusal, a malformed reply, a grounded click with before/after screens,
// a question and its answer, a concern, steering and a verdict.
func sampleEvents() []events.Event {
	at := func(ms int) time.Time { return sampleStart.Add(time.Duration(ms) * time.Millisecond) }
	budgets := func(iter, errs float64) []events.Budget {
		return []events.Budget{
			{Name: "iterations", Used: iter, Limit: 8},
			{Name: "malformed", Used: 1, Limit: 3},
			{Name: "tool_errors", Used: errs, Limit: 3},
			{Name: "tokens", Used: 5120, Limit: 0},
		}
	}
	evs := []events.Event{
		{Kind: events.KindRunStarted, Data: events.RunStarted{Scenario: "save-dialog", Mode: "agentic", Goal: "save the file", DeadlineS: 600}},
		{Kind: events.KindSessionStarted, Data: events.SessionStarted{Display: ":99", Owned: true, Width: 320, Height: 200}},
		{Kind: events.KindAppLaunched, Data: events.AppLaunched{PID: 4242, Command: []string{"zenity", "--question"}}},
		{Kind: events.KindScreen, Screen: "screens/0001.png", Data: events.ScreenCaptured{Width: 320, Height: 200}},
		{Kind: events.KindModelRequest, Data: events.ModelRequest{Iteration: 1, Messages: 1, Images: 1, ImageBytes: 2048}},
		{Kind: events.KindModelReply, DurationMS: 900, Message: "clicking save"},
		{Kind: events.KindStepEnded, Step: 1, Tool: "click", Args: map[string]any{"target": "center"}, Status: events.StatusRefused, Message: "observe_screen must come before click: no observation since the last action"},
		{Kind: events.KindBudget, Budgets: budgets(1, 0)},
		{Kind: events.KindStepStarted, Step: 2, Tool: "observe_screen", Args: map[string]any{}, Source: "model"},
		{Kind: events.KindStepEnded, Step: 2, Tool: "observe_screen", Args: map[string]any{}, Status: events.StatusOK, Screen: "screens/0001.png", DurationMS: 40},
		{Kind: events.KindStepEnded, Step: 3, Tool: "clik", Status: events.StatusMalformed, Message: `unknown tool "clik"; tools are: click, click_grounded, observe_screen`},
		{Kind: events.KindStepStarted, Step: 4, Tool: "click_grounded", Args: map[string]any{"description": "the Save button", "expect": "the dialog closes"}, Source: "model"},
		{Kind: events.KindGrounding, Grounding: &events.Grounding{Step: 4, Attempt: 1, Description: "the Save button", Expect: "the dialog closes", Point: &events.Point{X: 240, Y: 150}, Outcome: events.GroundingConfirmed, Before: "screens/0001.png", After: "screens/0002.png"}, Point: &events.Point{X: 240, Y: 150}, Box: &events.Rect{X: 210, Y: 135, W: 60, H: 30}, Screen: "screens/0002.png"},
		{Kind: events.KindStepEnded, Step: 4, Tool: "click_grounded", Args: map[string]any{"description": "the Save button", "expect": "the dialog closes"}, Status: events.StatusOK, Screen: "screens/0002.png", DurationMS: 2300, Point: &events.Point{X: 240, Y: 150}},
		{Kind: events.KindQuestion, Question: &events.Question{ID: "q1", Text: "Which folder should the file go to?"}},
		{Kind: events.KindSteer, Steer: &events.Steer{Action: events.SteerPause}},
		{Kind: events.KindAnswer, Question: &events.Question{ID: "q1", Text: "Which folder should the file go to?", Answer: "~/Documents", By: "operator"}},
		{Kind: events.KindSteer, Steer: &events.Steer{Action: events.SteerResume}},
		{Kind: events.KindConcern, Message: "the dialog took 2.3 s to close"},
		{Kind: events.KindRespond, Message: "Saved to ~/Documents."},
		{Kind: events.KindBudget, Budgets: budgets(4, 1)},
		{Kind: events.KindCheck, Check: &events.Check{Name: "process_alive", OK: true}},
		{Kind: events.KindLoopEnded, Message: "record_verdict goal-met"},
		{Kind: events.KindVerdict, Verdict: &events.Verdict{Verdict: events.VerdictPassConcerns, Outcome: "completed", Reasons: []string{"all checks passed", "concern: the dialog took 2.3 s to close"}}},
		{Kind: events.KindRunEnded, Data: events.RunEnded{Report: "report.json"}},
	}
	for i := range evs {
		evs[i].Seq = int64(i + 1)
		evs[i].T = at(i * 700)
	}
	return evs
}

// sampleScreen draws a recognisable 320×200 capture: a coloured gradient
// with a dark "dialog" and, in the second capture, the dialog gone.
func sampleScreen(n int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, 320, 200))
	for y := 0; y < 200; y++ {
		for x := 0; x < 320; x++ {
			img.Set(x, y, color.RGBA{R: uint8(x * 255 / 320), G: uint8(y * 255 / 200), B: 160, A: 255})
		}
	}
	if n == 1 {
		for y := 40; y < 170; y++ {
			for x := 40; x < 290; x++ {
				img.Set(x, y, color.RGBA{R: 30, G: 30, B: 40, A: 255})
			}
		}
		for y := 135; y < 165; y++ {
			for x := 210; x < 270; x++ {
				img.Set(x, y, color.RGBA{R: 40, G: 160, B: 60, A: 255})
			}
		}
	}
	return img
}

// writeReport writes a report directory for evs with the two sample
// screens; report.json only when withSummary.
func writeReport(tb testing.TB, dir string, evs []events.Event, withSummary bool) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "screens"), 0o755); err != nil {
		tb.Fatal(err)
	}
	for n := 1; n <= 2; n++ {
		f, err := os.Create(filepath.Join(dir, "screens", []string{"", "0001.png", "0002.png"}[n]))
		if err != nil {
			tb.Fatal(err)
		}
		if err := png.Encode(f, sampleScreen(n)); err != nil {
			tb.Fatal(err)
		}
		f.Close()
	}
	f, err := os.Create(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	enc := json.NewEncoder(f)
	for _, e := range evs {
		if err := enc.Encode(e); err != nil {
			tb.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	if withSummary {
		data := []byte(`{"schema":"kasmrt.report/v1","verdict":"pass-with-concerns","outcome":"completed"}`)
		if err := os.WriteFile(filepath.Join(dir, "report.json"), data, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// TestWriteSampleReport writes the sample report to $KASMRT_SAMPLE_REPORT
// for trying the console by hand; without the variable it only checks that
// the sample loads back.
func TestWriteSampleReport(t *testing.T) {
	t.Parallel()
	dir := os.Getenv("KASMRT_SAMPLE_REPORT")
	if dir == "" {
		dir = t.TempDir()
	}
	writeReport(t, dir, sampleEvents(), true)
	r, err := LoadReport(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Events) != len(sampleEvents()) || r.Summary["verdict"] != "pass-with-concerns" {
		t.Fatalf("loaded %d events, summary %v", len(r.Events), r.Summary)
	}
}
