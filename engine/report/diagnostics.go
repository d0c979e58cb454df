package report

import (
	"encoding/json"

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
