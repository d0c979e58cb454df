package tui

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/table"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/ansi"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/inbox"
	"github.com/kasmrt/kasmrt/themes"
	"github.com/kasmrt/kasmrt/tui/graphics"
	"github.com/kasmrt/kasmrt/tui/sanitize"
)

// FleetOptions configure the fleet console.
type FleetOptions struct {
	Source FleetSource
	// Title names what the runs belong to (a suite's name).
	Title string
	// Run configures the panes of each watched run; Dir and Controls are
	// set per run.
	Run Options
	// Detached says the runs are not this console's (kasmrt attach to a
	// server): quitting leaves them going, so it asks nothing.
	Detached bool
}

type fleetFocus int

const (
	fleetTable fleetFocus = iota
	fleetFilter
	fleetInbox
)

// Fleet is the console of many runs: a table of every run (sortable,
// filterable), one inbox for the questions of all of them, and, on enter,
// the watched run in the panes of the live console, which keep every run's
// state from its first event so switching never loses any.
type Fleet struct {
	opts   FleetOptions
	styles themes.Styles
	// background is the terminal's answer to the background query (nil
	// until it comes): runs that arrive later are drawn for it too.
	background *bool
	ctx        context.Context
	cancel     context.CancelFunc
	intake     *fleetIntake

	runs []*fleetRun
	// shown are the runs the table lists, filtered and sorted.
	shown []*fleetRun
	table table.Model
	// tableKey is the size and order the table's columns were laid out
	// for; boxKey and tableBox are the table's pane as last drawn, drawn
	// again only when what it shows changed.
	tableKey, boxKey, tableBox string
	// rowsStale says events arrived since the rows were computed;
	// refreshing waits for a refresh tick so a burst costs one.
	rowsStale, refreshArmed bool

	width, height int
	watched       *fleetRun
	focus         fleetFocus
	filter        textinput.Model
	answer        textinput.Model
	answerMark    inbox.Mark // the answer's, as in the run's inbox
	sortBy        fleetColumn
	sortDesc      bool
	inboxSel      int
	confirmQuit   bool
	status        string
	sourceDone    bool
	cellSize      *uv.CellSizeEvent
	keys          fleetKeys
	help          help.Model
	quitted       bool

	// asked are the runs whose primary device attributes queries went to
	// the terminal and await its reply, in the order sent: each reply goes
	// to the run that asked, watched or not by then (see Model.resendRaw).
	asked []*fleetRun

	lastView atomic.Pointer[string]
}

// fleetRun is one run: its description and the live console that folds
// its events.
type fleetRun struct {
	// id is the source's ID for the run, as given; desc.ID is the same
	// neutralised for the screen.
	id    string
	desc  FleetRun
	model *Model
	push  func(events.Event)
	// ticking says the run's countdown is armed; it is only while the run
	// is watched.
	ticking bool
}

// NewFleet returns the fleet console for opts.Source. ctx bounds what the
// console starts: when it ends, the source's Watch ends as on quitting.
func NewFleet(ctx context.Context, opts FleetOptions) *Fleet {
	run := opts.Run
	if run.Env == nil {
		run.Env = func(string) string { return "" }
	}
	if run.Now == nil {
		run.Now = time.Now
	}
	if run.Theme.Name == "" {
		if t, err := themes.Load("", "", run.Env); err == nil {
			run.Theme = t
		}
	}
	if run.Graphics == graphics.Auto {
		// One terminal, one detection: the runs' panes share what the
		// environment says rather than each probing the terminal.
		run.Graphics = graphics.Detect(run.Env)
	}
	opts.Run = run
	// The title is a suite's name or an attach target: not the console's
	// to trust.
	opts.Title = sanitize.Line(opts.Title)
	ctx, cancel := context.WithCancel(ctx)
	f := &Fleet{
		opts:   opts,
		styles: run.Theme.Styles,
		ctx:    ctx,
		cancel: cancel,
		keys:   newFleetKeys(),
		help:   help.New(),
		filter: textinput.New(),
		answer: textinput.New(),
	}
	f.intake = &fleetIntake{opts: run, src: opts.Source, known: map[string]*fleetRun{}, updates: map[string]FleetRun{},
		ready: make(chan struct{}, 1), done: make(chan struct{})}
	f.table = table.New(table.WithFocused(true))
	f.restyle()
	f.layoutTable() // the columns exist before the first rows
	f.filter.Prompt = "/"
	f.filter.Placeholder = "scenario, state or verdict"
	f.answer.Prompt = "> "
	f.answer.Placeholder = "type an answer; enter sends"
	f.setAnswerMark(inbox.MarkPrivate)
	return f
}

// restyle applies f.styles to the table, the text fields and the help.
func (f *Fleet) restyle() {
	ts := table.DefaultStyles()
	ts.Header = f.styles.Title.Padding(0, 1)
	ts.Cell = lipgloss.NewStyle().Padding(0, 1)
	ts.Selected = f.styles.Selected
	f.table.SetStyles(ts)
	f.filter.SetStyles(textinputStyles(f.styles))
	f.answer.SetStyles(textinputStyles(f.styles))
	helpStyles(&f.help, f.styles)
}

// followBackground draws the fleet and every run's console for the
// terminal's background, when the theme follows it. Only the watched
// run's image is on the terminal to be written again after the repaint.
func (f *Fleet) followBackground(dark bool) tea.Cmd {
	f.background = &dark
	th := f.opts.Run.Theme.ForBackground(dark)
	f.styles = th.Styles
	f.restyle()
	var cmds []tea.Cmd
	for _, fr := range f.runs {
		if cmd := fr.model.followBackground(dark); fr == f.watched {
			cmds = append(cmds, f.wrap(fr, cmd))
		}
	}
	return tea.Batch(cmds...)
}

// LastView returns the newest rendered screen without styles; it is safe
// to call while the program runs.
func (f *Fleet) LastView() string {
	if p := f.lastView.Load(); p != nil {
		return ansi.Strip(*p)
	}
	return ""
}

// fleetIntake is the fleet's FleetSink: the source's goroutine hands runs
// to it, and each run's events go straight to that run's queue, which
// never blocks.
type fleetIntake struct {
	opts Options
	src  FleetSource

	mu      sync.Mutex
	known   map[string]*fleetRun
	fresh   []*fleetRun
	updates map[string]FleetRun
	closed  bool
	ready   chan struct{}
	done    chan struct{}
}

func (in *fleetIntake) Run(r FleetRun) {
	// The description is shown (a scenario's name, a run's key); the
	// source's own ID and directory stay as given, to steer the run and
	// read its screens.
	id, dir := r.ID, r.Dir
	r = sanitize.Value(r)
	r.Dir = dir
	in.mu.Lock()
	if in.closed {
		in.mu.Unlock()
		return
	}
	if _, ok := in.known[id]; !ok {
		opts := in.opts
		opts.Dir = dir
		opts.Controls = runControls{src: in.src, id: id}
		m, push := NewLive(opts)
		fr := &fleetRun{id: id, desc: r, model: m, push: push}
		in.known[id] = fr
		in.fresh = append(in.fresh, fr)
	}
	in.updates[id] = r
	in.mu.Unlock()
	select {
	case in.ready <- struct{}{}:
	default:
	}
}

func (in *fleetIntake) Event(runID string, e events.Event) {
	in.mu.Lock()
	fr := in.known[runID]
	in.mu.Unlock()
	if fr != nil {
		fr.push(e)
	}
}

func (in *fleetIntake) close() {
	in.mu.Lock()
	defer in.mu.Unlock()
	if !in.closed {
		in.closed = true
		close(in.done)
	}
}

// fleetIntakeMsg carries new runs and changed descriptions to Update.
type fleetIntakeMsg struct {
	fresh   []*fleetRun
	updates map[string]FleetRun
}

func (in *fleetIntake) listen() tea.Cmd {
	return func() tea.Msg {
		select {
		case <-in.ready:
		case <-in.done:
			return nil
		}
		in.mu.Lock()
		defer in.mu.Unlock()
		msg := fleetIntakeMsg{fresh: in.fresh, updates: in.updates}
		in.fresh, in.updates = nil, map[string]FleetRun{}
		return msg
	}
}

// fleetRunMsg is a message of one run's console, routed back to it.
type fleetRunMsg struct {
	run *fleetRun
	msg tea.Msg
}

// fleetSourceDoneMsg says the source has nothing more to send.
type fleetSourceDoneMsg struct{ err error }

type fleetTickMsg time.Time

type fleetControlMsg struct {
	what string
	err  error
}

// wrap tags the messages a run's console's command produces with the run,
// so they come back to that console and no other.
func (f *Fleet) wrap(fr *fleetRun, cmd tea.Cmd) tea.Cmd {
	if cmd == nil {
		return nil
	}
	return func() tea.Msg {
		msg := cmd()
		switch msg := msg.(type) {
		case nil:
			return nil
		case tea.BatchMsg:
			out := make(tea.BatchMsg, 0, len(msg))
			for _, c := range msg {
				out = append(out, f.wrap(fr, c))
			}
			return out
		}
		return fleetRunMsg{run: fr, msg: msg}
	}
}

// Init starts the source and the clock of the durations.
func (f *Fleet) Init() tea.Cmd {
	src := f.opts.Source
	ctx := f.ctx
	watch := func() tea.Msg {
		err := src.Watch(ctx, f.intake)
		return fleetSourceDoneMsg{err: err}
	}
	cmds := []tea.Cmd{watch, f.intake.listen(), f.tick(), requestBackground(f.opts.Run.Theme)}
	if m := f.opts.Run.Graphics; (m == graphics.Sixel || m == graphics.Kitty) && graphics.ShouldProbe(f.opts.Run.Env) {
		cmds = append(cmds, tea.Raw(cellSizeQuery))
	}
	return tea.Batch(cmds...)
}

func (f *Fleet) tick() tea.Cmd {
	return tea.Tick(time.Second, func(t time.Time) tea.Msg { return fleetTickMsg(t) })
}

// Update routes a message: a run's own messages to its console, keys to
// the watched run or the table.
func (f *Fleet) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.BackgroundColorMsg:
		return f, f.followBackground(msg.IsDark())
	case fleetIntakeMsg:
		return f, f.applyIntake(msg)
	case fleetRunMsg:
		return f, f.routeRun(msg)
	case fleetSourceDoneMsg:
		f.sourceDone = true
		if msg.err != nil {
			f.status = "the source stopped: " + msg.err.Error()
		} else {
			f.status = "every run has ended; q quits"
		}
		f.refreshRows()
		return f, nil
	case fleetRefreshMsg:
		f.refreshArmed = false
		if f.rowsStale && f.watched == nil {
			f.refreshRows()
		}
		return f, nil
	case fleetTickMsg:
		if f.watched == nil {
			f.refreshRows()
		}
		return f, f.tick()
	case fleetControlMsg:
		if msg.err != nil {
			f.status = fmt.Sprintf("%s failed: %v", msg.what, msg.err)
		} else {
			f.status = msg.what + " sent"
		}
		return f, nil
	case tea.WindowSizeMsg:
		f.width, f.height = msg.Width, msg.Height
		f.layoutTable()
		if f.watched != nil {
			return f, f.forward(f.watched, f.watchedSize())
		}
		return f, nil
	case uv.CellSizeEvent:
		c := msg
		f.cellSize = &c
		var cmds []tea.Cmd
		for _, fr := range f.runs {
			cmds = append(cmds, f.forward(fr, msg))
		}
		return f, tea.Batch(cmds...)
	case tea.KeyPressMsg:
		return f, f.handleKey(msg)
	}
	if r, ok := graphics.ReplyFromMsg(msg); ok {
		if r.DA1 == nil || len(f.asked) == 0 {
			return f, nil
		}
		fr := f.asked[0]
		f.asked = f.asked[1:]
		return f, f.forward(fr, msg)
	}
	if f.watched != nil {
		return f, f.forward(f.watched, msg)
	}
	var cmd tea.Cmd
	switch f.focus {
	case fleetFilter:
		f.filter, cmd = f.filter.Update(msg)
	case fleetInbox:
		f.answer, cmd = f.answer.Update(msg)
	}
	return f, cmd
}

func (f *Fleet) applyIntake(msg fleetIntakeMsg) tea.Cmd {
	cmds := []tea.Cmd{f.intake.listen()}
	for _, fr := range msg.fresh {
		f.runs = append(f.runs, fr)
		if f.background != nil {
			fr.model.applyTheme(fr.model.opts.Theme.ForBackground(*f.background))
		}
		fr.ticking = true
		cmds = append(cmds, f.wrap(fr, fr.model.Init()))
		if f.cellSize != nil {
			cmds = append(cmds, f.forward(fr, *f.cellSize))
		}
	}
	for _, fr := range f.runs {
		if d, ok := msg.updates[fr.id]; ok {
			fr.desc = d
		}
	}
	f.refreshRows()
	return tea.Batch(cmds...)
}

// routeRun hands a run's message to its console. Only the watched run may
// write to the terminal or keep its countdown going.
func (f *Fleet) routeRun(msg fleetRunMsg) tea.Cmd {
	fr := msg.run
	switch inner := msg.msg.(type) {
	case tea.RawMsg:
		// Any run's question rings the bell; only the watched run may
		// draw (its images go over its own panes).
		seq, _ := inner.Msg.(string)
		if seq == graphics.DA1Query {
			if fr != f.watched {
				// Not written, so nothing to wait for: the run's image
				// write that waits on it is dropped here in turn.
				return func() tea.Msg { return fleetRunMsg{run: fr, msg: uv.PrimaryDeviceAttributesEvent{}} }
			}
			f.asked = append(f.asked, fr)
		}
		if fr != f.watched && seq != "\a" {
			return nil
		}
		return func() tea.Msg { return inner }
	case tea.QuitMsg:
		return nil
	case tickMsg:
		if fr != f.watched {
			fr.ticking = false
			return nil
		}
	}
	cmd := f.forward(fr, msg.msg)
	if _, ok := msg.msg.(eventsMsg); ok {
		f.rowsStale = true
		if !f.refreshArmed && f.watched == nil {
			f.refreshArmed = true
			cmd = tea.Batch(cmd, tea.Tick(refreshEvery, func(time.Time) tea.Msg { return fleetRefreshMsg{} }))
		}
	}
	return cmd
}

// refreshEvery is how often events may recompute the table: a hundred
// runs' events cost ten refreshes a second, not one each.
const refreshEvery = 100 * time.Millisecond

type fleetRefreshMsg struct{}

func (f *Fleet) forward(fr *fleetRun, msg tea.Msg) tea.Cmd {
	_, cmd := fr.model.Update(msg)
	return f.wrap(fr, cmd)
}

// watchedSize is the size the watched run's panes get: the terminal less
// the fleet's breadcrumb line.
func (f *Fleet) watchedSize() tea.WindowSizeMsg {
	return tea.WindowSizeMsg{Width: f.width, Height: max(0, f.height-1)}
}

func (f *Fleet) watch(fr *fleetRun) tea.Cmd {
	f.watched = fr
	f.status = ""
	cmds := []tea.Cmd{f.forward(fr, f.watchedSize())}
	if !fr.ticking {
		fr.ticking = true
		cmds = append(cmds, f.wrap(fr, fr.model.tick()))
	}
	return tea.Batch(cmds...)
}

// unwatch goes back to the table. The run's panes get no size, so they
// render no screens nobody sees.
func (f *Fleet) unwatch() tea.Cmd {
	fr := f.watched
	f.watched = nil
	f.refreshRows()
	return f.forward(fr, tea.WindowSizeMsg{})
}

func (f *Fleet) quit() tea.Cmd {
	f.quitted = true
	f.cancel()
	f.intake.close()
	for _, fr := range f.runs {
		fr.model.cancel()
		fr.model.queue.close()
	}
	return tea.Quit
}

// Quitted reports whether the operator quit the console (rather than the
// program ending some other way).
func (f *Fleet) Quitted() bool { return f.quitted }

// active counts the runs not yet ended.
func (f *Fleet) active() int {
	n := 0
	for _, fr := range f.runs {
		if s := fr.state(); s == RunQueued || s == RunRunning {
			n++
		}
	}
	return n
}

func (f *Fleet) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	k := f.keys
	if f.confirmQuit {
		switch msg.String() {
		case "y":
			return f.quit()
		case "n", "esc":
			f.confirmQuit = false
			f.status = "cancelled"
		}
		return nil
	}
	if key.Matches(msg, k.Interrupt) {
		return f.askQuit()
	}
	if fr := f.watched; fr != nil {
		if fr.model.idle() && key.Matches(msg, k.Back) {
			return f.unwatch()
		}
		return f.forward(fr, msg)
	}
	switch f.focus {
	case fleetFilter:
		return f.filterKey(msg)
	case fleetInbox:
		return f.inboxKey(msg)
	}
	switch {
	case key.Matches(msg, k.Quit):
		return f.askQuit()
	case key.Matches(msg, k.Watch):
		if i := f.table.Cursor(); i >= 0 && i < len(f.shown) {
			return f.watch(f.shown[i])
		}
		f.status = "no run is selected"
		return nil
	case key.Matches(msg, k.Filter):
		f.focus = fleetFilter
		return f.filter.Focus()
	case key.Matches(msg, k.Sort):
		f.sortBy = (f.sortBy + 1) % fleetColumnCount
		f.sortDesc = false
		f.refreshRows()
		f.status = "sorted by " + f.sortBy.title()
		return nil
	case key.Matches(msg, k.Reverse):
		f.sortDesc = !f.sortDesc
		f.refreshRows()
		return nil
	case key.Matches(msg, k.Inbox):
		if len(f.pending()) == 0 {
			f.status = "no question is waiting"
			return nil
		}
		f.focus = fleetInbox
		return f.answer.Focus()
	}
	var cmd tea.Cmd
	f.table, cmd = f.table.Update(msg)
	f.boxKey = "" // the cursor may have moved
	return cmd
}

func (f *Fleet) askQuit() tea.Cmd {
	if f.active() == 0 || f.opts.Detached {
		return f.quit()
	}
	f.confirmQuit = true
	return nil
}

func (f *Fleet) filterKey(msg tea.KeyPressMsg) tea.Cmd {
	switch msg.String() {
	case "enter":
		f.focus = fleetTable
		f.filter.Blur()
		return nil
	case "esc":
		f.focus = fleetTable
		f.filter.Blur()
		f.filter.SetValue("")
		f.refreshRows()
		return nil
	}
	var cmd tea.Cmd
	f.filter, cmd = f.filter.Update(msg)
	f.refreshRows()
	return cmd
}

// fleetQuestion is a question waiting in one of the runs.
type fleetQuestion struct {
	run *fleetRun
	q   *events.Question
}

// pending lists every run's waiting questions, oldest run first.
func (f *Fleet) pending() []fleetQuestion {
	var out []fleetQuestion
	for _, fr := range f.runs {
		for _, q := range fr.model.st.Pending() {
			out = append(out, fleetQuestion{run: fr, q: q})
		}
	}
	return out
}

func (f *Fleet) inboxKey(msg tea.KeyPressMsg) tea.Cmd {
	qs := f.pending()
	f.inboxSel = min(f.inboxSel, max(0, len(qs)-1))
	switch msg.String() {
	case "esc", "tab":
		f.focus = fleetTable
		f.answer.Blur()
		return nil
	case "up":
		f.inboxSel = max(0, f.inboxSel-1)
		return nil
	case "down":
		f.inboxSel = min(max(0, len(qs)-1), f.inboxSel+1)
		return nil
	case "enter":
		if len(qs) == 0 {
			f.status = "no question is waiting"
			return nil
		}
		text := strings.TrimSpace(f.answer.Value())
		if text == "" {
			f.status = "type an answer first"
			return nil
		}
		q := qs[f.inboxSel]
		mark := f.answerMark.Effective()
		f.answer.Reset()
		f.setAnswerMark(inbox.MarkPrivate)
		what := fmt.Sprintf("%s answer to %s of %s", mark, q.q.ID, q.run.label())
		f.status = "sending the " + what + "…"
		src, id, qid := f.opts.Source, q.run.id, q.q.ID
		return func() tea.Msg { return fleetControlMsg{what: what, err: src.AnswerMarked(id, qid, text, mark)} }
	case markKey:
		f.setAnswerMark(f.answerMark.Next())
		f.status = fmt.Sprintf("the answer is %s: %s", f.answerMark, f.answerMark.Meaning())
		return nil
	}
	var cmd tea.Cmd
	f.answer, cmd = f.answer.Update(msg)
	return cmd
}

// setAnswerMark marks the answer being typed; a secret one is drawn
// masked.
func (f *Fleet) setAnswerMark(m inbox.Mark) {
	f.answerMark = m.Effective()
	f.answer.EchoMode = textinput.EchoNormal
	if f.answerMark == inbox.MarkSecret {
		f.answer.EchoMode = textinput.EchoPassword
		f.answer.EchoCharacter = []rune(maskRune)[0]
	}
}

// idle reports whether the console is at rest: no prompt, help, detail
// pane or inbox text area holds the keys, so esc and q may mean "back" to
// a fleet.
func (m *Model) idle() bool {
	return m.prompt == promptNone && !m.showHelp && m.focus == focusTimeline && m.detail == detailNone
}
