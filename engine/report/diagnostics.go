package report

import (
	"encoding/json"
	"time"

	"github.com/kasmrt/kasmrt/engine/events"
)

// Startup is what the display showed when the application's window did
// not appear in time, so an author can see which window was meant.
type Startup struct {
	// Match is how the window was looked for.
	Match    string  `json:"match"`
	TimeoutS float64 `json:"timeout_s"`
	// Reason says what was seen, in words.
	Reason string `json:"reason"`
	// Screen is the capture taken at the timeout.
	Screen string `json:"screen,omitempty"`
	// Windows are every top-level window on the display.
	Windows []StartupWindow `json:"windows"`
	// Suggestion is an app.window that matches the application's window,
	// when it showed one.
	Suggestion string `json:"suggestion,omitempty"`
}

// StartupWindow is one window seen at a startup timeout.
type StartupWindow struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Class    string `json:"class"`
	Instance string `json:"instance"`
	PID      int    `json:"pid"`
	X        int    `json:"x"`
	Y        int    `json:"y"`
	Width    int    `json:"width"`
	Height   int    `json:"height"`
	Viewable bool   `json:"viewable"`
	// Application is set for windows of the application's processes.
	Application bool `json:"application"`
}

func startupFrom(e events.Event) *Startup {
	st := &Startup{Match: str(e.Data, "match"), Reason: e.Message, Screen: e.Screen,
		Suggestion: str(e.Data, "suggestion"), Windows: []StartupWindow{}}
	if t, ok := e.Data["timeout_s"].(float64); ok {
		st.TimeoutS = t
	}
	decodeInto(e.Data["windows"], &st.Windows)
	return st
}

// decodeInto converts a value of an event's Data, as published (Go values)
// or as read back from events.jsonl (JSON values), into out.
func decodeInto(v any, out any) {
	if v == nil {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	_ = json.Unmarshal(b, out)
}

// MaxConsoleEntries is how many console messages report.json lists; the
// rest are in events.jsonl (up to the run's own cap) and in the counts.
const MaxConsoleEntries = 50

// Browser is what the page's console said during the run.
type Browser struct {
	// Console lists the first messages, in order.
	Console []ConsoleEntry `json:"console"`
	// Counts are the messages per level ("log", "warning", "error",
	// "exception"…), all of them, including those not listed.
	Counts map[string]int `json:"counts"`
	// Total is every message; Recorded those that became events.
	Total    int `json:"total"`
	Recorded int `json:"recorded"`
}

// ConsoleEntry is one console message, uncaught exception or browser log
// entry.
type ConsoleEntry struct {
	T      time.Time `json:"t"`
	Level  string    `json:"level"`
	Source string    `json:"source"`
	Text   string    `json:"text"`
	URL    string    `json:"url,omitempty"`
	Line   int       `json:"line,omitempty"`
}

// consoleInto folds a browser.console event into b: a message, or the
// closing summary whose counts include the messages not recorded.
func consoleInto(b *Browser, e events.Event) *Browser {
	if b == nil {
		b = &Browser{Console: []ConsoleEntry{}, Counts: map[string]int{}}
	}
	if summary, _ := e.Data["summary"].(bool); summary {
		counts := map[string]int{}
		decodeInto(e.Data["counts"], &counts)
		b.Counts = counts
		b.Total, b.Recorded = intOf(e.Data, "total"), intOf(e.Data, "recorded")
		return b
	}
	level := str(e.Data, "level")
	b.Counts[level]++
	b.Total++
	b.Recorded++
	if len(b.Console) < MaxConsoleEntries {
		b.Console = append(b.Console, ConsoleEntry{T: e.T, Level: level, Source: str(e.Data, "source"),
			Text: str(e.Data, "text"), URL: str(e.Data, "url"), Line: intOf(e.Data, "line")})
	}
	return b
}
