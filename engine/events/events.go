// Package events is a run's event stream: the event types every part of
// kasmrt records and reads, and the bus that orders, redacts and delivers
// them.
package events

import (
	"sync"
	"time"
)

// Kind names what an event records. The stream of events is the single
// source of truth for a run: the report, the console and the replay are
// all made from it.
type Kind string

// Event kinds, in roughly the order a run emits them. A kind whose
// comment names a type carries that Payload in Event.Data; the other
// fields it uses are listed after it.
const (
	KindRunStarted     Kind = "run.started"     // RunStarted
	KindDisplayStarted Kind = "session.started" // DisplayStarted (the kind keeps its first name)
	KindAppLaunched    Kind = "app.launched"    // AppLaunched
	KindAppWindow      Kind = "app.window"      // AppWindow; Box: the window
	KindAppExited      Kind = "app.exited"      // Message: how it ended
	KindAppWindows     Kind = "app.windows"     // AppWindows; Message: what was seen; Screen: the capture at the timeout
	KindTools          Kind = "tools"           // ToolList; Message: what widened it
	KindScreen         Kind = "screen"          // ScreenCaptured; Screen: the capture's file
	KindFinal          Kind = "final"           // FinalCapture; Screen: the last capture (none when the display was gone), Message: why there is none
	KindStepStarted    Kind = "step.started"    // Step, Tool, Args, Source
	KindStepEnded      Kind = "step.ended"      // Step, Tool, Args, Source, Status, Message, Screen, DurationMS, Point
	KindProposal       Kind = "proposal"        // step mode: a call waiting for approval (Step, Tool, Args)
	KindModelRequest   Kind = "model.request"   // ModelRequest
	KindModelReply     Kind = "model.reply"     // ModelReply; Usage, DurationMS, Message (text excerpt)
	KindModelRetry     Kind = "model.retry"     // ModelRetry; Message: why
	KindModelFailed    Kind = "model.failed"    // ModelFailed; Message: the error
	KindModelDisabled  Kind = "model.disabled"  // Message: why
	KindGrounding      Kind = "grounding"       // Grounding, Point, Box, Screen
	KindBudget         Kind = "budget"          // Budgets: every bound with its use and limit
	KindConcern        Kind = "concern"         // Message
	KindCheck          Kind = "check"           // Check
	KindQuestion       Kind = "question"        // Question (asked)
	KindAnswer         Kind = "answer"          // Question (with answer or the reason there is none)
	KindRespond        Kind = "respond"         // Message: the model's message to the operator
	KindSteer          Kind = "steer"           // Steer: an operator action
	KindLoopEnded      Kind = "loop.ended"      // LoopEnded; Message: why the loop ended
	KindVerdict        Kind = "verdict"         // Verdict
	KindRunEnded       Kind = "run.ended"       // RunEnded
	KindLog            Kind = "log"             // Message: a diagnostic line
)

// Source says who chose a step or an operator action: the event's
// source, report.json's steps[].source.
type Source string

// Sources of steps and actions.
const (
	SourceScript   Source = "script"   // a scripted scenario's step
	SourceModel    Source = "model"    // the model's call in a goal run
	SourceAgent    Source = "agent"    // an outside agent's call (MCP, HTTP)
	SourceOperator Source = "operator" // the operator, steering from the console
	SourceCache    Source = "cache"    // a goal run's call replayed from the action cache
)

// Planned reports whether a goal run's planner chose the call: the model,
// or the action cache replaying a call the model once chose. Such calls
// meet every guard the model's do.
func (s Source) Planned() bool { return s == SourceModel || s == SourceCache }

// Status is how a step ended, as report.json's steps[].status writes it.
type Status string

// Step statuses.
const (
	StatusOK        Status = "ok"
	StatusRefused   Status = "refused"
	StatusMalformed Status = "malformed"
	StatusError     Status = "error"
)

// Event is one entry of a run's event stream. Only the fields its kind
// uses are set; events.jsonl holds them one per line.
type Event struct {
	Seq  int64     `json:"seq"`
	T    time.Time `json:"t"`
	Kind Kind      `json:"kind"`

	Step       int            `json:"step,omitempty"`
	Tool       string         `json:"tool,omitempty"`
	Args       map[string]any `json:"args,omitempty"`
	Source     Source         `json:"source,omitempty"`
	Status     Status         `json:"status,omitempty"`
	Message    string         `json:"message,omitempty"`
	Screen     string         `json:"screen,omitempty"` // path relative to the report directory
	DurationMS int64          `json:"duration_ms,omitempty"`
	Point      *Point         `json:"point,omitempty"`
	Box        *Rect          `json:"box,omitempty"`

	Grounding *Grounding         `json:"grounding,omitempty"`
	Budgets   []Budget           `json:"budgets,omitempty"`
	Check     *Check             `json:"check,omitempty"`
	Question  *Question          `json:"question,omitempty"`
	Steer     *Steer             `json:"steer,omitempty"`
	Verdict   *Decision          `json:"verdict,omitempty"`
	Usage     map[string]float64 `json:"usage,omitempty"`
	// Data is the kind's own payload (see Payload); nil for kinds without
	// one.
	Data Payload `json:"data,omitempty"`
}

// Point is a position on the screen in pixels.
type Point struct {
	X int `json:"x"`
	Y int `json:"y"`
}

// Rect is a rectangle on the screen in pixels.
type Rect struct {
	X int `json:"x"`
	Y int `json:"y"`
	W int `json:"w"`
	H int `json:"h"`
}

// Grounding outcomes; only confirmed counts as verified.
const (
	GroundingConfirmed    = "confirmed"
	GroundingContradicted = "contradicted"
	GroundingUnavailable  = "unavailable"
	// GroundingLocated is a first, whole-screen pass that a second pass
	// on a full-resolution crop around its answer refines.
	GroundingLocated = "located"
)

// Grounding is one locate-and-verify attempt of click_grounded.
type Grounding struct {
	Step        int    `json:"step"`
	Attempt     int    `json:"attempt"`
	Description string `json:"description"`
	Expect      string `json:"expect"`
	Point       *Point `json:"point"`
	Outcome     string `json:"outcome"`
	Reason      string `json:"reason,omitempty"`
	Before      string `json:"before,omitempty"` // screen before the click
	After       string `json:"after,omitempty"`  // screen after the click
	// Pass numbers the locate passes of one attempt when the screen is
	// zoomed (1: the whole screen, 2: the crop); zero for a single pass.
	Pass int `json:"pass,omitempty"`
	// Crop is the part of the before screen the pass looked at, at full
	// resolution; nil for the whole screen.
	Crop *Rect `json:"crop,omitempty"`
}

// Budget is one bound with how much of it is used. Limit 0 means
// unbounded.
type Budget struct {
	Name  string  `json:"name"`
	Used  float64 `json:"used"`
	Limit float64 `json:"limit"`
	Unit  string  `json:"unit,omitempty"`
}

// Check is one deterministic check's result.
type Check struct {
	Name     string `json:"name"` // process_alive | window_present | fatal_pattern | expected_exit
	OK       bool   `json:"ok"`
	Evidence string `json:"evidence,omitempty"`
}

// Question is an ask_human question and, once there is one, its answer.
type Question struct {
	ID     string `json:"id"`
	Text   string `json:"text"`
	Answer string `json:"answer,omitempty"`
	By     string `json:"by,omitempty"`
	// Unanswered says why no answer came (timeout, deadline, run ended).
	Unanswered string `json:"unanswered,omitempty"`
}

// Steering actions an operator can take.
const (
	SteerPause   = "pause"
	SteerResume  = "resume"
	SteerStep    = "step"    // step mode on or off (Value "on"/"off")
	SteerApprove = "approve" // approve the proposed call
	SteerReject  = "reject"  // reject it with Reason
	SteerAbort   = "abort"
	SteerNote    = "note" // a note to the model, delivered with the next turn
)

// Steer is an operator action.
type Steer struct {
	Action string `json:"action"`
	Value  string `json:"value,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// Verdict is the run's result as the runtime decides it; the exit code
// follows it.
type Verdict string

// Verdicts.
const (
	VerdictPass         Verdict = "pass"
	VerdictPassConcerns Verdict = "pass-with-concerns"
	VerdictAppFailed    Verdict = "app-failed"
	VerdictTestError    Verdict = "test-error"
)

// The verdicts the model may record with record_verdict; they inform the
// runtime's Verdict and never decide it.
const (
	ModelGoalMet    = "goal-met"
	ModelGoalNotMet = "goal-not-met"
)

// Outcome says why a run ended the way it did (completed, deadline,
// app-exited…); the engine names them (engine.Outcome*).
type Outcome string

// Decision is the verdict event's payload: the run's verdict, its
// outcome and the reasons.
type Decision struct {
	Verdict Verdict  `json:"verdict"`
	Outcome Outcome  `json:"outcome"`
	Reasons []string `json:"reasons,omitempty"`
}

// Bus orders a run's events and hands each, redacted, to every sink in
// sequence order. Sinks are called synchronously and must not block; a
// console that needs a queue keeps its own.
type Bus struct {
	mu     sync.Mutex
	seq    int64
	now    func() time.Time
	redact func(string) string
	sinks  []func(Event)
}

// NewBus returns a bus that redacts with redact (nil: no redaction).
func NewBus(redact func(string) string, sinks ...func(Event)) *Bus {
	if redact == nil {
		redact = func(s string) string { return s }
	}
	return &Bus{now: time.Now, redact: redact, sinks: sinks}
}

// Subscribe adds a sink for the events published from now on.
func (b *Bus) Subscribe(sink func(Event)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sinks = append(b.sinks, sink)
}

// Publish stamps e with the next sequence number and the time, redacts it
// and delivers it. It returns the stamped event. An event with a payload
// takes its kind from the payload, so the two cannot disagree.
func (b *Bus) Publish(e Event) Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e.Data != nil {
		e.Kind = e.Data.Kind()
	}
	b.seq++
	e.Seq = b.seq
	e.T = b.now().UTC()
	e = redactEvent(e, b.redact)
	for _, sink := range b.sinks {
		sink(e)
	}
	return e
}

// Redact returns e with every string value it carries passed through r,
// as the bus delivers it; for sinks that take events from elsewhere.
func Redact(e Event, r func(string) string) Event { return redactEvent(e, r) }

// redactEvent passes every string value an event carries through r: the
// texts, the tool name, argument values and the payload. Structural fields
// the runtime writes itself (kind, status, source, screen paths, check and
// budget names, verdicts, map keys, numbers and times) are never touched,
// so a secret that happens to equal one of them cannot damage the stream.
func redactEvent(e Event, r func(string) string) Event {
	e.Tool = r(e.Tool)
	e.Message = r(e.Message)
	e.Args = redactMap(e.Args, r)
	if len(e.Args) == 0 {
		// events.jsonl leaves empty arguments out; live events match.
		e.Args = nil
	}
	if e.Data != nil {
		e.Data = e.Data.redacted(r)
	}
	if e.Grounding != nil {
		g := *e.Grounding
		g.Description, g.Expect, g.Reason = r(g.Description), r(g.Expect), r(g.Reason)
		e.Grounding = &g
	}
	if e.Check != nil {
		c := *e.Check
		c.Evidence = r(c.Evidence)
		e.Check = &c
	}
	if e.Question != nil {
		q := *e.Question
		q.Text, q.Answer, q.By, q.Unanswered = r(q.Text), r(q.Answer), r(q.By), r(q.Unanswered)
		e.Question = &q
	}
	if e.Steer != nil {
		s := *e.Steer
		s.Value, s.Reason = r(s.Value), r(s.Reason)
		e.Steer = &s
	}
	if e.Verdict != nil {
		v := *e.Verdict
		v.Reasons = redactStrings(e.Verdict.Reasons, r)
		e.Verdict = &v
	}
	return e
}

// RedactValue passes every string in v — a value as JSON decodes it, or
// built of maps, slices and strings — through r, leaving keys, numbers and
// booleans alone. It returns a copy; v is not changed.
func RedactValue(v any, r func(string) string) any {
	switch x := v.(type) {
	case string:
		return r(x)
	case []string:
		return redactStrings(x, r)
	case []any:
		out := make([]any, len(x))
		for i, s := range x {
			out[i] = RedactValue(s, r)
		}
		return out
	case map[string]any:
		return redactMap(x, r)
	}
	return v
}

func redactMap(m map[string]any, r func(string) string) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = RedactValue(v, r)
	}
	return out
}
