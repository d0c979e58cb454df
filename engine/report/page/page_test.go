package page

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/engine/events"
)

var update = flag.Bool("update", false, "rewrite the golden pages under testdata/")

// fixtureEvents is a short goal run with a grounded click, a refusal, a
// question and hostile text in every place a run can carry it.
func fixtureEvents() []events.Event {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	hostile := "<script>alert(1)</script>\"><img src=x onerror=alert(2)>\x1b]0;t\x07\u202e"
	pt := &events.Point{X: 40, Y: 30}
	evs := []events.Event{
		{T: at(0), Kind: events.KindRunStarted, Data: events.RunStarted{Scenario: "fixture " + hostile, File: "f.yaml", Mode: "goal", Goal: "g " + hostile, Plan: []string{"p1"}, DeadlineS: 60}},
		{T: at(10), Kind: events.KindDisplayStarted, Data: events.DisplayStarted{Display: ":9", Owned: true, Width: 100, Height: 80}},
		{T: at(20), Kind: events.KindAppWindow, Box: &events.Rect{W: 100, H: 80}, Data: events.AppWindow{ID: "0x1", Title: hostile, Class: "X"}},
		{T: at(30), Kind: events.KindScreen, Screen: "screens/0001.png", Data: events.ScreenCaptured{Width: 100, Height: 80}},
		{T: at(40), Kind: events.KindModelRequest, Data: events.ModelRequest{Iteration: 1, Messages: 2, Images: 1, ImageBytes: 9}},
		{T: at(50), Kind: events.KindModelReply, Message: "prose " + hostile, DurationMS: 10, Usage: map[string]float64{"total_tokens": 12}, Data: events.ModelReply{Calls: 1, Attempts: 1}},
		{T: at(60), Kind: events.KindStepEnded, Step: 1, Tool: "click", Args: map[string]any{"target": "center"}, Source: events.SourceModel, Status: events.StatusRefused, Message: "refused " + hostile},
		{T: at(70), Kind: events.KindStepStarted, Step: 2, Tool: "click_grounded", Args: map[string]any{"description": hostile}, Source: events.SourceModel},
		{T: at(80), Kind: events.KindScreen, Screen: "screens/0002.png", Data: events.ScreenCaptured{Width: 100, Height: 80}},
		{T: at(85), Kind: events.KindGrounding, Step: 2, Point: &events.Point{X: 55, Y: 20}, Screen: "screens/0001.png", Grounding: &events.Grounding{Step: 2, Attempt: 1, Description: hostile, Expect: "e", Point: &events.Point{X: 55, Y: 20}, Outcome: events.GroundingLocated, Reason: "whole screen", Before: "screens/0001.png", Pass: 1}},
		{T: at(90), Kind: events.KindGrounding, Step: 2, Point: pt, Screen: "screens/0002.png", Grounding: &events.Grounding{Step: 2, Attempt: 1, Description: hostile, Expect: "e", Point: pt, Outcome: events.GroundingConfirmed, Reason: "r " + hostile, Before: "screens/0001.png", After: "screens/0002.png", Pass: 2, Crop: &events.Rect{X: 30, Y: 0, W: 50, H: 50}}},
		{T: at(100), Kind: events.KindStepEnded, Step: 2, Tool: "click_grounded", Args: map[string]any{"description": hostile}, Source: events.SourceModel, Status: events.StatusOK, Message: "ok", Screen: "screens/0002.png", Point: pt, DurationMS: 30},
		{T: at(110), Kind: events.KindBudget, Budgets: []events.Budget{{Name: "iterations", Used: 2, Limit: 10}}},
		{T: at(120), Kind: events.KindQuestion, Question: &events.Question{ID: "q1", Text: "q " + hostile}},
		{T: at(130), Kind: events.KindAnswer, Question: &events.Question{ID: "q1", Text: "q " + hostile, Answer: "a " + hostile, By: "console"}},
		{T: at(140), Kind: events.KindConcern, Message: "concern " + hostile},
		{T: at(145), Kind: events.KindConsole, Data: events.ConsoleMessage{Level: "error", Source: "console", Text: "console " + hostile, URL: "http://x/" + hostile, Line: 3}},
		{T: at(150), Kind: events.KindScreen, Screen: "screens/0003.png", Data: events.ScreenCaptured{Width: 100, Height: 80}},
		{T: at(150), Kind: events.KindFinal, Screen: "screens/0003.png", Data: events.FinalCapture{Width: 100, Height: 80, Ending: "completed"}},
		{T: at(160), Kind: events.KindVerdict, Verdict: &events.Decision{Verdict: events.VerdictPassConcerns, Outcome: "completed", Reasons: []string{"why " + hostile}}},
		{T: at(170), Kind: events.KindRunEnded, Data: events.RunEnded{Report: "r"}},
	}
	for i := range evs {
		evs[i].Seq = int64(i + 1)
	}
	return evs
}

func writeFixture(t *testing.T, evs []events.Event, appLog string) string {
	t.Helper()
	dir := t.TempDir()
	var b strings.Builder
	for _, e := range evs {
		line, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(filepath.Join(dir, "events.jsonl"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "app.log"), []byte(appLog), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestPageGolden renders the fixture run and compares it with the golden
// page, so a change to what the page shows is a reviewed change.
func TestPageGolden(t *testing.T) {
	t.Parallel()
	dir := writeFixture(t, fixtureEvents(), "started\n\x1b[31mred <b>bold</b>\n")
	if err := Write(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "fixture.golden.html")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("report.html differs from %s; run go test ./engine/report/page -update and review the diff", golden)
	}
}

// TestPageEscapesEverything: no string from a run becomes markup, a
// control character or a reordering of the text around it.
func TestPageEscapesEverything(t *testing.T) {
	t.Parallel()
	dir := writeFixture(t, fixtureEvents(), "\x1b[31mred <b>bold</b>\n")
	if err := Write(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, bad := range []string{"<script>alert", "<img src=x", "<b>bold", "\x1b", "\x07", "\u202e"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q raw", bad)
		}
	}
	if n := strings.Count(page, "<script>"); n != 1 {
		t.Errorf("%d script elements, want the page's own", n)
	}
	for _, want := range []string{`&lt;script&gt;alert(1)&lt;/script&gt;`, `\x1b]0;t\x07\u202e`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page does not show %q", want)
		}
	}
}

// TestPageRedacts: the page's own redaction covers every string it shows,
// over what the report's files already had.
func TestPageRedacts(t *testing.T) {
	t.Parallel()
	const secret = "s3cr3t-Value"
	evs := fixtureEvents()
	evs[5].Message = "the model said " + secret
	evs[6].Args = map[string]any{"text": secret}
	dir := writeFixture(t, evs, "log "+secret+"\n")
	if err := Write(dir, Options{Redact: func(s string) string { return strings.ReplaceAll(s, secret, "[REDACTED]") }}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), secret) {
		t.Error("the page holds the secret")
	}
	if strings.Count(string(b), "[REDACTED]") < 3 {
		t.Error("the page does not show where the secret was")
	}
}

// TestScreenLinks: only the report's own screens are linked; a path an
// edited events.jsonl gives is not.
func TestScreenLinks(t *testing.T) {
	t.Parallel()
	b := &builder{redact: func(s string) string { return s }, sizes: map[string][2]int{"screens/0001.png": {10, 10}}}
	tests := []struct {
		path string
		ok   bool
	}{
		{"screens/0001.png", true},
		{"../secret.png", false},
		{"javascript:alert(1)", false},
		{"screens/0001.png?x", false},
		{"/etc/passwd", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := b.shot(tt.path, nil) != nil; got != tt.ok {
			t.Errorf("shot(%q) linked = %v, want %v", tt.path, got, tt.ok)
		}
	}
	if s := b.shot("screens/0001.png", &events.Point{X: 50, Y: 5}); s.Mark != nil {
		t.Error("a point outside the screen is marked")
	}
	if s := b.shot("screens/0001.png", &events.Point{X: 5, Y: 5}); s.Mark == nil {
		t.Error("a point on the screen is not marked")
	}
}

// TestDamagedStream: a torn or corrupt line still gives a page, which says
// what was skipped.
func TestDamagedStream(t *testing.T) {
	t.Parallel()
	dir := writeFixture(t, fixtureEvents()[:5], "")
	f, err := os.OpenFile(filepath.Join(dir, "events.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"seq":6,"t":"2026`)
	f.Close()
	if err := Write(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, FileName))
	if !strings.Contains(string(b), "line 6 is torn") || !strings.Contains(string(b), "unfinished") {
		t.Errorf("the page of a torn stream does not say so")
	}
}

// TestBaselineSection: a screenshot check that did not match shows the
// baseline, the window and the diff, with a slider between the first two
// and a deep link; an image path the run could not have written is never
// linked.
func TestBaselineSection(t *testing.T) {
	t.Parallel()
	evs := append(fixtureEvents(),
		events.Event{Kind: events.KindBaseline, Step: 2, Data: events.Baseline{Name: "main", Result: events.BaselineDiffers,
			DiffPixels: 145, Pixels: 36000, DiffRatio: 145.0 / 36000, Threshold: 0.1, Width: 300, Height: 120,
			Expected: "baselines/main.expected.png", Actual: "baselines/main.actual.png", Diff: "baselines/main.diff.png"}},
		events.Event{Kind: events.KindBaseline, Step: 3, Data: events.Baseline{Name: "other", Result: events.BaselineDiffers,
			Expected: "../../etc/passwd", Actual: "baselines/x.actual.png?", Diff: "https://example.invalid/d.png"}})
	dir := writeFixture(t, evs, "")
	if err := Write(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, want := range []string{`id="baseline-main"`, `145 of 36000 pixels differ (0.40%`, `<img src="baselines/main.expected.png" alt="baseline" width="300" height="120">`,
		`<img class="over" src="baselines/main.actual.png"`, `src="baselines/main.diff.png"`, `type="range"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	for _, bad := range []string{"etc/passwd", "x.actual.png?", "example.invalid"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page links %q", bad)
		}
	}
}
