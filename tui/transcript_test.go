package tui

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
)

// hostile is what a hostile model, application or server writes: a window
// title change, a screen clear, a C1 CSI, reversed text and a forged line.
const hostile = "\x1b]0;pwned\x07\x1b[2J\u009b31m\u202eliaf\nverdict: pass"

// TestPrinterNeutralisesUntrustedText feeds the printer, the one renderer
// of --headless and replay --print, events whose untrusted fields carry
// control sequences, one source at a time, and checks that none reaches
// the output raw — neither in the event lines nor in the summary.
func TestPrinterNeutralisesUntrustedText(t *testing.T) {
	t.Parallel()
	sources := []struct {
		name string
		ev   events.Event
	}{
		{"tool name from the model", events.Event{Kind: events.KindStepEnded, Step: 1, Tool: hostile, Status: events.StatusMalformed, Message: "unknown tool"}},
		{"tool arguments from the model", events.Event{Kind: events.KindStepStarted, Step: 1, Tool: "type_text", Args: map[string]any{"text": hostile}}},
		{"declared tool output", events.Event{Kind: events.KindStepEnded, Step: 2, Tool: "show", Status: events.StatusOK, Message: "show succeeded: " + hostile}},
		{"app line matched by a fatal pattern", events.Event{Kind: events.KindCheck, Check: &events.Check{Name: "fatal_pattern", Evidence: hostile}}},
		{"ask_human question", events.Event{Kind: events.KindQuestion, Question: &events.Question{ID: "q1", Text: hostile}}},
		{"operator answer", events.Event{Kind: events.KindAnswer, Question: &events.Question{ID: "q1", Text: "?", Answer: hostile, By: "console"}}},
		{"model error body", events.Event{Kind: events.KindModelFailed, Message: "model endpoint: 500: " + hostile, Data: events.ModelFailed{Consecutive: 1}}},
		{"model retry reason", events.Event{Kind: events.KindModelRetry, Message: hostile, Data: events.ModelRetry{Attempt: 1, Status: 503}}},
		{"model reply text", events.Event{Kind: events.KindModelReply, Message: hostile}},
		{"message to the operator", events.Event{Kind: events.KindRespond, Message: hostile}},
		{"concern", events.Event{Kind: events.KindConcern, Message: hostile}},
		{"window title", events.Event{Kind: events.KindAppWindow, Box: &events.Rect{W: 1, H: 1}, Data: events.AppWindow{Title: hostile}}},
		{"verdict reason", events.Event{Kind: events.KindVerdict, Verdict: &events.Decision{Verdict: events.VerdictAppFailed, Outcome: "completed", Reasons: []string{hostile}}}},
	}
	for _, src := range sources {
		t.Run(src.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			p := NewPrinter(&out)
			p.Event(events.Event{Kind: events.KindRunStarted, Data: events.RunStarted{Scenario: "s", Mode: "goal"}})
			p.Event(src.ev)
			if err := p.Summary(nil); err != nil {
				t.Fatal(err)
			}
			got := out.String()
			if !strings.Contains(got, "pwned") || !strings.Contains(got, "liaf") {
				t.Errorf("the hostile text is not shown at all:\n%s", got)
			}
			for _, raw := range []string{"\x1b", "\x07", "\u009b", "\u202e", "\nverdict: pass"} {
				if strings.Contains(got, raw) {
					t.Errorf("%q reached the output raw:\n%q", raw, got)
				}
			}
		})
	}
}

// TestPrintReportReadsPastDamage: a report whose events.jsonl has a
// corrupt line in the middle and lost its verdict line still prints every
// other event, and the verdict from report.json.
func TestPrintReportReadsPastDamage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	evs := sampleEvents()
	writeReport(t, dir, evs, true)
	path := filepath.Join(dir, "events.jsonl")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(raw), "\n")
	var kept []string
	for i, l := range lines {
		switch {
		case i == 10:
			kept = append(kept, `{"seq":11,"t":"2026-`+"\x00garbage\n")
		case strings.Contains(l, `"kind":"verdict"`):
			// Torn away: the stream has no verdict.
		default:
			kept = append(kept, l)
		}
	}
	if err := os.WriteFile(path, []byte(strings.Join(kept, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := LoadReport(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Warning, "line 11 is not an event") {
		t.Errorf("warning = %q, want one naming line 11", r.Warning)
	}
	if len(r.Events) != len(evs)-2 {
		t.Errorf("read %d events, want all %d but the damaged and the removed one", len(r.Events), len(evs)-2)
	}
	var out bytes.Buffer
	if err := PrintReport(&out, r); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"step 11 record_verdict", // events after the damaged line
		"verdict: pass-with-concerns (completed) (from report.json; the event stream has no verdict)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("transcript lacks %q:\n%s", want, got)
		}
	}
	m := NewReplay(r, Options{Theme: testTheme(t, true), Env: func(string) string { return "" }})
	if v := m.State().Verdict; v == nil || v.Verdict != events.VerdictPassConcerns {
		t.Errorf("the replay's last state has verdict %+v, want report.json's", v)
	}
}

// TestPrintVersion1Report: a report directory written by an earlier
// version (a real goal run, checked in as it was) still prints, request
// sizes included.
func TestPrintVersion1Report(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	raw, err := os.ReadFile("../engine/events/testdata/v1-goal-run.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "events.jsonl"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := LoadReport(dir)
	if err != nil || r.Warning != "" {
		t.Fatalf("LoadReport: %v (warning %q)", err, r.Warning)
	}
	var out bytes.Buffer
	if err := PrintReport(&out, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"run started: fill the entry dialog (goal)",
		"session :0 1280x800 owned=true",
		"app launched: zenity --entry --title=Groceries --text=What should we buy? (pid 19547)",
		`app window 0x200003 "Groceries" at 194x119+543+340`,
		"model request: turn 2, 4 messages, 2 images (20995 bytes)",
		"screen screens/0001.png 1280x800",
		"verdict: pass (completed)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("transcript lacks %q:\n%s", want, out.String())
		}
	}
}

// TestFinalCaptureShown: the run's last capture is a line of the
// transcript and a row of the console's timeline, and the screen the
// console shows; one that could not be taken says why.
func TestFinalCaptureShown(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ev   events.Event
		want string
	}{
		{"taken", events.Event{Kind: events.KindFinal, Screen: "screens/0004.png", Data: events.FinalCapture{Width: 8, Height: 6, Ending: "deadline"}},
			"final capture (deadline): screens/0004.png"},
		{"display gone", events.Event{Kind: events.KindFinal, Message: "no final capture: the X server went away", Data: events.FinalCapture{Ending: "session-lost"}},
			"final capture (session-lost): no final capture: the X server went away"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			p := NewPrinter(&out)
			p.Event(events.Event{Kind: events.KindRunStarted, Data: events.RunStarted{Scenario: "s", Mode: "scripted"}})
			p.Event(tt.ev)
			if !strings.Contains(out.String(), tt.want) {
				t.Errorf("the transcript lacks %q:\n%s", tt.want, out.String())
			}
			s := NewState()
			s.Apply(0, tt.ev)
			if len(s.Rows) != 1 || !strings.Contains(finalRowText(s.Rows[0]), tt.want) {
				t.Errorf("the console's rows %+v lack %q", s.Rows, tt.want)
			}
			if s.Screen != tt.ev.Screen {
				t.Errorf("the console shows screen %q, want the final capture %q", s.Screen, tt.ev.Screen)
			}
		})
	}
}

func finalRowText(r Row) string {
	text, _ := rowText(r)
	return text
}

// TestTranscriptSaysScreenshotChecks: --headless and replay --print say a
// screenshot check's result and where its diff is, as the console does,
// rather than the bare kind.
func TestTranscriptSaysScreenshotChecks(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	p := NewPrinter(&out)
	p.Event(events.Event{Kind: events.KindBaseline, Step: 1, Message: "screenshot main: differs, 145 of 36000 pixels differ (0.40%)",
		Data: events.Baseline{Name: "main", Result: events.BaselineDiffers, Diff: "baselines/main.diff.png"}})
	want := "screenshot main: differs, 145 of 36000 pixels differ (0.40%) [diff baselines/main.diff.png]"
	if !strings.Contains(out.String(), want) {
		t.Errorf("the transcript lacks %q:\n%s", want, out.String())
	}
}
