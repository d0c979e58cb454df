package events

// Event kinds that explain a failure.
const (
	// KindConsole is one message of the browser's page: a console API call,
	// an uncaught exception or a browser log entry. ConsoleMessage.
	KindConsole Kind = "browser.console"
	// KindConsoleSummary counts every console message when the browser
	// closes, including those past the run's event cap. ConsoleSummary.
	KindConsoleSummary Kind = "browser.console.summary"
	// KindAppHung says the application stopped answering: what the
	// display and its threads showed then. AppHung; Message: the check's
	// evidence; Screen: the capture then.
	KindAppHung Kind = "app.hung"
)

// AppHung is app.hung's payload: the application did not answer for
// timeout_s, and this is where it was.
type AppHung struct {
	// Window is the window that was asked (_NET_WM_PING) and did not
	// answer.
	Window   string       `json:"window"`
	TimeoutS float64      `json:"timeout_s"`
	Windows  []WindowSeen `json:"windows"`
	// Threads are the threads of the application's processes, with the
	// kernel function each one waits in.
	Threads []ThreadSeen `json:"threads"`
	// NoScreen says why no screen was captured, when none was.
	NoScreen string `json:"no_screen,omitempty"`
}

// ThreadSeen is one thread of the application's processes, from
// /proc/PID/task/TID.
type ThreadSeen struct {
	PID   int    `json:"pid"`
	TID   int    `json:"tid"`
	Name  string `json:"name"`
	State string `json:"state"`           // R, S, D, T, Z…
	WChan string `json:"wchan,omitempty"` // the kernel function it sleeps in
}

// AppWindows is app.windows's payload: every window on the display when
// the application's window did not appear in time.
type AppWindows struct {
	Match    string       `json:"match"` // how the window was looked for
	TimeoutS float64      `json:"timeout_s"`
	Windows  []WindowSeen `json:"windows"`
	// Suggestion is an app.window that matches the application's window,
	// when it showed one.
	Suggestion string `json:"suggestion,omitempty"`
	// NoScreen says why no screen was captured, when none was.
	NoScreen string `json:"no_screen,omitempty"`
}

// WindowSeen is one top-level window on the display.
type WindowSeen struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Class    string `json:"class"`
	Instance string `json:"instance"`
	PID      int    `json:"pid"` // 0: the window sets no _NET_WM_PID
	X        int    `json:"x"`
	Y        int    `json:"y"`
	Width    int    `json:"width"`
	Height   int    `json:"height"`
	Viewable bool   `json:"viewable"`
	// Application is set for the windows of the application's processes.
	Application bool `json:"application"`
}

// ConsoleMessage is browser.console's payload.
type ConsoleMessage struct {
	Level  string `json:"level"`  // log, debug, info, warning, error, exception
	Source string `json:"source"` // console, exception, or the browser log's source (network…)
	Text   string `json:"text"`
	URL    string `json:"url,omitempty"`
	Line   int    `json:"line,omitempty"` // from 1; 0 when unknown
}

// ConsoleSummary is browser.console.summary's payload.
type ConsoleSummary struct {
	Total    int            `json:"total"`    // every message
	Recorded int            `json:"recorded"` // those that became events
	Counts   map[string]int `json:"counts"`   // every message per level
}

func (AppWindows) Kind() Kind     { return KindAppWindows }
func (AppHung) Kind() Kind        { return KindAppHung }
func (ConsoleMessage) Kind() Kind { return KindConsole }
func (ConsoleSummary) Kind() Kind { return KindConsoleSummary }

func (p AppWindows) redacted(r func(string) string) Payload {
	p.Match, p.Suggestion, p.NoScreen = r(p.Match), r(p.Suggestion), r(p.NoScreen)
	if p.Windows != nil {
		ws := make([]WindowSeen, len(p.Windows))
		for i, w := range p.Windows {
			w.ID, w.Title, w.Class, w.Instance = r(w.ID), r(w.Title), r(w.Class), r(w.Instance)
			ws[i] = w
		}
		p.Windows = ws
	}
	return p
}

func (p AppHung) redacted(r func(string) string) Payload {
	p.Window, p.NoScreen = r(p.Window), r(p.NoScreen)
	p.Windows = AppWindows{Windows: p.Windows}.redacted(r).(AppWindows).Windows
	if p.Threads != nil {
		ts := make([]ThreadSeen, len(p.Threads))
		for i, t := range p.Threads {
			t.Name, t.State, t.WChan = r(t.Name), r(t.State), r(t.WChan)
			ts[i] = t
		}
		p.Threads = ts
	}
	return p
}

func (p ConsoleMessage) redacted(r func(string) string) Payload {
	p.Level, p.Source, p.Text, p.URL = r(p.Level), r(p.Source), r(p.Text), r(p.URL)
	return p
}

// redacted passes the levels through r too: they are the browser's words.
func (p ConsoleSummary) redacted(r func(string) string) Payload {
	if p.Counts != nil {
		counts := make(map[string]int, len(p.Counts))
		for level, n := range p.Counts {
			counts[r(level)] += n
		}
		p.Counts = counts
	}
	return p
}
