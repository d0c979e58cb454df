package events

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
)

// Payload is the part of an event only its kind has, written under
// events.jsonl's "data" key. Each kind that has one owns a Go type here,
// so a producer and its consumers cannot disagree about a field's name or
// its number type: a replayed event decodes into the same type the live
// one was published with.
type Payload interface {
	// Kind is the event kind the payload belongs to.
	Kind() Kind
	// redacted returns a copy with every string value passed through r.
	redacted(r func(string) string) Payload
}

// DataOf returns e's payload as a P, and whether e carries one: ok is
// false when e's kind is not P's (a consumer reading the wrong type for
// the kind it switched on) or when e has no payload (a stream written
// before its kind had one). Consumers read payloads only through it, and
// never drop ok (TestPayloadReadsAreChecked), so a missing or mismatched
// payload is a branch the reader wrote, not a zero value it did not see.
func DataOf[P Payload](e Event) (p P, ok bool) {
	p, ok = e.Data.(P)
	if !ok || p.Kind() != e.Kind {
		var zero P
		return zero, false
	}
	return p, true
}

// RunStarted is run.started's payload: what is about to run.
type RunStarted struct {
	Scenario  string   `json:"scenario"`
	File      string   `json:"file"`
	SHA256    string   `json:"sha256"`
	Mode      string   `json:"mode"`
	Goal      string   `json:"goal"`
	Plan      []string `json:"plan"`
	DeadlineS float64  `json:"deadline_s"`
	ReserveS  float64  `json:"reserve_s"`
	Tools     []string `json:"tools"`
	Steps     int      `json:"steps"`
}

// DisplayStarted is session.started's payload: the display server the run
// uses. The kind keeps the name it was first written with.
type DisplayStarted struct {
	Display string `json:"display"`
	Owned   bool   `json:"owned"` // the run started it (an embedded Xvfb)
	Width   int    `json:"width"`
	Height  int    `json:"height"`
	// WindowManager is the window manager the run started with an
	// embedded Xvfb ("openbox"), or empty.
	WindowManager string `json:"window_manager,omitempty"`
	// Kept says the display is one a suite's worker kept from its
	// previous run, reset in between, rather than a new one.
	Kept bool `json:"kept,omitempty"`
}

// AppLaunched is app.launched's payload: the process under test.
type AppLaunched struct {
	PID      int      `json:"pid"`
	Command  []string `json:"command"`
	Browser  string   `json:"browser,omitempty"` // "launch" when the browser is the app
	Headless bool     `json:"headless,omitempty"`
}

// AppWindow is app.window's payload; the event's Box is the window's
// rectangle.
type AppWindow struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Class string `json:"class"`
}

// ToolList is the tools event's payload: the tool list as decided at
// launch, and what widened it.
type ToolList struct {
	Tools         []string `json:"tools"`
	ATSPIControls int      `json:"atspi_controls,omitempty"`
	CDPTab        bool     `json:"cdp_tab,omitempty"`
	// NoClickElement says why click_element is not on the list, when the
	// run looked for named controls and found none.
	NoClickElement string `json:"no_click_element,omitempty"`
}

// ScreenCaptured is the screen event's payload; the event's Screen is the
// capture's file.
type ScreenCaptured struct {
	Width   int  `json:"width"`
	Height  int  `json:"height"`
	Settled bool `json:"settled"`
	// Diagnostic marks a capture that documents a failure (a failed or
	// refused step, a startup timeout) rather than one a tool made.
	Diagnostic bool `json:"diagnostic,omitempty"`
	// Window is the application's window on this capture, in its pixels:
	// the one with the focus, or the one input goes to. The console shows
	// it by default, since a dialog is a fraction of the screen. Absent
	// when the application has no window, or the capture is a page.
	Window *Rect `json:"window,omitempty"`
	// Pixels, on a live run's bus, is the capture itself as the run keeps
	// it (secrets already masked), so a console in the run's process draws
	// it without reading back and decoding the PNG the report writes.
	// Never written: events.jsonl, a replay and a console attached over
	// the network have the file only.
	Pixels ScreenPixels `json:"-"`
}

// ScreenPixels is a capture's pixels in memory. The image is shared with
// the run, which never changes it: a reader copies before drawing on it.
type ScreenPixels interface {
	Image() (*image.RGBA, error)
}

// FinalCapture is final's payload: the screen as the run ended, taken
// after the work stopped and before anything was shut down, so every run
// whose display was still alive shows how the application was left.
type FinalCapture struct {
	Width  int `json:"width,omitempty"`
	Height int `json:"height,omitempty"`
	// Ending is the outcome the run ended with (completed, deadline,
	// interrupted…), so the capture says what it documents.
	Ending Outcome `json:"ending"`
	// Window is the application's window on the capture, as on a screen
	// event; absent when it had none left.
	Window *Rect `json:"window,omitempty"`
}

// ModelRequest is model.request's payload: the size of one request and
// what the model was given to decide on, so the console and the replay can
// show why it acted. Reports written before Tools, Update and Sent existed
// have them empty.
type ModelRequest struct {
	Iteration  int `json:"iteration"`
	Messages   int `json:"messages"`
	Images     int `json:"images"`
	ImageBytes int `json:"image_bytes"`
	// Tools names the tools the request offered.
	Tools []string `json:"tools,omitempty"`
	// Update is the newest Environment Update in the request's context.
	Update string `json:"update,omitempty"`
	// Sent is what else the request added since the model's previous
	// reply (the goal on the first turn; then the call's result, notes
	// from the operator, corrections), as capped text.
	Sent []SentMessage `json:"sent,omitempty"`
}

// SentMessage is one message a model request added, as text.
type SentMessage struct {
	Role   string `json:"role"` // user | tool
	Text   string `json:"text"`
	Images int    `json:"images,omitempty"`
}

// ModelReply is model.reply's payload; usage, duration and the text's
// excerpt are the event's Usage, DurationMS and Message.
type ModelReply struct {
	Calls    int `json:"calls"`
	Attempts int `json:"attempts"`
}

// ModelRetry is model.retry's payload; the event's Message says why.
type ModelRetry struct {
	Attempt int   `json:"attempt"`
	Status  int   `json:"status"`
	DelayMS int64 `json:"delay_ms"`
}

// ModelFailed is model.failed's payload; the event's Message is the error.
type ModelFailed struct {
	Consecutive int `json:"consecutive"`
}

// LoopEnded is loop.ended's payload; the event's Message says why it
// ended.
type LoopEnded struct {
	Iterations int `json:"iterations"`
	Malformed  int `json:"malformed"`
	ToolErrors int `json:"tool_errors"`
	Rescued    int `json:"rescued"`
}

// RunEnded is run.ended's payload.
type RunEnded struct {
	Report string `json:"report"` // the report directory
}

// RawData is the payload of an event whose kind this version does not
// know, kept as it was so reading and writing it again loses nothing.
type RawData struct {
	kind Kind
	JSON json.RawMessage
}

func (RunStarted) Kind() Kind     { return KindRunStarted }
func (DisplayStarted) Kind() Kind { return KindDisplayStarted }
func (AppLaunched) Kind() Kind    { return KindAppLaunched }
func (AppWindow) Kind() Kind      { return KindAppWindow }
func (ToolList) Kind() Kind       { return KindTools }
func (ScreenCaptured) Kind() Kind { return KindScreen }
func (FinalCapture) Kind() Kind   { return KindFinal }
func (ModelRequest) Kind() Kind   { return KindModelRequest }
func (ModelReply) Kind() Kind     { return KindModelReply }
func (ModelRetry) Kind() Kind     { return KindModelRetry }
func (ModelFailed) Kind() Kind    { return KindModelFailed }
func (LoopEnded) Kind() Kind      { return KindLoopEnded }
func (RunEnded) Kind() Kind       { return KindRunEnded }
func (d RawData) Kind() Kind      { return d.kind }

// MarshalJSON writes the payload as it was read.
func (d RawData) MarshalJSON() ([]byte, error) {
	if len(d.JSON) == 0 {
		return []byte("null"), nil
	}
	return d.JSON, nil
}

func (p RunStarted) redacted(r func(string) string) Payload {
	// The digest and the mode are the runtime's own words, not values.
	p.Scenario, p.File, p.Goal = r(p.Scenario), r(p.File), r(p.Goal)
	p.Plan, p.Tools = redactStrings(p.Plan, r), redactStrings(p.Tools, r)
	return p
}

func (p DisplayStarted) redacted(r func(string) string) Payload {
	p.Display, p.WindowManager = r(p.Display), r(p.WindowManager)
	return p
}

func (p AppLaunched) redacted(r func(string) string) Payload {
	p.Command, p.Browser = redactStrings(p.Command, r), r(p.Browser)
	return p
}

func (p AppWindow) redacted(r func(string) string) Payload {
	p.ID, p.Title, p.Class = r(p.ID), r(p.Title), r(p.Class)
	return p
}

func (p ToolList) redacted(r func(string) string) Payload {
	p.Tools = redactStrings(p.Tools, r)
	p.NoClickElement = r(p.NoClickElement)
	return p
}

func (p ScreenCaptured) redacted(func(string) string) Payload { return p }
func (p FinalCapture) redacted(func(string) string) Payload   { return p }

func (p ModelRequest) redacted(r func(string) string) Payload {
	p.Tools, p.Update = redactStrings(p.Tools, r), r(p.Update)
	if p.Sent != nil {
		sent := make([]SentMessage, len(p.Sent))
		for i, m := range p.Sent {
			m.Role, m.Text = r(m.Role), r(m.Text)
			sent[i] = m
		}
		p.Sent = sent
	}
	return p
}

func (p ModelReply) redacted(func(string) string) Payload  { return p }
func (p ModelRetry) redacted(func(string) string) Payload  { return p }
func (p ModelFailed) redacted(func(string) string) Payload { return p }
func (p LoopEnded) redacted(func(string) string) Payload   { return p }

func (p RunEnded) redacted(r func(string) string) Payload {
	p.Report = r(p.Report)
	return p
}

// redacted decodes the unknown payload, redacts every string value in it
// and encodes it again; keys and numbers stay as they were.
func (d RawData) redacted(r func(string) string) Payload {
	if len(d.JSON) == 0 {
		return d
	}
	dec := json.NewDecoder(bytes.NewReader(d.JSON))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return RawData{kind: d.kind}
	}
	b, err := json.Marshal(RedactValue(v, r))
	if err != nil {
		return RawData{kind: d.kind}
	}
	return RawData{kind: d.kind, JSON: b}
}

func redactStrings(ss []string, r func(string) string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = r(s)
	}
	return out
}

// decodePayload decodes raw as the payload of kind.
func decodePayload(kind Kind, raw json.RawMessage) (Payload, error) {
	switch kind {
	case KindRunStarted:
		return decodeAs[RunStarted](raw)
	case KindDisplayStarted:
		return decodeAs[DisplayStarted](raw)
	case KindAppLaunched:
		return decodeAs[AppLaunched](raw)
	case KindAppWindow:
		return decodeAs[AppWindow](raw)
	case KindTools:
		return decodeAs[ToolList](raw)
	case KindScreen:
		return decodeAs[ScreenCaptured](raw)
	case KindFinal:
		return decodeAs[FinalCapture](raw)
	case KindModelRequest:
		return decodeAs[ModelRequest](raw)
	case KindModelReply:
		return decodeAs[ModelReply](raw)
	case KindModelRetry:
		return decodeAs[ModelRetry](raw)
	case KindModelFailed:
		return decodeAs[ModelFailed](raw)
	case KindLoopEnded:
		return decodeAs[LoopEnded](raw)
	case KindRunEnded:
		return decodeAs[RunEnded](raw)
	case KindAppWindows:
		return decodeAs[AppWindows](raw)
	case KindAppHung:
		return decodeAs[AppHung](raw)
	case KindConsole:
		return decodeAs[ConsoleMessage](raw)
	case KindConsoleSummary:
		return decodeAs[ConsoleSummary](raw)
	case KindCapacityWait:
		return decodeAs[CapacityWait](raw)
	case KindCache:
		return decodeAs[CacheReport](raw)
	case KindCapacityAcquired:
		return decodeAs[CapacityAcquired](raw)
	case KindTakeoverStarted:
		return decodeAs[TakeoverStarted](raw)
	case KindTakeoverEnded:
		return decodeAs[TakeoverEnded](raw)
	case KindBaseline:
		return decodeAs[Baseline](raw)
	}
	return RawData{kind: kind, JSON: append(json.RawMessage(nil), raw...)}, nil
}

func decodeAs[P Payload](raw json.RawMessage) (Payload, error) {
	var p P
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("data of %s: %w", p.Kind(), err)
	}
	return p, nil
}

// eventFields is Event without its methods, so UnmarshalJSON can decode
// the common fields with the standard decoder.
type eventFields Event

// UnmarshalJSON decodes one events.jsonl line, the payload under "data"
// into its kind's type.
func (e *Event) UnmarshalJSON(b []byte) error {
	var aux struct {
		*eventFields
		Data json.RawMessage `json:"data,omitempty"`
	}
	aux.eventFields = (*eventFields)(e)
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	e.Data = nil
	if len(aux.Data) == 0 || string(aux.Data) == "null" {
		return nil
	}
	p, err := decodePayload(e.Kind, aux.Data)
	if err != nil {
		return err
	}
	e.Data = p
	return nil
}
