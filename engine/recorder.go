package engine

import (
	"context"
	"fmt"
	"image"
	"maps"
	"slices"
	"strings"

	"github.com/kasmrt/kasmrt/drivers/ocr"
	"github.com/kasmrt/kasmrt/engine/baseline"
	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/scenarios"
)

// SourceRecord marks the steps an operator demonstrates with `kasmrt
// record`. They run as a script's steps do — same guards, same tools, the
// same retries a script gets — because the scenario written from them will
// replay them as a script.
const SourceRecord = events.SourceScript

// Seen is what a recording session sees of the application at one moment:
// the raw material of the checks the recorder proposes and of the choices
// it offers. Every text in it is the application's, redacted.
type Seen struct {
	// Title is the startup window's title, which expect.window_title
	// checks.
	Title string
	// Windows are the application's titled windows, top of the stack
	// first.
	Windows []SeenWindow
	// ControlsWindow is the focused window whose named controls Controls
	// lists (empty when every window's are listed).
	ControlsWindow string
	// Controls are the named controls the Environment Update would list,
	// with their states; More counts those left out.
	Controls []SeenControl
	More     int
	// Pointer is where the last input went, when known.
	Pointer *events.Point
	// NearText is the line OCR reads nearest the pointer ("" when the
	// pointer is not known), and Lines every line it reads in the window,
	// in reading order (at most maxSeenLines).
	NearText string
	Lines    []string
	// Elements are the page elements the cdp_targets name, as the page
	// shows them now.
	Elements []SeenElement
	// Tools is the run's tool list by name, and Vocabulary the names its
	// tools take, as the run knows them now (with the definitions made
	// during the recording).
	Tools      []string
	Vocabulary Vocabulary
	// Window is the window as a screenshot check captures it (the page,
	// when the page is the screen), with the secrets on it blacked out,
	// once two captures in a row were identical; nil when it could not be
	// captured steady. It becomes the baseline of a screenshot check the
	// operator accepts, so the replay compares with exactly what the
	// check will capture.
	Window *image.RGBA
}

// SeenWindow is one of the application's windows.
type SeenWindow struct {
	Class, Instance, Title string
	Focused                bool
}

// SeenControl is a named control and its state.
type SeenControl struct {
	Name, Role                string
	Enabled, Checked, Focused bool
	// Stated is false when the control's state could not be read.
	Stated bool
}

// SeenElement is the first element a cdp_targets selector matches.
type SeenElement struct {
	Target  string
	Found   bool
	Visible bool
	Text    string
}

// Vocabulary is the names a recording can use: the scenario's click
// targets, page targets, values to type by ref, windows, declared tools and
// pages.
type Vocabulary struct {
	ClickTargets, CDPTargets, Refs, Windows, CDPURLs []string
	// WaitConditions and CDPWaits are what wait_while and cdp_wait wait
	// for.
	WaitConditions, CDPWaits []string
	// Declared are the declared tools' calls: each tool with every
	// combination of its parameters' values (at most maxDeclaredCalls a
	// tool).
	Declared []DeclaredCall
}

// DeclaredCall is one call of a declared tool.
type DeclaredCall struct {
	Tool string
	Args map[string]any
}

// maxDeclaredCalls bounds the combinations of one declared tool's values
// a recording offers.
const maxDeclaredCalls = 24

// Definition is a name the operator gives during a recording: a window
// for switch_window or a click target, added to the run's scenario so the
// steps that follow can use it, and to the scenario written at the end.
type Definition struct {
	Window      string
	WindowMatch scenarios.WindowMatch
	Target      string
	ClickTarget scenarios.ClickTarget
}

type agentLook struct {
	ctx   context.Context
	at    *events.Point
	reply chan Seen
}

type agentDefine struct {
	def   Definition
	reply chan error
}

// Record runs one step the operator demonstrated, as a scripted step:
// through the run's guards and tools, then the checks every step gets.
// A refused or failed step is not an error; its Status and Message say
// what happened, and the session goes on unless the application ended.
func (s *AgentRun) Record(ctx context.Context, tool string, args map[string]any) (CallResult, error) {
	if !s.busy.TryLock() {
		return CallResult{}, ErrBusy
	}
	defer s.busy.Unlock()
	if args == nil {
		args = map[string]any{}
	}
	c := agentCall{ctx: ctx, tool: tool, args: args, source: SourceRecord, reply: make(chan CallResult, 1)}
	select {
	case s.feed.calls <- c:
	case <-s.feed.over:
		return CallResult{}, ErrAgentRunOver
	case <-ctx.Done():
		return CallResult{}, ctx.Err()
	}
	return <-c.reply, nil
}

// Look reads what the application shows now (at is where the last input
// went, nil when unknown). It takes the run's goroutine for as long as the
// accessibility walk and OCR take.
func (s *AgentRun) Look(ctx context.Context, at *events.Point) (Seen, error) {
	l := agentLook{ctx: ctx, at: at, reply: make(chan Seen, 1)}
	select {
	case s.feed.looks <- l:
	case <-s.feed.over:
		return Seen{}, ErrAgentRunOver
	case <-ctx.Done():
		return Seen{}, ctx.Err()
	}
	return <-l.reply, nil
}

// Define adds a window or click target the operator named to the run's
// scenario; the tool list is rebuilt so the next step can use it.
func (s *AgentRun) Define(ctx context.Context, d Definition) error {
	req := agentDefine{def: d, reply: make(chan error, 1)}
	select {
	case s.feed.defines <- req:
	case <-s.feed.over:
		return ErrAgentRunOver
	case <-ctx.Done():
		return ctx.Err()
	}
	return <-req.reply
}

// define applies a Definition in the run's goroutine. The maps are
// replaced rather than written to, so a reader holding the old one is
// not raced.
func (s *runState) define(d Definition) error {
	sc := s.files.Scenario
	switch {
	case d.Window != "":
		if _, dup := sc.Windows[d.Window]; dup {
			return fmt.Errorf("the scenario already names a window %q", d.Window)
		}
		m := maps.Clone(sc.Windows)
		if m == nil {
			m = map[string]scenarios.WindowMatch{}
		}
		m[d.Window] = d.WindowMatch
		sc.Windows = m
	case d.Target != "":
		if _, dup := sc.ClickTargets[d.Target]; dup {
			return fmt.Errorf("the scenario already names a click target %q", d.Target)
		}
		m := maps.Clone(sc.ClickTargets)
		if m == nil {
			m = map[string]scenarios.ClickTarget{}
		}
		m[d.Target] = d.ClickTarget
		sc.ClickTargets = m
	default:
		return fmt.Errorf("a definition names a window or a click target")
	}
	s.setTools(s.book.offers)
	return nil
}

// look reads what the recorder proposes checks from. Each part is read on
// its own: one that cannot be read (no accessibility, no OCR, no page) is
// left empty and logged, never an error, since the others still help.
func (a *actor) look(ctx, callerCtx context.Context, at *events.Point) Seen {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(callerCtx, cancel)
	defer stop()

	seen := Seen{Pointer: at, Tools: slices.Clone(a.book.names), Vocabulary: a.env.vocabulary()}
	if a.env.hasWin && a.env.desk != nil {
		if w, err := a.env.desk.Window(a.env.win.ID); err == nil {
			seen.Title = a.r.Redact(w.Title)
		}
	}
	if wins, _, err := a.env.appWindows(); err == nil {
		for i := len(wins) - 1; i >= 0; i-- {
			w := wins[i].win
			seen.Windows = append(seen.Windows, SeenWindow{Class: w.Class, Instance: w.Instance,
				Title: a.r.Redact(w.Title), Focused: wins[i].focused})
		}
	}
	a.lookControls(ctx, &seen)
	seen.NearText, seen.Lines = a.readLines(ctx, at)
	a.lookElements(ctx, &seen)
	seen.Window = a.steadyWindow(ctx)
	return seen
}

// maxSteadyCaptures bounds the captures a look makes waiting for the
// window to hold still: one that keeps changing (an animation) offers no
// baseline.
const maxSteadyCaptures = 8

// steadyWindow captures the window as a screenshot check does
// (windowCapture) until two captures in a row are identical, as the check
// waits before comparing; nil when the window did not hold still or could
// not be captured.
func (a *actor) steadyWindow(ctx context.Context) *image.RGBA {
	var prev *image.RGBA
	for range maxSteadyCaptures {
		img, err := a.env.windowCapture(ctx)
		if err != nil {
			a.log("capture the window for the recorder: %v", err)
			return nil
		}
		if baseline.Same(prev, img) {
			return img
		}
		prev = img
	}
	a.log("capture the window for the recorder: it kept changing over %d captures", maxSteadyCaptures)
	return nil
}

// lookControls lists the named controls as the Environment Update does
// (focusedControls), with each one's state from the same walk's names.
func (a *actor) lookControls(ctx context.Context, seen *Seen) {
	listed := a.focusedControls(ctx)
	if len(listed.List) == 0 {
		return
	}
	seen.ControlsWindow, seen.More = listed.Window, listed.More
	states := map[string]SeenControl{}
	if all, err := a.env.accessibleControls(ctx); err == nil {
		for _, c := range all {
			name := a.r.Redact(c.Name)
			if _, dup := states[name]; !dup {
				states[name] = SeenControl{Name: name, Role: c.Role, Enabled: c.Enabled, Checked: c.Checked, Focused: c.Focused, Stated: true}
			}
		}
	}
	for _, c := range listed.List {
		sc, ok := states[c.Name]
		if !ok {
			sc = SeenControl{Name: c.Name, Role: c.Role}
		}
		seen.Controls = append(seen.Controls, sc)
	}
}

// maxSeenLines bounds the lines of text a look keeps.
const maxSeenLines = 60

// readLines reads the window by OCR and returns the line nearest at ("" when
// at is nil) and every line read.
func (a *actor) readLines(ctx context.Context, at *events.Point) (string, []string) {
	img, err := a.env.windowImage(ctx)
	if err != nil {
		a.log("read the window for the recorder: %v", err)
		return "", nil
	}
	ctx, cancel := context.WithTimeout(ctx, ocrTimeout)
	defer cancel()
	words, err := a.env.textReader().ReadText(ctx, img)
	if err != nil {
		a.log("read the window's text for the recorder: %v", err)
		return "", nil
	}
	var lines []string
	for _, l := range strings.Split(ocr.Text(words), "\n") {
		if l = normalizeSpace(l); l != "" && len(lines) < maxSeenLines {
			lines = append(lines, a.r.Redact(l))
		}
	}
	if at == nil {
		return "", lines
	}
	return a.r.Redact(NearestLine(words, &image.Point{X: at.X, Y: at.Y})), lines
}

// NearestLine returns the words of the OCR line nearest p, joined by
// spaces; with p nil, the first line with a word of two letters or more.
// Lines of stray marks (single characters) are skipped: they make checks
// that OCR may not read the same way twice.
func NearestLine(words []ocr.Word, p *image.Point) string {
	lines := map[int][]ocr.Word{}
	var order []int
	for _, w := range words {
		if strings.TrimSpace(w.Text) == "" {
			continue
		}
		if _, ok := lines[w.Line]; !ok {
			order = append(order, w.Line)
		}
		lines[w.Line] = append(lines[w.Line], w)
	}
	best, bestD := -1, 0
	for _, n := range order {
		ws := lines[n]
		if !slices.ContainsFunc(ws, func(w ocr.Word) bool { return len([]rune(strings.TrimSpace(w.Text))) >= 2 }) {
			continue
		}
		if p == nil {
			best = n
			break
		}
		box := ws[0].Box
		for _, w := range ws[1:] {
			box = box.Union(w.Box)
		}
		d := boxDistance2(box, *p)
		if best < 0 || d < bestD {
			best, bestD = n, d
		}
	}
	if best < 0 {
		return ""
	}
	parts := make([]string, 0, len(lines[best]))
	for _, w := range lines[best] {
		parts = append(parts, strings.TrimSpace(w.Text))
	}
	return strings.Join(parts, " ")
}

// boxDistance2 is the squared distance from p to the nearest point of r.
func boxDistance2(r image.Rectangle, p image.Point) int {
	dx := max(r.Min.X-p.X, 0, p.X-(r.Max.X-1))
	dy := max(r.Min.Y-p.Y, 0, p.Y-(r.Max.Y-1))
	return dx*dx + dy*dy
}

// lookElements reads the first match of every cdp_targets selector.
func (a *actor) lookElements(ctx context.Context, seen *Seen) {
	if a.env.web == nil || a.env.web.Tab == nil {
		return
	}
	for _, name := range sortedKeys(a.files.Scenario.CDPTargets) {
		callCtx, cancel := context.WithTimeout(ctx, cdpCallTimeout)
		st, err := a.env.web.Tab.Query(callCtx, a.files.Scenario.CDPTargets[name])
		cancel()
		if err != nil {
			a.log("read cdp target %s for the recorder: %v", name, err)
			continue
		}
		seen.Elements = append(seen.Elements, SeenElement{Target: name, Found: st.Found, Visible: st.Visible,
			Text: truncate(a.r.Redact(normalizeSpace(st.Text)), 200)})
	}
}

// vocabulary lists the names the run's tools take now.
func (e *environment) vocabulary() Vocabulary {
	sc := e.files.Scenario
	v := Vocabulary{
		ClickTargets: sortedKeys(sc.ClickTargets),
		CDPTargets:   sortedKeys(sc.CDPTargets),
		Refs:         sortedKeys(sc.Provides),
		Windows:      sortedKeys(sc.Windows),
		CDPURLs:      sortedKeys(sc.CDPURLs),

		WaitConditions: sortedKeys(sc.WaitConditions),
		CDPWaits:       sortedKeys(sc.CDPWaits),
	}
	for _, name := range sortedKeys(sc.Tools) {
		combos := []map[string]any{{}}
		t := sc.Tools[name]
		for _, p := range t.ParamNames() {
			var next []map[string]any
			for _, c := range combos {
				for _, val := range sortedKeys(t.Parameters[p].Values) {
					if len(next) < maxDeclaredCalls {
						n := maps.Clone(c)
						n[p] = val
						next = append(next, n)
					}
				}
			}
			combos = next
		}
		for _, c := range combos {
			v.Declared = append(v.Declared, DeclaredCall{Tool: name, Args: c})
		}
	}
	for _, a := range e.answers {
		v.Refs = append(v.Refs, a.ref)
	}
	return v
}

// LoadRecording reads and validates a scenario to record against as Load
// does, except that it needs neither a goal nor steps
// (scenarios.LoadRecording): its app, browser, values, targets and tools
// are what the recording offers.
func LoadRecording(scenarioPath, operatorPath string, lookup scenarios.Lookup) (*scenarios.Files, error) {
	files, err := scenarios.LoadRecording(scenarioPath, operatorPath, lookup, checkKeyNames)
	if err != nil {
		return nil, err
	}
	if err := Check(files); err != nil {
		return nil, err
	}
	return files, nil
}
