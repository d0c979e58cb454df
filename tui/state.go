package tui

import (
	"time"

	"github.com/kasmrt/kasmrt/engine/events"
)

// ReserveDuration is the end of the deadline the runtime keeps for diagnosis
// and the report (docs/architecture.md, "The rules"); the budgets pane shows it.
const ReserveDuration = 30 * time.Second

// RowKind says what a timeline row shows.
type RowKind int

// Timeline row kinds.
const (
	RowStep RowKind = iota
	RowGrounding
	RowSteer
	RowModel // retries, failures, the model being disabled, waits for capacity
	RowCheck
	RowApp
	RowLoop
)

// Row is one line of the timeline. Step rows are updated in place when
// their step ends.
type Row struct {
	Kind  RowKind
	Index int // the event's index in the stream that made the row
	Event events.Event
	// Ended is the step.ended event of a step row (nil while it runs) and
	// EndIndex its index in the stream.
	Ended    *events.Event
	EndIndex int
	// Screen is the capture that shows the row's result: the latest one
	// when the row was last updated. Before is the capture current when a
	// step started. Point and Box are the marks that go with Screen.
	Screen, Before string
	Point          *events.Point
	Box            *events.Rect
}

// Last is the index of the row's newest event: where the replay lands to
// show the row with its result.
func (r Row) Last() int {
	if r.Ended != nil {
		return r.EndIndex
	}
	return r.Index
}

// Status is a step row's status, "running" while it has not ended.
func (r Row) Status() string {
	if r.Ended == nil {
		return "running"
	}
	return string(r.Ended.Status)
}

// Refusal reports whether the row is a refused or malformed step.
func (r Row) Refusal() bool {
	return r.Kind == RowStep && r.Ended != nil &&
		(r.Ended.Status == events.StatusRefused || r.Ended.Status == events.StatusMalformed)
}

// Failed reports whether the row is a step that did not succeed: refused,
// malformed or failed with an error.
func (r Row) Failed() bool {
	return r.Kind == RowStep && r.Ended != nil && r.Ended.Status != events.StatusOK && r.Ended.Status != ""
}

// Step is the step number the row belongs to (a grounding attempt's
// step), or 0.
func (r Row) Step() int {
	if r.Kind == RowGrounding && r.Event.Grounding != nil {
		return r.Event.Grounding.Step
	}
	if r.Kind == RowStep {
		return r.Event.Step
	}
	return 0
}

// GroundingRow reports whether the row belongs to grounding: an attempt or
// a click_grounded step.
func (r Row) GroundingRow() bool {
	return r.Kind == RowGrounding || (r.Kind == RowStep && r.Event.Tool == "click_grounded")
}

// InboxItem is one entry of the inbox history.
type InboxItem struct {
	Kind     events.Kind // question, answer, respond, steer (notes)
	T        time.Time
	Question *events.Question
	Text     string
}

// State is what the console shows, folded from the event stream. The live
// view applies events as they come; the replay folds a prefix of a saved
// stream; the transcript folds all of it.
type State struct {
	Scenario, Goal, Mode string
	Started, Now         time.Time
	Deadline             time.Duration
	// Reserve is the end of the deadline kept for diagnosis and the
	// report, as the run announced it (ReserveDuration when it did not).
	Reserve time.Duration

	Rows      []Row
	stepRows  map[int]int // step number -> index of its latest row
	Budgets   []events.Budget
	Concerns  []string
	Checks    []events.Check
	Inbox     []InboxItem
	Questions []*events.Question // every question asked, answered or not
	Verdict   *events.Decision
	LoopEnded string
	// Cache is the action cache's last account (hits, misses, where it
	// fell back, the model calls saved), "" when the run used none.
	Cache string
	Ended bool
	// NoClickElement says why the run offers no click_element, when the
	// tools event said so.
	NoClickElement string

	// Screen is the latest capture (relative to the report directory), with
	// the last click point and grounding box to mark on it.
	Screen      string
	ScreenW     int
	ScreenH     int
	ScreenCount int
	Point       *events.Point
	Box         *events.Rect
	// windows holds the application's window on each capture (WindowOn);
	// appWindow is where it appeared at launch, for runs whose captures
	// carry none.
	windows   map[string]events.Rect
	appWindow *events.Rect
	// pixels is the newest capture's image in memory, on a live run in
	// the console's own process (PixelsOf); pixelsOf is its path.
	pixels   events.ScreenPixels
	pixelsOf string
	// Grounding is the latest grounding attempt (its Before/After screens
	// are shown side by side).
	Grounding *events.Grounding

	Proposal *events.Event // a call waiting for approval in step mode
	Paused   bool
	StepMode bool
	Aborted  bool

	ModelIteration int
	ModelText      string
	// Turns are the model turns so far, each with what it was sent and
	// what it did; StepTurn maps a step to the turn that called it.
	Turns      []Turn
	StepTurn   map[int]int
	Usage      map[string]float64
	ModelCalls int // model replies so far
	Seen       int // events applied
}

// NewState returns an empty state.
func NewState() *State {
	return &State{stepRows: map[int]int{}, StepTurn: map[int]int{}, windows: map[string]events.Rect{}, Usage: map[string]float64{}, Reserve: ReserveDuration}
}

// FoldState applies evs in order to a new state.
func FoldState(evs []events.Event) *State {
	s := NewState()
	for i, e := range evs {
		s.Apply(i, e)
	}
	return s
}

// Pending returns the questions still waiting for an answer, oldest first.
func (s *State) Pending() []*events.Question {
	var out []*events.Question
	for _, q := range s.Questions {
		if q.Answer == "" && q.Unanswered == "" {
			out = append(out, q)
		}
	}
	return out
}

// Remaining is how much of the deadline is left at s.Now (0 without a
// deadline).
func (s *State) Remaining() time.Duration {
	if s.Deadline <= 0 || s.Started.IsZero() {
		return 0
	}
	return max(0, s.Deadline-s.Now.Sub(s.Started))
}

// Apply folds event e, the index-th of its stream, into s.
func (s *State) Apply(index int, e events.Event) {
	rows := len(s.Rows)
	s.apply(index, e)
	// A new row shows the screen as it was when it was made.
	for i := rows; i < len(s.Rows); i++ {
		if s.Rows[i].Screen == "" {
			s.Rows[i].Screen = s.Screen
		}
	}
}

func (s *State) apply(index int, e events.Event) {
	s.Seen++
	if !e.T.IsZero() {
		s.Now = e.T
	}
	switch e.Kind {
	case events.KindRunStarted:
		s.Started = e.T
		d, ok := events.DataOf[events.RunStarted](e)
		if !ok {
			break
		}
		s.Scenario, s.Goal, s.Mode = d.Scenario, d.Goal, d.Mode
		if d.DeadlineS > 0 {
			s.Deadline = time.Duration(d.DeadlineS * float64(time.Second))
		}
		s.Reserve = reserveOf(d)
	case events.KindAppLaunched, events.KindAppExited, events.KindAppWindows, events.KindAppHung,
		events.KindTakeoverStarted, events.KindTakeoverEnded:
		s.Rows = append(s.Rows, Row{Kind: RowApp, Index: index, Event: e})
	case events.KindConsole:
		// The page's errors and uncaught exceptions are worth a row; its
		// ordinary logging stays in the report.
		if d, ok := events.DataOf[events.ConsoleMessage](e); ok && (d.Level == "error" || d.Level == "exception") {
			s.Rows = append(s.Rows, Row{Kind: RowApp, Index: index, Event: e})
		}
	case events.KindFinal:
		// The run's last capture gets a row of its own, so the timeline
		// ends on how the application was left.
		s.Rows = append(s.Rows, Row{Kind: RowApp, Index: index, Event: e})
		s.setScreen(e.Screen)
		if d, ok := events.DataOf[events.FinalCapture](e); ok {
			s.screenShape(e.Screen, d.Window, d.Width, d.Height)
		}
	case events.KindAppWindow:
		if e.Box != nil {
			w := *e.Box
			s.appWindow = &w
		}
	case events.KindScreen:
		if d, ok := events.DataOf[events.ScreenCaptured](e); ok && d.Pixels != nil && e.Screen != "" {
			// Only the newest is kept: the one a following console
			// draws. An older capture is read from its file.
			s.pixels, s.pixelsOf = d.Pixels, e.Screen
		}
		s.setScreen(e.Screen)
		if d, ok := events.DataOf[events.ScreenCaptured](e); ok {
			s.screenShape(e.Screen, d.Window, d.Width, d.Height)
		}
	case events.KindStepStarted:
		if s.Proposal != nil && s.Proposal.Step == e.Step {
			s.Proposal = nil
		}
		s.stepRows[e.Step] = len(s.Rows)
		s.Rows = append(s.Rows, Row{Kind: RowStep, Index: index, Event: e, Before: s.Screen})
		s.linkTurn(e)
	case events.KindStepEnded:
		ended := e
		i, ok := s.stepRows[e.Step]
		if ok && s.Rows[i].Ended == nil {
			s.Rows[i].Ended = &ended
			s.Rows[i].EndIndex = index
		} else {
			// A step refused before it started (guards run first) has no
			// step.started; its end is its only row.
			i = len(s.Rows)
			s.stepRows[e.Step] = i
			s.Rows = append(s.Rows, Row{Kind: RowStep, Index: index, Event: e, Ended: &ended, EndIndex: index, Before: s.Screen})
		}
		s.linkTurn(e)
		if s.Proposal != nil && s.Proposal.Step == e.Step {
			s.Proposal = nil
		}
		s.setScreen(e.Screen)
		if e.Point != nil {
			s.Point, s.Box = e.Point, nil
		}
		s.Rows[i].Screen, s.Rows[i].Point = s.Screen, e.Point
	case events.KindProposal:
		p := e
		s.Proposal = &p
	case events.KindModelRequest:
		// A request without its payload (a stream from before it had
		// one) still opens a turn, so its reply has one to join.
		turn := Turn{Index: index, T: e.T}
		if d, ok := events.DataOf[events.ModelRequest](e); ok {
			s.ModelIteration, turn.Request = d.Iteration, d
		}
		s.Turns = append(s.Turns, turn)
	case events.KindModelReply:
		s.ModelText = e.Message
		s.ModelCalls++
		for k, v := range e.Usage {
			s.Usage[k] += v
		}
		if n := len(s.Turns); n > 0 {
			t := &s.Turns[n-1]
			if t.Reply == nil {
				reply := e
				t.Reply = &reply
			} else {
				// Locating and judging for a grounded click ask the
				// model too, within the turn that called it.
				t.Aux++
			}
		}
	case events.KindModelRetry, events.KindModelFailed, events.KindModelDisabled, events.KindCapacityWait, events.KindCapacityAcquired:
		s.Rows = append(s.Rows, Row{Kind: RowModel, Index: index, Event: e})
	case events.KindGrounding:
		if e.Grounding != nil {
			g := *e.Grounding
			s.Grounding = &g
		}
		s.setScreen(e.Screen)
		s.Point, s.Box = e.Point, e.Box
		if e.Point == nil && e.Grounding != nil {
			s.Point = e.Grounding.Point
		}
		s.Rows = append(s.Rows, Row{Kind: RowGrounding, Index: index, Event: e, Screen: s.Screen, Point: s.Point, Box: s.Box})
	case events.KindTools:
		// A later tools event (a browser tab attaching) keeps the reason.
		d, ok := events.DataOf[events.ToolList](e)
		if !ok {
			break
		}
		if d.NoClickElement != "" {
			s.NoClickElement = d.NoClickElement
		} else if d.ATSPIControls > 0 {
			s.NoClickElement = ""
		}
	case events.KindBudget:
		s.Budgets = e.Budgets
	case events.KindConcern:
		s.Concerns = append(s.Concerns, e.Message)
	case events.KindBaseline:
		// A screenshot check's row shows its diff (or, with no baseline,
		// the window kept for approval) when it is selected.
		d, ok := events.DataOf[events.Baseline](e)
		if !ok {
			break
		}
		screen := d.Diff
		if screen == "" {
			screen = d.Actual
		}
		s.Rows = append(s.Rows, Row{Kind: RowCheck, Index: index, Event: e, Screen: screen})
		// A window that differs shows its diff until the next capture, so
		// following a run (or replaying it) shows what changed.
		if d.Diff != "" {
			s.setScreen(d.Diff)
			s.Point, s.Box = nil, nil
		}
	case events.KindCheck:
		if e.Check != nil {
			s.Checks = append(s.Checks, *e.Check)
			s.Rows = append(s.Rows, Row{Kind: RowCheck, Index: index, Event: e})
		}
	case events.KindQuestion:
		if e.Question != nil {
			q := *e.Question
			s.Questions = append(s.Questions, &q)
			s.Inbox = append(s.Inbox, InboxItem{Kind: e.Kind, T: e.T, Question: &q, Text: q.Text})
		}
	case events.KindAnswer:
		if e.Question != nil {
			for _, q := range s.Questions {
				if q.ID == e.Question.ID {
					q.Answer, q.By, q.Unanswered = e.Question.Answer, e.Question.By, e.Question.Unanswered
				}
			}
			q := *e.Question
			text := q.Answer
			if text == "" {
				text = "unanswered: " + q.Unanswered
			}
			s.Inbox = append(s.Inbox, InboxItem{Kind: e.Kind, T: e.T, Question: &q, Text: text})
		}
	case events.KindRespond:
		s.Inbox = append(s.Inbox, InboxItem{Kind: e.Kind, T: e.T, Text: e.Message})
	case events.KindSteer:
		if e.Steer == nil {
			break
		}
		switch e.Steer.Action {
		case events.SteerPause:
			s.Paused = true
		case events.SteerResume:
			s.Paused = false
		case events.SteerStep:
			s.StepMode = e.Steer.Value != "off"
		case events.SteerApprove, events.SteerReject:
			s.Proposal = nil
		case events.SteerAbort:
			s.Aborted = true
		case events.SteerNote:
			s.Inbox = append(s.Inbox, InboxItem{Kind: e.Kind, T: e.T, Text: e.Steer.Value})
		}
		s.Rows = append(s.Rows, Row{Kind: RowSteer, Index: index, Event: e})
	case events.KindLoopEnded:
		s.LoopEnded = e.Message
		s.Rows = append(s.Rows, Row{Kind: RowLoop, Index: index, Event: e})
	case events.KindCache:
		s.Cache = e.Message
		s.Rows = append(s.Rows, Row{Kind: RowLoop, Index: index, Event: e})
	case events.KindVerdict:
		if e.Verdict != nil {
			v := *e.Verdict
			s.Verdict = &v
		}
	case events.KindRunEnded:
		s.Ended = true
		s.Proposal = nil
		// Every screen is on disk once the run has ended; a console kept
		// open on many ended runs (the fleet's) holds none of them.
		s.pixels, s.pixelsOf = nil, ""
	case events.KindDisplayStarted, events.KindConsoleSummary, events.KindLog:
		// Nothing on the console's panes: the display is in the header's
		// scenario line only through its screens, the console's count is
		// the report's, and log lines are for --headless and the
		// transcript.
	}
}

// Turn is one model turn: the request with what it carried, the reply and
// the calls it made.
type Turn struct {
	// Index is the model.request's index in the stream.
	Index   int
	T       time.Time
	Request events.ModelRequest
	// Reply is the loop's model.reply (nil while the model thinks).
	Reply *events.Event
	// Aux counts the further model calls made within the turn.
	Aux int
	// Steps are the steps of the calls the reply made.
	Steps []int
}

// linkTurn ties a model's step to the newest turn, the one whose reply
// made the call.
func (s *State) linkTurn(e events.Event) {
	if e.Source != events.SourceModel || len(s.Turns) == 0 {
		return
	}
	if _, ok := s.StepTurn[e.Step]; ok {
		return
	}
	n := len(s.Turns) - 1
	s.StepTurn[e.Step] = n
	s.Turns[n].Steps = append(s.Turns[n].Steps, e.Step)
}

// TurnOf returns the turn that called step, if a model's turn did.
func (s *State) TurnOf(step int) (int, bool) {
	i, ok := s.StepTurn[step]
	return i, ok
}

func (s *State) setScreen(path string) {
	if path != "" && path != s.Screen {
		s.Screen = path
		s.ScreenCount++
	}
}

// PixelsOf is capture screen's image in memory when the run handed it
// over (the newest capture of a live run in this process), else nil: the
// file in the report directory is the picture.
func (s *State) PixelsOf(screen string) events.ScreenPixels {
	if screen == "" || screen != s.pixelsOf {
		return nil
	}
	return s.pixels
}

// screenShape records what a capture's payload says of it: the
// application's window on it, and the screen's size.
func (s *State) screenShape(screen string, window *events.Rect, w, h int) {
	if window != nil && screen != "" {
		s.windows[screen] = *window
	}
	if w > 0 && h > 0 {
		s.ScreenW, s.ScreenH = w, h
	}
}

// WindowOn is the application's window on the capture screen: the one its
// screen event names. A run whose screen events name none (recorded before
// they did) has the window found at launch instead; in a run that names
// them, a capture without one (a diagnostic, the final screen) has none.
func (s *State) WindowOn(screen string) *events.Rect {
	if w, ok := s.windows[screen]; ok {
		return &w
	}
	if len(s.windows) > 0 {
		return nil
	}
	return s.appWindow
}

// reserveOf is the part of the deadline the run announced it keeps for
// the final checks, or the default for runs that announced none.
func reserveOf(d events.RunStarted) time.Duration {
	if d.ReserveS > 0 {
		return time.Duration(d.ReserveS * float64(time.Second))
	}
	return ReserveDuration
}
