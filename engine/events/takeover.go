package events

// Event kinds of an operator's takeover of the desktop (kasmrt run
// --takeover). Neither carries the VNC password: it reaches only the
// operator who asked, in the console or the API's answer.
const (
	// KindTakeoverStarted: the loop is paused and a VNC server serves the
	// run's display. TakeoverStarted; Screen: the screen as the operator
	// got it; Message: in words.
	KindTakeoverStarted Kind = "takeover.started"
	// KindTakeoverEnded: the operator handed the desktop back.
	// TakeoverEnded; Screen: the screen as they left it; Box: the part of
	// the screen that changed, when any did; Message: what changed, in
	// words (what the model is told).
	KindTakeoverEnded Kind = "takeover.ended"
)

// TakeoverStarted is takeover.started's payload.
type TakeoverStarted struct {
	// Addr is the VNC server's loopback host:port.
	Addr string `json:"addr"`
	// By is who asked: console or api.
	By string `json:"by"`
	// PausesDeadline says the run's deadline stops counting until the
	// desktop is handed back (--takeover-pauses-deadline).
	PausesDeadline bool `json:"pauses_deadline"`
}

// Ways a takeover ends, as TakeoverEnded.Ended names them.
const (
	TakeoverHandedBack = "handed-back" // T again, or POST …/handback
	TakeoverClientLeft = "client-left" // the VNC server ended: its client disconnected
	TakeoverRunEnded   = "run-ended"   // the deadline, an abort or Ctrl-C
)

// TakeoverEnded is takeover.ended's payload: how long the operator had the
// desktop and what is different.
type TakeoverEnded struct {
	DurationS float64 `json:"duration_s"`
	Ended     string  `json:"ended"`
	// WindowsOpened and WindowsClosed are top-level windows, by title,
	// that appeared or went while the operator had the desktop.
	WindowsOpened []string `json:"windows_opened"`
	WindowsClosed []string `json:"windows_closed"`
	// FocusBefore and FocusAfter are the focused window's titles.
	FocusBefore string `json:"focus_before,omitempty"`
	FocusAfter  string `json:"focus_after,omitempty"`
	// ScreenChanged says whether any pixel differs; the event's Box is
	// where.
	ScreenChanged bool `json:"screen_changed"`
}

func (TakeoverStarted) Kind() Kind { return KindTakeoverStarted }
func (TakeoverEnded) Kind() Kind   { return KindTakeoverEnded }

func (p TakeoverStarted) redacted(r func(string) string) Payload {
	p.Addr, p.By = r(p.Addr), r(p.By)
	return p
}

func (p TakeoverEnded) redacted(r func(string) string) Payload {
	p.WindowsOpened = redactStrings(p.WindowsOpened, r)
	p.WindowsClosed = redactStrings(p.WindowsClosed, r)
	p.FocusBefore, p.FocusAfter = r(p.FocusBefore), r(p.FocusAfter)
	return p
}
