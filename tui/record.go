package tui

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/kasmrt/kasmrt/engine"
	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/scenarios"
	"github.com/kasmrt/kasmrt/tui/sanitize"
)

// RecordSession is what the recording console needs of the run it
// records in (engine.AgentRun has it): a step run as a script's, a look at
// what the application shows, and a name made on the spot.
type RecordSession interface {
	Record(ctx context.Context, tool string, args map[string]any) (engine.CallResult, error)
	Look(ctx context.Context, at *events.Point) (engine.Seen, error)
	Define(ctx context.Context, d engine.Definition) error
}

// Recorded is what a recording made: its steps and the names given during
// it, and whether the operator finished it (rather than abandoning it).
type Recorded struct {
	Steps        []scenarios.RecordedStep
	Windows      map[string]scenarios.WindowMatch
	ClickTargets map[string]scenarios.ClickTarget
	Finished     bool
}

// recordPanelRows is the height of the recorder's panel under the live
// console on a tall terminal; recordPanelMinRows the least it shrinks to
// so the console keeps its own least height above it.
const (
	recordPanelRows    = 14
	recordPanelMinRows = 6
)

// panelRows is the height of the recorder's panel on a terminal height
// rows tall: on a small terminal (80x24) the panel gives up rows so the
// live console above it keeps the minHeight it needs to draw at all.
func panelRows(height int) int {
	return max(recordPanelMinRows, min(recordPanelRows, height-minHeight))
}

type recordStage int

const (
	stageLooking recordStage = iota
	stagePick
	stageChord
	stageName
	stageRunning
	stagePropose
)

type choiceKind int

const (
	choiceRun choiceKind = iota
	choiceChord
	choiceNameWindow
	choiceNameTarget
	choiceFinish
)

// choice is one call the recorder offers, or an action of its own.
type choice struct {
	label string
	kind  choiceKind
	tool  string
	args  map[string]any
	// def is the name a choiceName* makes before its call runs.
	def engine.Definition
}

// RecordModel is the console in recording mode: the live console of the
// session's steps above, the recorder's panel below. The panel owns the
// keyboard: the operator picks each call from what the run offers, and
// accepts the checks proposed after it.
type RecordModel struct {
	console *Model
	sess    RecordSession
	ctx     context.Context
	cancel  context.CancelFunc

	width, height int
	stage         recordStage
	status        string

	seen     engine.Seen
	pointer  *events.Point
	choices  []choice
	filtered []int
	cursor   int
	filter   textinput.Model
	input    textinput.Model
	pending  choice

	// The step that ran and waits for its checks.
	step      scenarios.RecordedStep
	before    engine.Seen
	proposals []proposal
	accepted  map[int]bool

	out Recorded
}

// NewRecord returns the recording console and the sink for the session's
// events. opts are the live console's.
func NewRecord(opts Options, sess RecordSession) (*RecordModel, func(events.Event)) {
	console, sink := NewLive(opts)
	console.helpLine = console.styles.Muted.Render("recording: the panel below takes the keys · ctrl+c abandons the recording")
	ctx, cancel := context.WithCancel(context.Background())
	filter := textinput.New()
	filter.Prompt = "› "
	filter.Placeholder = "type to filter the calls; enter runs the one selected"
	input := textinput.New()
	input.Prompt = "› "
	m := &RecordModel{
		console: console, sess: sess, ctx: ctx, cancel: cancel,
		filter: filter, input: input,
		out: Recorded{Windows: map[string]scenarios.WindowMatch{}, ClickTargets: map[string]scenarios.ClickTarget{}},
	}
	return m, sink
}

// Result is what the recording made; read it once the program has ended.
func (m *RecordModel) Result() Recorded { return m.out }

type lookMsg struct {
	seen engine.Seen
	err  error
}

type recordMsg struct {
	c   choice
	res engine.CallResult
	err error
}

type defineMsg struct {
	c   choice
	err error
}

// Init starts the console and the first look.
func (m *RecordModel) Init() tea.Cmd {
	return tea.Batch(m.console.Init(), m.look(), m.filter.Focus())
}

func (m *RecordModel) look() tea.Cmd {
	m.stage = stageLooking
	ctx, sess, at := m.ctx, m.sess, m.pointer
	return func() tea.Msg {
		seen, err := sess.Look(ctx, at)
		return lookMsg{seen: seen, err: err}
	}
}

// Update routes keys to the recorder and everything else to the console,
// which is drawn with the panel's rows taken from its height.
func (m *RecordModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.filter.SetWidth(max(10, msg.Width-4))
		m.input.SetWidth(max(10, msg.Width-4))
		return m.toConsole(tea.WindowSizeMsg{Width: msg.Width, Height: max(1, msg.Height-panelRows(msg.Height))})
	case tea.KeyPressMsg:
		return m, m.key(msg)
	case lookMsg:
		return m, m.looked(msg)
	case recordMsg:
		return m, m.ran(msg)
	case defineMsg:
		if msg.err != nil {
			m.status = "could not name it: " + msg.err.Error()
			m.stage = stagePick
			return m, nil
		}
		d := msg.c.def
		if d.Window != "" {
			m.out.Windows[d.Window] = d.WindowMatch
		} else {
			m.out.ClickTargets[d.Target] = d.ClickTarget
		}
		return m, m.run(msg.c)
	}
	return m.toConsole(msg)
}

func (m *RecordModel) toConsole(msg tea.Msg) (tea.Model, tea.Cmd) {
	_, cmd := m.console.Update(msg)
	var cmds []tea.Cmd
	cmds = append(cmds, cmd)
	switch m.stage {
	case stagePick:
		var c tea.Cmd
		m.filter, c = m.filter.Update(msg)
		cmds = append(cmds, c)
	case stageChord, stageName:
		var c tea.Cmd
		m.input, c = m.input.Update(msg)
		cmds = append(cmds, c)
	}
	return m, tea.Batch(cmds...)
}

func (m *RecordModel) quit(finished bool) tea.Cmd {
	m.out.Finished = finished
	m.cancel()
	return m.console.quit()
}

func (m *RecordModel) key(msg tea.KeyPressMsg) tea.Cmd {
	if msg.String() == "ctrl+c" {
		m.status = "recording abandoned"
		return m.quit(false)
	}
	switch m.stage {
	case stagePick:
		return m.pickKey(msg)
	case stageChord, stageName:
		return m.inputKey(msg)
	case stagePropose:
		return m.proposeKey(msg)
	}
	return nil
}

func (m *RecordModel) pickKey(msg tea.KeyPressMsg) tea.Cmd {
	switch msg.String() {
	case "up", "ctrl+p":
		m.cursor = max(0, m.cursor-1)
		return nil
	case "down", "ctrl+n":
		m.cursor = min(len(m.filtered)-1, m.cursor+1)
		return nil
	case "enter":
		if len(m.filtered) == 0 {
			m.status = "nothing matches the filter"
			return nil
		}
		return m.choose(m.choices[m.filtered[m.cursor]])
	case "esc":
		m.filter.Reset()
		m.refilter()
		return nil
	}
	var cmd tea.Cmd
	m.filter, cmd = m.filter.Update(msg)
	m.refilter()
	return cmd
}

func (m *RecordModel) choose(c choice) tea.Cmd {
	m.pending = c
	switch c.kind {
	case choiceFinish:
		return m.quit(true)
	case choiceChord:
		m.stage = stageChord
		m.input.Reset()
		m.input.Placeholder = "a key chord as press_key names it: Return, ctrl+s, alt+F4, shift+Tab"
		return m.input.Focus()
	case choiceNameWindow, choiceNameTarget:
		m.stage = stageName
		m.input.Reset()
		name := c.def.Window + c.def.Target
		m.input.SetValue(name)
		m.input.Placeholder = "a name: lower-case letters, digits and _"
		return m.input.Focus()
	}
	return m.run(c)
}

func (m *RecordModel) inputKey(msg tea.KeyPressMsg) tea.Cmd {
	switch msg.String() {
	case "esc":
		m.stage = stagePick
		m.status = ""
		return nil
	case "enter":
		v := strings.TrimSpace(m.input.Value())
		if v == "" {
			return nil
		}
		c := m.pending
		if m.stage == stageChord {
			c.tool, c.args = "press_key", map[string]any{"key": v}
			return m.run(c)
		}
		if slug(v) != v {
			m.status = fmt.Sprintf("%q is not a name: use lower-case letters, digits and _ (say %q)", v, slug(v))
			return nil
		}
		if c.def.Window != "" {
			c.def.Window = v
			c.args = map[string]any{"name": v}
		} else {
			c.def.Target = v
			c.args = map[string]any{"target": v}
		}
		m.stage = stageRunning
		sess, ctx := m.sess, m.ctx
		return func() tea.Msg { return defineMsg{c: c, err: sess.Define(ctx, c.def)} }
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	return cmd
}

func (m *RecordModel) run(c choice) tea.Cmd {
	m.stage = stageRunning
	m.status = "running " + c.tool + "…"
	m.before = m.seen
	sess, ctx := m.sess, m.ctx
	return func() tea.Msg {
		res, err := sess.Record(ctx, c.tool, c.args)
		return recordMsg{c: c, res: res, err: err}
	}
}

func (m *RecordModel) ran(msg recordMsg) tea.Cmd {
	res := msg.res
	switch {
	case msg.err != nil:
		m.status = fmt.Sprintf("%s could not run: %v; the recording ends here", msg.c.tool, msg.err)
		return m.quit(true)
	case res.Status != events.StatusOK:
		m.status = fmt.Sprintf("%s %s, not recorded: %s", msg.c.tool, res.Status, res.Message)
		if res.Ended {
			return m.quit(true)
		}
		return m.look()
	}
	if res.Point != nil {
		m.pointer = res.Point
	}
	m.step = scenarios.RecordedStep{Tool: msg.c.tool, Args: msg.c.args}
	if res.Message != "" {
		m.step.Saw = append(m.step.Saw, "it said: "+oneLine(res.Message))
	}
	if res.Ended {
		// The application finished (a dialog closed on OK): nothing is
		// left to look at, and nothing more to record.
		m.step.Saw = append(m.step.Saw, "the application ended after it")
		m.out.Steps = append(m.out.Steps, m.step)
		m.status = "the application ended; the recording is complete"
		return m.quit(true)
	}
	return m.look()
}

// looked installs a look: after a step, it proposes the checks; else it
// offers the calls.
func (m *RecordModel) looked(msg lookMsg) tea.Cmd {
	if msg.err != nil {
		m.status = "the session ended: " + msg.err.Error()
		if m.stage == stageLooking && m.step.Tool != "" {
			m.out.Steps = append(m.out.Steps, m.step)
		}
		return m.quit(true)
	}
	m.seen = msg.seen
	m.choices = buildChoices(msg.seen, m.out)
	m.refilter()
	if m.step.Tool != "" {
		m.step.Saw = append(m.step.Saw, describeSeen(msg.seen)...)
		m.proposals = proposeChecks(m.before, msg.seen, fmt.Sprintf("step%d", len(m.out.Steps)+1))
		m.accepted = map[int]bool{}
		m.stage = stagePropose
		m.status = fmt.Sprintf("%s ran; %d check(s) proposed", m.step.Tool, len(m.proposals))
		if len(m.proposals) == 0 {
			return m.keep()
		}
		return nil
	}
	m.stage = stagePick
	return nil
}

func (m *RecordModel) proposeKey(msg tea.KeyPressMsg) tea.Cmd {
	s := msg.String()
	switch {
	case len(s) == 1 && s[0] >= '1' && s[0] <= '9':
		i := int(s[0] - '1')
		if i < len(m.proposals) {
			m.accepted[i] = !m.accepted[i]
		}
	case s == "a":
		for i := range m.proposals {
			m.accepted[i] = true
		}
	case s == "enter", s == "esc":
		if s == "esc" {
			m.accepted = map[int]bool{}
		}
		return m.keep()
	}
	return nil
}

// keep records the step that ran with the checks accepted, and offers
// the next call.
func (m *RecordModel) keep() tea.Cmd {
	var e scenarios.Expect
	n := 0
	for i, p := range m.proposals {
		if m.accepted[i] {
			p.add(&e)
			if p.baseline != nil {
				m.step.Baseline = p.baseline
			}
			n++
		}
	}
	if n > 0 {
		m.step.Expect = &e
	}
	m.out.Steps = append(m.out.Steps, m.step)
	m.status = fmt.Sprintf("step %d recorded: %s with %d check(s)", len(m.out.Steps), m.step.Tool, n)
	m.step = scenarios.RecordedStep{}
	m.proposals = nil
	m.stage = stagePick
	m.filter.Reset()
	m.refilter()
	return m.filter.Focus()
}

func (m *RecordModel) refilter() {
	words := strings.Fields(strings.ToLower(m.filter.Value()))
	m.filtered = m.filtered[:0]
	for i, c := range m.choices {
		label := strings.ToLower(c.label)
		if !slices.ContainsFunc(words, func(w string) bool { return !strings.Contains(label, w) }) {
			m.filtered = append(m.filtered, i)
		}
	}
	m.cursor = max(0, min(m.cursor, len(m.filtered)-1))
}

// View draws the console above and the recorder's panel below.
func (m *RecordModel) View() tea.View {
	v := m.console.View()
	panel := m.panel()
	content := v.Content
	if rows := panelRows(m.height); m.height > rows {
		content = strings.Join(fit(content, m.width, m.height-rows), "\n") + "\n" + panel
	} else {
		content = panel
	}
	v.Content = content
	// The panel is part of what tests and benchmarks read.
	m.console.lastView.Store(&content)
	return v
}

func (m *RecordModel) panel() string {
	st := m.console.styles
	w := max(20, m.width)
	var lines []string
	title := fmt.Sprintf("recording · %d step(s)", len(m.out.Steps))
	lines = append(lines, st.Title.Render(title))
	switch m.stage {
	case stageLooking:
		lines = append(lines, st.Muted.Render("reading the application…"))
	case stageRunning:
		lines = append(lines, st.Muted.Render(m.status))
	case stagePick:
		lines = append(lines, m.filter.View())
		rows := panelRows(m.height) - 4
		start := max(0, min(m.cursor-rows/2, len(m.filtered)-rows))
		for i := start; i < len(m.filtered) && i < start+rows; i++ {
			mark := "  "
			if i == m.cursor {
				mark = "▸ "
			}
			lines = append(lines, mark+sanitize.Line(m.choices[m.filtered[i]].label))
		}
	case stageChord, stageName:
		what := "press_key: type the chord, enter runs it, esc goes back"
		if m.stage == stageName {
			what = "name it (" + sanitize.Line(m.pending.label) + "); enter names it and runs the call, esc goes back"
		}
		lines = append(lines, st.Muted.Render(what), m.input.View())
	case stagePropose:
		lines = append(lines, st.Muted.Render("checks for "+m.step.Tool+": 1-9 accept, a all, enter keeps the step, esc keeps it without checks"))
		for i, p := range m.proposals {
			box := "[ ]"
			if m.accepted[i] {
				box = "[x]"
			}
			lines = append(lines, fmt.Sprintf("%d %s %s", i+1, box, sanitize.Line(p.label)))
		}
	}
	out := fit(strings.Join(lines, "\n"), w, panelRows(m.height)-1)
	out = append(out, fit(st.Muted.Render(sanitize.Line(m.status)), w, 1)...)
	return strings.Join(out, "\n")
}

// buildChoices lists the calls the run offers now, then the names the
// operator can give on the spot, then finishing.
func buildChoices(seen engine.Seen, rec Recorded) []choice {
	offered := map[string]bool{}
	for _, t := range seen.Tools {
		offered[t] = true
	}
	var out []choice
	add := func(tool string, args map[string]any, label string) {
		if offered[tool] {
			out = append(out, choice{label: label, tool: tool, args: args})
		}
	}
	voc := seen.Vocabulary
	for _, c := range seen.Controls {
		add("click_element", map[string]any{"name": c.Name}, fmt.Sprintf("click_element %q (%s)", c.Name, roleOr(c.Role)))
	}
	for _, t := range voc.ClickTargets {
		add("click", map[string]any{"target": t}, "click "+t)
	}
	for _, r := range voc.Refs {
		add("type_text", map[string]any{"ref": r}, "type_text "+r)
	}
	if offered["press_key"] {
		out = append(out, choice{label: "press_key … (type a chord)", kind: choiceChord, tool: "press_key"})
	}
	for _, t := range voc.CDPTargets {
		add("cdp_click", map[string]any{"target": t}, "cdp_click "+t)
		for _, r := range voc.Refs {
			add("cdp_fill", map[string]any{"target": t, "ref": r}, fmt.Sprintf("cdp_fill %s with %s", t, r))
		}
	}
	for _, u := range voc.CDPURLs {
		add("cdp_navigate", map[string]any{"url": u}, "cdp_navigate "+u)
	}
	for _, w := range voc.Windows {
		add("switch_window", map[string]any{"name": w}, "switch_window "+w)
	}
	for _, w := range voc.WaitConditions {
		add("wait_while", map[string]any{"condition": w}, "wait_while "+w)
	}
	for _, w := range voc.CDPWaits {
		add("cdp_wait", map[string]any{"name": w}, "cdp_wait "+w)
	}
	for _, d := range voc.Declared {
		label := d.Tool
		for _, k := range slices.Sorted(maps.Keys(d.Args)) {
			label += fmt.Sprintf(" %s=%v", k, d.Args[k])
		}
		add(d.Tool, d.Args, label+" (declared tool)")
	}
	add("observe_screen", map[string]any{}, "observe_screen")
	add("wait", map[string]any{"seconds": 1.0}, "wait 1 s")
	// Names given on the spot.
	named := func(n string) bool {
		_, w := rec.Windows[n]
		_, t := rec.ClickTargets[n]
		return w || t || slices.Contains(voc.Windows, n) || slices.Contains(voc.ClickTargets, n)
	}
	known := map[scenarios.WindowMatch]bool{}
	for _, wm := range rec.Windows {
		known[scenarios.WindowMatch{Class: wm.Class, Title: wm.Title}] = true
	}
	for _, w := range seen.Windows {
		wm := windowMatch(w)
		if wm.Title == "" || known[wm] {
			continue
		}
		name := unique(slug(w.Title), named)
		out = append(out, choice{label: fmt.Sprintf("name window %q {class: %s, title: %s} and switch to it", w.Title, wm.Class, wm.Title),
			kind: choiceNameWindow, tool: "switch_window",
			def: engine.Definition{Window: name, WindowMatch: wm}})
	}
	for _, c := range seen.Controls {
		name := unique(slug(c.Name), named)
		out = append(out, choice{label: fmt.Sprintf("name click target %q by its accessible name and click it", c.Name),
			kind: choiceNameTarget, tool: "click",
			def: engine.Definition{Target: name, ClickTarget: scenarios.ClickTarget{Name: c.Name, Role: c.Role,
				Description: fmt.Sprintf("the %s %q", roleOr(c.Role), c.Name)}}})
	}
	if t := quotable(seen.NearText); seen.Pointer != nil && worthQuoting(t) {
		name := unique(slug(t), named)
		out = append(out, choice{label: fmt.Sprintf("name click target %q by the text read there and click it", t),
			kind: choiceNameTarget, tool: "click",
			def: engine.Definition{Target: name, ClickTarget: scenarios.ClickTarget{Text: t, Description: "the words " + t}}})
	}
	out = append(out, choice{label: "finish: write the scenario and replay it", kind: choiceFinish})
	return out
}

// describeSeen says what a step saw, for the comment above it.
func describeSeen(s engine.Seen) []string {
	var out []string
	for _, w := range s.Windows {
		line := fmt.Sprintf("window %q", oneLine(w.Title))
		if w.Focused {
			line += " (focused)"
		}
		out = append(out, line)
	}
	if s.Pointer != nil {
		out = append(out, fmt.Sprintf("pointer at (%d, %d)", s.Pointer.X, s.Pointer.Y))
	}
	if t := quotable(s.NearText); t != "" {
		out = append(out, fmt.Sprintf("OCR read %q", oneLine(t)))
	}
	if n := len(s.Controls); n > 0 {
		names := make([]string, 0, min(n, 8))
		for _, c := range s.Controls[:min(n, 8)] {
			names = append(names, fmt.Sprintf("%q", oneLine(c.Name)))
		}
		more := ""
		if n > 8 || s.More > 0 {
			more = fmt.Sprintf(" and %d more", n-min(n, 8)+s.More)
		}
		out = append(out, "named controls: "+strings.Join(names, ", ")+more)
	}
	for _, el := range s.Elements {
		if el.Found {
			out = append(out, fmt.Sprintf("page %s: %q", el.Target, oneLine(quotable(el.Text))))
		}
	}
	return out
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
