package tui

import (
	"testing"
	"time"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/kasmrt/kasmrt/engine/events"
)

// TestTimelineDiagnosticsGolden renders the rows a failing run's
// diagnostics add to the timeline: the page's errors and uncaught
// exceptions (not its ordinary logging) and the windows seen at a startup
// timeout.
func TestTimelineDiagnosticsGolden(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	evs := []events.Event{
		{Kind: events.KindRunStarted, Data: events.RunStarted{Scenario: "diag", Mode: "scripted"}},
		{Kind: events.KindAppLaunched, Data: events.AppLaunched{Command: []string{"chromium"}, PID: 42}},
		{Kind: events.KindConsole, Data: events.ConsoleMessage{Level: "log", Source: "console", Text: "page loaded"}},
		{Kind: events.KindConsole, Data: events.ConsoleMessage{Level: "error", Source: "network", Text: "Failed to load resource: 404"}},
		{Kind: events.KindConsole, Data: events.ConsoleMessage{Level: "exception", Source: "exception", Text: "Uncaught TypeError: x is null"}},
		{Kind: events.KindAppWindows, Message: `no window matching class "Wrong" appeared within 2s, but the application showed 1 window`},
	}
	for i := range evs {
		evs[i].Seq, evs[i].T = int64(i+1), at(i*100)
	}
	st := FoldState(evs)
	if len(st.Rows) != 4 {
		t.Fatalf("%d rows, want the launch, the error, the exception and the startup", len(st.Rows))
	}
	th := testTheme(t, true)
	tp := timelinePane{selected: -1}
	out := box(th.Styles, "timeline", tp.View(th.Styles, st.Rows, 78, 6), 80, 8, false)
	checkRect(t, out)
	golden.RequireEqual(t, pinned(t, out, colorprofile.Ascii))
}

// TestTranscriptDiagnostics checks replay --print's lines for the
// diagnostics: the startup timeout's findings, a console message with its
// place, and the closing count.
func TestTranscriptDiagnostics(t *testing.T) {
	t.Parallel()
	tests := []struct {
		e    events.Event
		want string
	}{
		{events.Event{Kind: events.KindAppWindows, Message: "no window matching class \"X\" appeared within 1s"},
			`startup: no window matching class "X" appeared within 1s`},
		{events.Event{Kind: events.KindConsole, Data: events.ConsoleMessage{Level: "exception", Source: "exception", Text: "Uncaught Error: boom", URL: "http://x/app.js", Line: 12}},
			"browser exception: Uncaught Error: boom (http://x/app.js:12)"},
		{events.Event{Kind: events.KindConsole, Data: events.ConsoleMessage{Level: "log", Source: "console", Text: "hi"}},
			"browser log: hi"},
		{events.Event{Kind: events.KindConsoleSummary, Data: events.ConsoleSummary{Total: 300, Recorded: 200}},
			"browser console: 300 messages (200 recorded)"},
	}
	for _, tc := range tests {
		if got := transcriptLine(tc.e); got != tc.want {
			t.Errorf("transcriptLine(%s) = %q, want %q", tc.e.Kind, got, tc.want)
		}
	}
}
