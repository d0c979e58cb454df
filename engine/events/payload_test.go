package events

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/internal/plant"
)

// payloadSamples has one filled-in payload of every type a kind carries.
func payloadSamples() []Payload {
	return []Payload{
		RunStarted{Scenario: "s", File: "s.yaml", SHA256: "ab", Mode: "goal", Goal: "g", Plan: []string{"p"}, DeadlineS: 600, ReserveS: 30, Tools: []string{"wait"}, Steps: 2},
		DisplayStarted{Display: ":99", Owned: true, Width: 1280, Height: 800, Kept: true},
		AppLaunched{PID: 42, Command: []string{"xterm", "-e", "sh"}, Browser: "launch", Headless: true},
		AppWindow{ID: "0x200003", Title: "Groceries", Class: "Zenity"},
		ToolList{Tools: []string{"click", "wait"}, ATSPIControls: 2, CDPTab: true},
		ScreenCaptured{Width: 1280, Height: 800, Settled: true, Window: &Rect{X: 438, Y: 340, W: 404, H: 120}},
		FinalCapture{Width: 1280, Height: 800, Ending: "deadline", Window: &Rect{X: 1, Y: 2, W: 3, H: 4}},
		ModelRequest{Iteration: 3, Messages: 6, Images: 2, ImageBytes: 20995, Tools: []string{"click", "observe_screen"},
			Update: "Environment Update\nscreen-2 (newest)", Sent: []SentMessage{{Role: "tool", Text: "clicked (10,20)", Images: 1}}},
		ModelReply{Calls: 1, Attempts: 2},
		ModelRetry{Attempt: 1, Status: 429, DelayMS: 2000},
		ModelFailed{Consecutive: 2},
		LoopEnded{Iterations: 5, Malformed: 1, ToolErrors: 2, Rescued: 1},
		RunEnded{Report: "reports/x"},
		AppWindows{Match: `class "Wrong"`, TimeoutS: 1.5, Suggestion: "app.window: {class: XTerm}", NoScreen: "gone",
			Windows: []WindowSeen{{ID: "0x1", Title: "t", Class: "XTerm", Instance: "xterm", PID: 7, X: 1, Y: 2, Width: 3, Height: 4, Viewable: true, Application: true}}},
		AppHung{Window: `0x200003 "Save As"`, TimeoutS: 10, NoScreen: "gone",
			Windows: []WindowSeen{{ID: "0x1", Title: "t", Class: "Mousepad", Instance: "mousepad", PID: 7, X: 1, Y: 2, Width: 3, Height: 4, Viewable: true, Application: true}},
			Threads: []ThreadSeen{{PID: 7, TID: 8, Name: "mousepad", State: "S", WChan: "futex_wait_queue"}}},
		ConsoleMessage{Level: "error", Source: "network", Text: "Failed to load resource", URL: "http://x/", Line: 3},
		ConsoleSummary{Total: 300, Recorded: 200, Counts: map[string]int{"log": 299, "exception": 1}},
		CapacityWait{Group: "model", Limit: 1, For: "model"},
		CapacityAcquired{Group: "model", Limit: 1, For: "model", WaitedMS: 1200},
		Baseline{Name: "dialog", Result: BaselineDiffers, File: "baselines/dialog.png", DiffPixels: 12, Pixels: 4800, DiffRatio: 0.0025,
			MaxDiffRatio: 0.001, Threshold: 0.1, SizeDiffers: true, Width: 80, Height: 60,
			Expected: "baselines/dialog.expected.png", Actual: "baselines/dialog.actual.png", Diff: "baselines/dialog.diff.png"},
		CacheReport{Mode: "read-write", Cached: 10, Hits: 5, Misses: 1, FellBackAt: 6, Saved: 5, Stored: true, Final: true},
		TakeoverStarted{Addr: "127.0.0.1:5900", By: "console", PausesDeadline: true},
		TakeoverEnded{DurationS: 12.5, Ended: TakeoverHandedBack, WindowsOpened: []string{"Save As"}, WindowsClosed: []string{"Find"},
			FocusBefore: "Untitled", FocusAfter: "Save As", ScreenChanged: true},
	}
}

// TestPayloadRoundTrip: an event read back from its events.jsonl line has
// the same Go value, payload type and number types included, as the one
// published.
func TestPayloadRoundTrip(t *testing.T) {
	t.Parallel()
	for _, p := range payloadSamples() {
		t.Run(string(p.Kind()), func(t *testing.T) {
			t.Parallel()
			var got []Event
			bus := NewBus(nil, func(e Event) { got = append(got, e) })
			live := bus.Publish(Event{Data: p})
			if live.Kind != p.Kind() {
				t.Fatalf("published kind = %q, want the payload's %q", live.Kind, p.Kind())
			}
			line, err := json.Marshal(live)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(line), `"data":{`) {
				t.Fatalf("line %s: want the payload under \"data\"", line)
			}
			var replayed Event
			if err := json.Unmarshal(line, &replayed); err != nil {
				t.Fatalf("decode %s: %v", line, err)
			}
			// Times lose their monotonic reading on the way through JSON.
			live.T = live.T.Round(0)
			if !reflect.DeepEqual(replayed, live) {
				t.Fatalf("replayed %#v\nwant     %#v", replayed, live)
			}
		})
	}
}

// TestReadVersion1Stream reads an events.jsonl written by an earlier
// version (a real goal run against zenity, checked in as it was written):
// old report directories must still replay.
func TestReadVersion1Stream(t *testing.T) {
	t.Parallel()
	evs, err := ReadFile("testdata/v1-goal-run.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 41 {
		t.Fatalf("read %d events, want 41", len(evs))
	}
	byKind := map[Kind][]Event{}
	for _, e := range evs {
		byKind[e.Kind] = append(byKind[e.Kind], e)
	}
	run, _ := byKind[KindRunStarted][0].Data.(RunStarted)
	if run.Scenario != "fill the entry dialog" || run.Mode != "goal" || run.DeadlineS != 600 || len(run.Plan) != 4 || !slices.Contains(run.Tools, "type_text") {
		t.Errorf("run.started = %+v", run)
	}
	if s, _ := byKind[KindDisplayStarted][0].Data.(DisplayStarted); s.Width != 1280 || s.Height != 800 || !s.Owned {
		t.Errorf("session.started = %+v", s)
	}
	if a, _ := byKind[KindAppLaunched][0].Data.(AppLaunched); a.PID == 0 || len(a.Command) != 4 || a.Command[0] != "zenity" {
		t.Errorf("app.launched = %+v", a)
	}
	if w, _ := byKind[KindAppWindow][0].Data.(AppWindow); w.Title != "Groceries" || w.Class != "Zenity" {
		t.Errorf("app.window = %+v", w)
	}
	if tl, _ := byKind[KindTools][0].Data.(ToolList); tl.ATSPIControls != 2 || len(tl.Tools) != 12 {
		t.Errorf("tools = %+v", tl)
	}
	if r, _ := byKind[KindModelRequest][1].Data.(ModelRequest); !reflect.DeepEqual(r, ModelRequest{Iteration: 2, Messages: 4, Images: 2, ImageBytes: 20995}) {
		t.Errorf("second model.request = %+v", r)
	}
	if r, _ := byKind[KindModelReply][0].Data.(ModelReply); r != (ModelReply{Calls: 1, Attempts: 1}) {
		t.Errorf("model.reply = %+v", r)
	}
	if s, _ := byKind[KindScreen][0].Data.(ScreenCaptured); s != (ScreenCaptured{Width: 1280, Height: 800, Settled: true}) {
		t.Errorf("screen = %+v", s)
	}
	if l, _ := byKind[KindLoopEnded][0].Data.(LoopEnded); l.Iterations != 5 {
		t.Errorf("loop.ended = %+v", l)
	}
	if r, _ := byKind[KindRunEnded][0].Data.(RunEnded); r.Report == "" {
		t.Errorf("run.ended = %+v", r)
	}
}

// TestUnknownKindKeepsItsData: a kind from a newer version reads, and is
// written again unchanged.
func TestUnknownKindKeepsItsData(t *testing.T) {
	t.Parallel()
	line := `{"seq":7,"t":"2026-01-02T03:04:05Z","kind":"window.focused","data":{"id":"0x1","n":1280}}`
	var e Event
	if err := json.Unmarshal([]byte(line), &e); err != nil {
		t.Fatal(err)
	}
	if e.Data == nil || e.Data.Kind() != "window.focused" {
		t.Fatalf("data = %#v", e.Data)
	}
	out, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != line {
		t.Fatalf("written again as %s, want %s", out, line)
	}
}

const planted = "PLANTED"

// structural lists the string fields the runtime writes itself and that
// redaction must leave alone; every other string an event carries must
// pass through the redactor.
var structural = []string{
	"Kind", "Source", "Status", "Screen",
	"Grounding.Outcome", "Grounding.Before", "Grounding.After",
	"Budgets[].Name", "Budgets[].Unit",
	"Check.Name", "Question.ID", "Steer.Action",
	"Verdict.Verdict", "Verdict.Outcome",
}

// structuralData lists, per kind, the payload's fields that are
// structural.
var structuralData = map[Kind][]string{
	KindRunStarted: {"Data.SHA256", "Data.Mode"},
	KindFinal:      {"Data.Ending"},
	KindBaseline:   {"Data.Result"},
	// How a takeover ended is the runtime's own word.
	KindTakeoverEnded: {"Data.Ended"},
}

// TestRedactionCoversEveryString plants a marker in every string field of
// an event and of every payload type — found by reflection, so a field
// added later is covered — and checks that redaction reached each one
// that is not structural, and left the structural ones alone.
func TestRedactionCoversEveryString(t *testing.T) {
	t.Parallel()
	r := func(s string) string { return strings.ReplaceAll(s, planted, "[REDACTED]") }
	var base Event
	plant.Fill(reflect.ValueOf(&base).Elem(), planted)
	for _, p := range append(payloadSamples(), RawData{kind: "x.new", JSON: json.RawMessage(`{"k":"` + planted + `","n":1}`)}) {
		pv := reflect.New(reflect.TypeOf(p)).Elem()
		pv.Set(reflect.ValueOf(p))
		plant.Fill(pv, planted)
		e := base
		e.Data = pv.Interface().(Payload)
		got := redactEvent(e, r)
		var left []string
		plant.Strings(reflect.ValueOf(got), "", func(path, s string) {
			if strings.Contains(s, planted) {
				left = append(left, path)
			}
		})
		if raw, ok := got.Data.(RawData); ok && strings.Contains(string(raw.JSON), planted) {
			left = append(left, "Data.JSON")
		}
		slices.Sort(left)
		want := append(slices.Clone(structural), structuralData[p.Kind()]...)
		slices.Sort(want)
		if !slices.Equal(left, want) {
			t.Errorf("%s: unredacted strings %v, want exactly the structural %v", p.Kind(), left, want)
		}
		if got.Args["k"] != "[REDACTED]" {
			t.Errorf("%s: args value = %v", p.Kind(), got.Args["k"])
		}
		if _, ok := got.Args[planted]; !ok {
			t.Errorf("%s: an argument's key was changed: %v", p.Kind(), got.Args)
		}
	}
}
