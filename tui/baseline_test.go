package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/themes"
)

// A screenshot check that did not match has a timeline row whose
// selection shows the diff in the screen pane, a detail saying what
// differed and where the images are, and a line in its step's detail.
func TestScreenshotCheckRow(t *testing.T) {
	t.Parallel()
	s := NewState()
	for i, e := range []events.Event{
		{Kind: events.KindStepStarted, Step: 1, Tool: "expect", Source: events.SourceScript},
		{Kind: events.KindBaseline, Step: 1, Message: "screenshot main: differs, 145 of 36000 pixels differ (0.40%)",
			Data: events.Baseline{Name: "main", Result: events.BaselineDiffers, File: "/s/greeting.baselines/main.png",
				Expected: "baselines/main.expected.png", Actual: "baselines/main.actual.png", Diff: "baselines/main.diff.png"}},
		{Kind: events.KindStepEnded, Step: 1, Tool: "expect", Source: events.SourceScript, Status: events.StatusError, Message: "expected the window matches the baseline main"},
	} {
		s.Apply(i, e)
	}
	var row *Row
	for i := range s.Rows {
		if _, ok := s.Rows[i].Event.Data.(events.Baseline); ok {
			row = &s.Rows[i]
		}
	}
	if row == nil {
		t.Fatalf("no row for the screenshot check: %+v", s.Rows)
	}
	if row.Screen != "baselines/main.diff.png" {
		t.Errorf("the row shows %q, want the diff", row.Screen)
	}
	// The step's failure capture had not come yet: the screen pane
	// follows the run onto the diff.
	s2 := NewState()
	s2.Apply(0, events.Event{Kind: events.KindScreen, Screen: "screens/0001.png"})
	s2.Apply(1, events.Event{Kind: events.KindBaseline, Step: 1, Data: events.Baseline{Name: "main", Result: events.BaselineDiffers, Diff: "baselines/main.diff.png"}})
	if s2.Screen != "baselines/main.diff.png" {
		t.Errorf("after a differing check the screen pane shows %q, want the diff", s2.Screen)
	}
	// A window that differs is not marked with a tick; one that matched is.
	if text, _ := rowText(*row); !strings.HasPrefix(text, "  ✗ screenshot main: differs, 145 of 36000 pixels differ") {
		t.Errorf("row text %q", text)
	}
	// The --headless and replay --print line says what was found and
	// where the diff is, not only the event's kind.
	if got, want := transcriptLine(row.Event), "screenshot main: differs, 145 of 36000 pixels differ (0.40%) [diff baselines/main.diff.png]"; got != want {
		t.Errorf("transcript line = %q, want %q", got, want)
	}
	st := themes.NoColorStyles()
	detail := ansi.Strip(strings.Join(rowDetail(st, s, *row, 80).lines, "\n"))
	for _, want := range []string{"screenshot main · step 1", "145 of 36000 pixels differ", "/s/greeting.baselines/main.png", "diff baselines/main.diff.png", "window baselines/main.actual.png"} {
		if !strings.Contains(detail, want) {
			t.Errorf("the check's detail lacks %q:\n%s", want, detail)
		}
	}
	step := ansi.Strip(strings.Join(rowDetail(st, s, s.Rows[0], 80).lines, "\n"))
	if !strings.Contains(step, "screenshot checks") || !strings.Contains(step, "main differs") {
		t.Errorf("the step's detail does not name its screenshot check:\n%s", step)
	}
}

// TestCheckRowMarks: a check row's mark says how it went, so a failed
// check or a differing screenshot is never drawn with a tick.
func TestCheckRowMarks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		e    events.Event
		want string
	}{
		{events.Event{Kind: events.KindCheck, Check: &events.Check{Name: "process_alive", OK: true}}, "  ✓ check process_alive ok"},
		{events.Event{Kind: events.KindCheck, Check: &events.Check{Name: "success.exit_code", OK: false}}, "  ✗ check success.exit_code FAILED"},
		{events.Event{Kind: events.KindBaseline, Message: "screenshot a: matched", Data: events.Baseline{Result: events.BaselineMatched}}, "  ✓ screenshot a: matched"},
		{events.Event{Kind: events.KindBaseline, Message: "screenshot a: written", Data: events.Baseline{Result: events.BaselineWritten}}, "  ✓ screenshot a: written"},
		{events.Event{Kind: events.KindBaseline, Message: "screenshot a: missing", Data: events.Baseline{Result: events.BaselineMissing}}, "  ✗ screenshot a: missing"},
		{events.Event{Kind: events.KindBaseline, Message: "screenshot a: unsteady", Data: events.Baseline{Result: events.BaselineUnsteady}}, "  ✗ screenshot a: unsteady"},
	}
	for _, tt := range tests {
		if got, _ := rowText(Row{Kind: RowCheck, Event: tt.e}); got != tt.want {
			t.Errorf("row = %q, want %q", got, tt.want)
		}
	}
}
