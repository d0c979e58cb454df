package page

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/report"
)

// TestNeedsCleaning: the characters that would act on the text around
// them, rather than show, are found at the edges of each range; tabs,
// newlines, spaces and ordinary letters are not.
func TestNeedsCleaning(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		s    string
		want bool
	}{
		{"plain\ttext\n", false}, {" ", false}, {"é", false}, {"\u00a0", false},
		{"\x1f", true}, {"\x7f", true}, {"\u0080", true}, {"\u009f", true}, {"\ufffd", true},
		{"\u061c", true}, {"\u200e", true}, {"\u200f", true},
		{"\u202a", true}, {"\u202e", true}, {"\u2029", false}, {"\u202f", false},
		{"\u2066", true}, {"\u2069", true}, {"\u2065", false}, {"\u206a", false},
	} {
		if got := needsCleaning(c.s); got != c.want {
			t.Errorf("needsCleaning(%q) = %v, want %v", c.s, got, c.want)
		}
	}
}

// TestShotMarksOnlyOnTheScreen: a click mark or a crop is drawn only
// when it lies on the screen, its edges included.
func TestShotMarksOnlyOnTheScreen(t *testing.T) {
	t.Parallel()
	b := &builder{sizes: map[string][2]int{"screens/0001.png": {100, 50}}}
	for _, c := range []struct {
		x, y int
		want bool
	}{{0, 0, true}, {99, 49, true}, {100, 0, false}, {0, 50, false}, {-1, 0, false}, {0, -1, false}} {
		if s := b.shot("screens/0001.png", &events.Point{X: c.x, Y: c.y}); (s.Mark != nil) != c.want {
			t.Errorf("mark at %d,%d drawn = %v, want %v", c.x, c.y, s.Mark != nil, c.want)
		}
	}
	if s := b.shot("screens/0002.png", &events.Point{}); s.Mark != nil {
		t.Error("a mark on a screen of unknown size")
	}
	for _, c := range []struct {
		crop events.Rect
		want bool
	}{
		{events.Rect{X: 0, Y: 0, W: 100, H: 50}, true}, {events.Rect{X: 60, Y: 30, W: 40, H: 20}, true},
		{events.Rect{X: 61, Y: 30, W: 40, H: 20}, false}, {events.Rect{X: 60, Y: 31, W: 40, H: 20}, false},
		{events.Rect{X: -1, Y: 0, W: 10, H: 10}, false}, {events.Rect{X: 0, Y: -1, W: 10, H: 10}, false},
		{events.Rect{X: 10, Y: 10, W: 0, H: 10}, false}, {events.Rect{X: 10, Y: 10, W: 10, H: 0}, false},
	} {
		if s := b.cropShot("screens/0001.png", nil, &c.crop); (s.Crop != nil) != c.want {
			t.Errorf("crop %+v drawn = %v, want %v", c.crop, s.Crop != nil, c.want)
		}
	}
}

// TestFormatDuration: milliseconds under a second, tenths of seconds
// under a minute, whole seconds after.
func TestFormatDuration(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		d    time.Duration
		want string
	}{{999 * time.Millisecond, "999ms"}, {time.Second, "1.0s"}, {59900 * time.Millisecond, "59.9s"}, {time.Minute, "1m0s"}} {
		if got := formatDuration(c.d); got != c.want {
			t.Errorf("formatDuration(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}

// TestBudgetAtTheStart: a bound used nothing at the run's start, without
// a limit, is drawn at the origin's baseline and said unbounded, not
// divided by zero.
func TestBudgetAtTheStart(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	evs := []events.Event{{Kind: events.KindBudget, T: start, Budgets: []events.Budget{{Name: "iterations", Used: 0, Limit: 0, Unit: "turns"}}}}
	got := (&builder{redact: func(s string) string { return s }}).budgets(evs, report.Timing{Started: start})
	if len(got) != 1 || got[0].Points != "0.0,20.0" || got[0].Limit != "unbounded" {
		t.Errorf("budgets %+v, want one at 0.0,20.0, unbounded", got)
	}
}

// TestAppLogTail: a long app.log is shown from the first whole line of its
// last appLogTailBytes, and the note says how much of it that is; a short
// one whole; an empty one says the application wrote nothing.
func TestAppLogTail(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	long := strings.Repeat("an early line\n", 2000) + "the last line\n"
	tail, note, err := appLogTail(write("long.log", long))
	if err != nil || !strings.HasSuffix(tail, "the last line\n") || !strings.HasPrefix(tail, "an early line\n") ||
		len(tail) > appLogTailBytes || strings.ContainsRune(tail, 0) ||
		note != fmt.Sprintf("The last %d of %d bytes; app.log has all of it.", len(tail), len(long)) {
		t.Errorf("tail of %d bytes, note %q, %v", len(tail), note, err)
	}
	if tail, note, err := appLogTail(write("short.log", "one line\n")); err != nil || tail != "one line\n" || note != "" {
		t.Errorf("short log: %q, %q, %v", tail, note, err)
	}
	if _, note, _ := appLogTail(write("empty.log", "")); note != "The application wrote nothing." {
		t.Errorf("empty log's note %q", note)
	}
}

// TestBuildView: the page's view of a run marks a step's click where the
// step ended (not where grounding first looked), knows the final
// capture's size, names a console message's place without an unknown
// line, and shows a failed fatal-pattern check and a failed success
// criterion as failed.
func TestBuildView(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	evs := []events.Event{
		{Kind: events.KindRunStarted, T: at(0), Data: events.RunStarted{Scenario: "s", Mode: "goal"}},
		{Kind: events.KindScreen, T: at(10), Screen: "screens/0001.png", Data: events.ScreenCaptured{Width: 100, Height: 50}},
		{Kind: events.KindStepStarted, T: at(20), Step: 1, Tool: "click_grounded"},
		{Kind: events.KindGrounding, T: at(30), Step: 1, Point: &events.Point{X: 70, Y: 40}},
		{Kind: events.KindStepEnded, T: at(40), Step: 1, Tool: "click_grounded", Status: events.StatusOK, Screen: "screens/0001.png", Point: &events.Point{X: 20, Y: 10}},
		{Kind: events.KindConsole, T: at(50), Data: events.ConsoleMessage{Level: "log", Text: "hi", URL: "http://app.test/app.js"}},
		{Kind: events.KindCheck, T: at(60), Check: &events.Check{Name: "fatal_pattern", OK: false, Evidence: "Segmentation fault"}},
		{Kind: events.KindCheck, T: at(61), Check: &events.Check{Name: "success.tools.saved", OK: false, Evidence: "saved exited with status 1"}},
		{Kind: events.KindFinal, T: at(70), Screen: "screens/0002.png", Data: events.FinalCapture{Width: 100, Height: 50, Ending: "completed"}},
	}
	v := build(evs, "", "", "", nil)
	if len(v.Steps) != 1 || v.Steps[0].Screen == nil || v.Steps[0].Screen.Mark == nil || *v.Steps[0].Screen.Mark != (events.Point{X: 20, Y: 10}) {
		t.Errorf("steps %+v, want the click marked at 20,10", v.Steps)
	}
	if v.Final == nil || v.Final.Screen == nil || v.Final.Screen.W != 100 || v.Final.Screen.H != 50 {
		t.Errorf("final %+v, want its 100x50 capture", v.Final)
	}
	if v.Console == nil || len(v.Console.Entries) != 1 || v.Console.Entries[0].Where != "http://app.test/app.js" {
		t.Errorf("console %+v, want the message's URL without a line", v.Console)
	}
	declared := false
	for _, c := range v.Checks {
		if c.Name == "fatal_pattern" && c.State != "failed" {
			t.Errorf("fatal_pattern %+v, want failed", c)
		}
		if c.Name == "success.tools.saved" {
			declared = c.State == "failed" && c.Evidence == "saved exited with status 1"
		}
	}
	if !declared {
		t.Errorf("checks %+v, want the failed success criterion with its evidence", v.Checks)
	}
}

// TestWriteIndex: the index links each run's page relative to itself
// (writing a page a directory lacks), says a run without a verdict is
// unfinished, links a final capture, gives a finished run's duration and
// counts the verdicts.
func TestWriteIndex(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	write := func(name string, evs ...events.Event) string {
		dir := filepath.Join(root, "runs", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		var lines []byte
		for _, e := range evs {
			b, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			lines = append(append(lines, b...), '\n')
		}
		if err := os.WriteFile(filepath.Join(dir, "events.jsonl"), lines, 0o600); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	passed := write("passed",
		events.Event{Seq: 1, Kind: events.KindRunStarted, T: t0, Data: events.RunStarted{Scenario: "login"}},
		events.Event{Seq: 2, Kind: events.KindFinal, T: t0.Add(time.Second), Screen: "screens/0001.png", Data: events.FinalCapture{Width: 10, Height: 10, Ending: "completed"}},
		events.Event{Seq: 3, Kind: events.KindVerdict, T: t0.Add(time.Second), Verdict: &events.Decision{Verdict: events.VerdictPass, Outcome: "completed"}},
		events.Event{Seq: 4, Kind: events.KindRunEnded, T: t0.Add(2500 * time.Millisecond)})
	unfinished := write("unfinished", events.Event{Seq: 1, Kind: events.KindRunStarted, T: t0, Data: events.RunStarted{Scenario: "search"}})
	out := filepath.Join(root, "index.html")
	if err := WriteIndex(out, []string{passed, unfinished}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, want := range []string{`href="runs/passed/report.html"`, `href="runs/unfinished/report.html"`, "runs/passed/screens/0001.png",
		`<span class="verdict pass">pass</span>`, `<span class="verdict unfinished">unfinished</span>`, "pass 1 · unfinished 1 · ", "2.5s"} {
		if !strings.Contains(page, want) {
			t.Errorf("the index lacks %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join(unfinished, FileName)); err != nil {
		t.Errorf("the run without a page got none: %v", err)
	}
}
