package report

import (
	"maps"
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
	Windows []events.WindowSeen `json:"windows"`
	// Suggestion is an app.window that matches the application's window,
	// when it showed one.
	Suggestion string `json:"suggestion,omitempty"`
}

func startupFrom(e events.Event) *Startup {
	st := &Startup{Reason: e.Message, Screen: e.Screen}
	if d, ok := events.DataOf[events.AppWindows](e); ok {
		st.Match, st.TimeoutS, st.Suggestion, st.Windows = d.Match, d.TimeoutS, d.Suggestion, d.Windows
	}
	if st.Windows == nil {
		st.Windows = []events.WindowSeen{}
	}
	return st
}

// Hung is what the display and the application's threads showed when the
// application stopped answering.
type Hung struct {
	// Reason is the app_responsive check's evidence.
	Reason string `json:"reason"`
	// Window is the window that was asked and did not answer.
	Window   string  `json:"window"`
	TimeoutS float64 `json:"timeout_s"`
	// Screen is the capture taken then.
	Screen  string              `json:"screen,omitempty"`
	Windows []events.WindowSeen `json:"windows"`
	// Threads are the application's threads with the kernel function each
	// waits in: a main thread in futex_wait_queue is blocked on a lock.
	Threads []events.ThreadSeen `json:"threads"`
}

func hungFrom(e events.Event) *Hung {
	h := &Hung{Reason: e.Message, Screen: e.Screen}
	if d, ok := events.DataOf[events.AppHung](e); ok {
		h.Window, h.TimeoutS, h.Windows, h.Threads = d.Window, d.TimeoutS, d.Windows, d.Threads
	}
	if h.Windows == nil {
		h.Windows = []events.WindowSeen{}
	}
	if h.Threads == nil {
		h.Threads = []events.ThreadSeen{}
	}
	return h
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
	T time.Time `json:"t"`
	events.ConsoleMessage
}

// consoleInto folds a browser.console event into b, or the closing
// summary, whose counts include the messages past the event cap.
func consoleInto(b *Browser, e events.Event) *Browser {
	if b == nil {
		b = &Browser{Console: []ConsoleEntry{}, Counts: map[string]int{}}
	}
	switch d := e.Data.(type) {
	case events.ConsoleSummary:
		b.Counts = maps.Clone(d.Counts)
		if b.Counts == nil {
			b.Counts = map[string]int{}
		}
		b.Total, b.Recorded = d.Total, d.Recorded
	case events.ConsoleMessage:
		b.Counts[d.Level]++
		b.Total++
		b.Recorded++
		if len(b.Console) < MaxConsoleEntries {
			b.Console = append(b.Console, ConsoleEntry{T: e.T, ConsoleMessage: d})
		}
	}
	return b
}
