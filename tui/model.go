package tui

import (
	"cmp"
	"context"
	"fmt"
	"image"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/ansi"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/inbox"
	"github.com/kasmrt/kasmrt/themes"
	"github.com/kasmrt/kasmrt/tui/graphics"
	"github.com/kasmrt/kasmrt/tui/sanitize"
)

// Options configure the console.
type Options struct {
	// Dir is the report directory; screens are read from it.
	Dir string
	// Controls acts on a live run (nil in replay: steering is disabled).
	Controls Controls
	// Theme is what the console draws with (themes.Load).
	Theme themes.Theme
	// Graphics is the image mode; Auto detects, probing the terminal only
	// when graphics.ShouldProbe allows.
	Graphics graphics.Mode
	// Env is the environment detection reads (os.Getenv when nil).
	Env graphics.Environ
	// Profile is the colour profile half-block images are drawn for.
	Profile colorprofile.Profile
	// Now is the live view's clock for the deadline countdown (time.Now
	// when nil).
	Now func() time.Time
	// ProbeTimeout is how long graphics detection waits for the terminal's
	// answer (one second when zero).
	ProbeTimeout time.Duration
	// RenderInterval is the shortest time between two screen renders of
	// the live view (defaultRenderInterval when zero, none when negative):
	// a run's captures come faster than anyone reads them, and each one
	// drawn costs the run CPU.
	RenderInterval time.Duration
	// EventInterval is the shortest time between two batches of a live
	// run's events handed to the view (defaultEventInterval when zero,
	// none when negative): each batch is drawn whole.
	EventInterval time.Duration
}

// defaultRenderInterval caps the live screen pane at five frames a second.
const defaultRenderInterval = 200 * time.Millisecond

type focusArea int

const (
	focusTimeline focusArea = iota
	focusInbox
)

type promptKind int

const (
	promptNone promptKind = iota
	promptReject
	promptNote
	promptAbort
)

// Model is the console's root Bubble Tea model: it owns the layout, routes
// keys and messages to the panes, and keeps the state folded from events.
type Model struct {
	opts   Options
	styles themes.Styles
	ctx    context.Context
	cancel context.CancelFunc

	live  bool
	queue *queue
	st    *State

	// Replay: the whole stream, the cursor and every row of the run.
	evs     []events.Event
	cursor  int
	allRows []Row
	// fallbackVerdict is report.json's verdict, shown at the end of a
	// stream that lost its own verdict line.
	fallbackVerdict *events.Decision

	width, height int
	focus         focusArea
	timeline      timelinePane
	screen        screenPane
	compare       bool
	showHelp      bool
	// detail is what the detail pane shows (detailNone: it is closed),
	// scrolled by detailOffset lines.
	detail       detailKind
	detailOffset int
	// inboxBack scrolls the inbox's history back from the newest line.
	inboxBack     int
	status        string
	paused        bool
	stepMode      bool
	seenQuestions map[string]bool
	// desk is the operator's takeover of the desktop (takeover.go).
	desk takeoverView

	// answerMark is the mark of the answer being typed: private until the
	// operator cycles it, and private again for the next answer.
	answerMark inbox.Mark

	answer  textarea.Model
	prompt  promptKind
	input   textinput.Model
	help    help.Model
	keys    liveKeys
	inKeys  inboxKeys
	rpKeys  replayKeys
	prKeys  promptKeys
	scKeys  screenKeys
	quitted bool

	// Graphics.
	mode         graphics.Mode
	renderer     *graphics.Renderer
	probing      bool
	replies      []graphics.Reply
	cellW, cellH int
	frame        graphics.Frame
	framePane    graphics.Pane
	frameKey     string
	inflight     bool
	// The image escapes wait for the terminal to show it has drawn the
	// cells they go over (see resendRaw): da1Sent counts the primary
	// device attributes queries written (the graphics probe's included),
	// da1Seen the replies, which come in the same order; waiting is the
	// write due once the reply to query number waitingFor has come.
	da1Sent, da1Seen int
	waiting          *rawMsg
	waitingFor       int
	// terminalSilent is set when the probe's query went unanswered: such
	// a terminal would leave every image waiting, so they go out at once.
	terminalSilent bool
	// lastRender is when the newest live render started; renderDue is set
	// while a render waits for the interval to pass.
	lastRender time.Time
	renderDue  bool
	// rendered counts the screen renders started (read by benchmarks).
	rendered atomic.Int64

	// lay is the layout computed for layoutIn.
	lay       consoleLayout
	layoutIn  layoutInput
	layoutSet bool

	// helpLine, when set, replaces the help bar: the recording console
	// (record.go) takes the keys itself.
	helpLine string

	// lastView is the newest rendered screen, readable from other
	// goroutines (tests and benchmarks wait on it).
	lastView atomic.Pointer[string]
}

func newModel(opts Options) *Model {
	if opts.Env == nil {
		opts.Env = os.Getenv
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Theme.Name == "" {
		// No theme given: the built-in dark one, still honouring NO_COLOR.
		if t, err := themes.Load("", "", opts.Env); err == nil {
			opts.Theme = t
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Model{
		opts:          opts,
		styles:        opts.Theme.Styles,
		ctx:           ctx,
		cancel:        cancel,
		st:            NewState(),
		timeline:      timelinePane{selected: -1},
		seenQuestions: map[string]bool{},
		keys:          newLiveKeys(),
		inKeys:        newInboxKeys(),
		rpKeys:        newReplayKeys(),
		prKeys:        newPromptKeys(),
		scKeys:        newScreenKeys(),
		help:          help.New(),
		answer:        textarea.New(),
		input:         textinput.New(),
	}
	m.applyTheme(opts.Theme)
	m.answer.ShowLineNumbers = false
	m.answer.Placeholder = "type an answer; enter sends"
	m.answer.Prompt = "> "
	m.answer.KeyMap.InsertNewline.SetKeys("ctrl+j", "alt+enter")
	m.answer.SetHeight(2)
	m.answerMark = inbox.MarkPrivate
	m.input.Prompt = ""
	m.mode = opts.Graphics
	if m.mode != graphics.Auto {
		m.renderer = graphics.NewRenderer(m.mode, m.rendererOptions())
	}
	return m
}

func (m *Model) rendererOptions() graphics.RendererOptions {
	return graphics.RendererOptions{Profile: m.opts.Profile, Tmux: m.opts.Env("TMUX") != ""}
}

// LastView returns the text of the newest rendered screen without styles;
// it is safe to call while the program runs.
func (m *Model) LastView() string {
	if p := m.lastView.Load(); p != nil {
		return ansi.Strip(*p)
	}
	return ""
}

// State returns the state the console shows (for tests and the engine's
// headless output).
func (m *Model) State() *State { return m.st }

// probeTimeoutMsg ends graphics detection when the terminal did not answer.
type probeTimeoutMsg struct{}

// tickMsg advances the live countdown.
type tickMsg time.Time

// rawMsg is an image escape to write once the renderer has drawn the
// blank rectangle it goes over, for the frame of key.
type rawMsg struct {
	seq string
	key string
}

// controlMsg reports the result of a Controls call.
type controlMsg struct {
	what string
	err  error
}

// cellSizeQuery asks the terminal for its cell size in pixels (XTWINOPS
// 16), so images are scaled to the pane's real pixel size.
const cellSizeQuery = "\x1b[16t"

// Init starts detection, the event listener and the countdown.
func (m *Model) Init() tea.Cmd {
	cmds := []tea.Cmd{requestBackground(m.opts.Theme)}
	canAsk := graphics.ShouldProbe(m.opts.Env)
	if m.mode == graphics.Auto {
		if canAsk {
			m.probing = true
			m.da1Sent++ // the probe ends with one
			// Until the terminal answers, screens are drawn as the fallback
			// draws them, so the first capture shows at once.
			m.renderer = graphics.NewRenderer(graphics.Detect(m.opts.Env), m.rendererOptions())
			cmds = append(cmds, tea.Raw(cellSizeQuery+graphics.Probe),
				tea.Tick(cmp.Or(m.opts.ProbeTimeout, time.Second), func(time.Time) tea.Msg { return probeTimeoutMsg{} }))
		} else {
			m.setMode(graphics.Detect(m.opts.Env))
		}
	} else if canAsk && (m.mode == graphics.Sixel || m.mode == graphics.Kitty) {
		cmds = append(cmds, tea.Raw(cellSizeQuery))
	}
	if m.live {
		// Events that came before the console started (a run already
		// going, an attached stream's history) are folded before the first
		// frame, so it shows their latest capture instead of none.
		if m.fold(m.queue.take()) {
			cmds = append(cmds, tea.Raw("\a"))
		}
		cmds = append(cmds, m.queue.listen(), m.tick())
	}
	return tea.Batch(cmds...)
}

func (m *Model) tick() tea.Cmd {
	return tea.Tick(time.Second, func(t time.Time) tea.Msg { return tickMsg(t) })
}

func (m *Model) setMode(mode graphics.Mode) {
	m.mode = mode
	m.probing = false
	m.renderer = graphics.NewRenderer(mode, m.rendererOptions())
	m.frameKey = ""
}

// Update routes a message. It does no I/O: images load and encode in
// commands, and Controls are called from commands.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if cmd, ok := m.updateTakeover(msg); ok {
		return m, cmd
	}
	if r, ok := graphics.ReplyFromMsg(msg); ok {
		var write tea.Cmd
		if r.DA1 != nil {
			write = m.terminalCaughtUp()
		}
		if !m.probing {
			return m, write
		}
		m.replies = append(m.replies, r)
		if r.DA1 != nil {
			m.setMode(graphics.Detect(m.opts.Env, m.replies...))
			return m, tea.Batch(write, m.refreshScreen())
		}
		return m, nil
	}
	switch msg := msg.(type) {
	case probeTimeoutMsg:
		if m.probing {
			m.terminalSilent = m.da1Seen == 0
			m.setMode(graphics.Detect(m.opts.Env, m.replies...))
			return m, m.refreshScreen()
		}
		return m, nil
	case uv.CellSizeEvent:
		if msg.Width > 0 && msg.Height > 0 {
			m.cellW, m.cellH = msg.Width, msg.Height
		}
		return m, m.refreshScreen()
	case tea.BackgroundColorMsg:
		return m, m.followBackground(msg.IsDark())
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		return m, m.resized()
	case eventsMsg:
		return m, m.applyEvents(msg)
	case tickMsg:
		if !m.st.Ended {
			m.st.Now = m.opts.Now()
		}
		return m, m.tick()
	case frameMsg:
		return m, m.installFrame(msg)
	case renderDueMsg:
		// The wait was measured to end the interval.
		m.renderDue, m.lastRender = false, time.Time{}
		return m, m.refreshScreen()
	case controlMsg:
		if msg.err != nil {
			m.status = fmt.Sprintf("%s failed: %v", msg.what, msg.err)
		} else {
			m.status = msg.what + " sent"
		}
		return m, nil
	case tea.KeyPressMsg:
		return m, m.handleKey(msg)
	case tea.MouseClickMsg, tea.MouseWheelMsg:
		return m, m.handleMouse(msg.(tea.MouseMsg))
	}
	// Blink and other component messages.
	var cmds []tea.Cmd
	var cmd tea.Cmd
	if m.focus == focusInbox {
		m.answer, cmd = m.answer.Update(msg)
		cmds = append(cmds, cmd)
	}
	if m.prompt != promptNone {
		m.input, cmd = m.input.Update(msg)
		cmds = append(cmds, cmd)
	}
	return m, tea.Batch(cmds...)
}

// applyEvents folds a batch from the live queue, rings the bell for new
// questions and re-arms the listener.
func (m *Model) applyEvents(evs eventsMsg) tea.Cmd {
	cmds := []tea.Cmd{m.queue.listen()}
	if m.fold(evs) {
		cmds = append(cmds, tea.Raw("\a"))
	}
	cmds = append(cmds, m.refreshScreen())
	return tea.Batch(cmds...)
}

// fold applies live events to the state and reports whether a new
// question came (the bell rings for it).
func (m *Model) fold(evs []events.Event) (bell bool) {
	for _, e := range evs {
		// Every string an event carries — the scenario's name, messages,
		// tool names, questions — comes from a source the console does not
		// trust (a run's model and app, an attach server) and is
		// neutralised here, once, before anything can draw it.
		e = sanitize.Value(e)
		m.st.Apply(m.st.Seen, e)
		m.foldTakeover(e)
		if e.Kind == events.KindQuestion && e.Question != nil && !m.seenQuestions[e.Question.ID] {
			m.seenQuestions[e.Question.ID] = true
			bell = true
		}
		if e.Kind == events.KindSteer && e.Steer != nil {
			switch e.Steer.Action {
			case events.SteerPause, events.SteerResume:
				m.paused = m.st.Paused
			case events.SteerStep:
				m.stepMode = m.st.StepMode
			}
		}
	}
	return bell
}

// handleKey routes a key press: prompt first, then help, the inbox's text
// area, then the view's bindings.
func (m *Model) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	if m.prompt != promptNone {
		return m.promptKey(msg)
	}
	if m.showHelp {
		m.showHelp = false
		return m.resendRaw()
	}
	if m.focus == focusInbox {
		return m.inboxKey(msg)
	}
	if cmd, ok := m.screenKey(msg); ok {
		return cmd
	}
	if m.live {
		return m.liveKey(msg)
	}
	return m.replayKey(msg)
}

func (m *Model) quit() tea.Cmd {
	m.quitted = true
	m.cancel()
	if m.queue != nil {
		m.queue.close()
	}
	return tea.Quit
}

func (m *Model) liveKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.keys
	switch {
	case key.Matches(msg, k.Quit):
		return m.quit()
	case key.Matches(msg, k.Help):
		m.showHelp = true
	case key.Matches(msg, k.Up):
		m.timeline.move(m.st.Rows, -1)
		return m.refreshScreen()
	case key.Matches(msg, k.Down):
		m.timeline.move(m.st.Rows, 1)
		return m.refreshScreen()
	case key.Matches(msg, k.PageUp):
		m.timeline.move(m.st.Rows, -10)
		return m.refreshScreen()
	case key.Matches(msg, k.PageDown):
		m.timeline.move(m.st.Rows, 10)
		return m.refreshScreen()
	case key.Matches(msg, k.Follow):
		m.timeline.selected = -1
		return m.refreshScreen()
	case key.Matches(msg, k.Detail):
		return m.toggleDetail(detailStep)
	case key.Matches(msg, k.Why):
		return m.toggleDetail(detailWhy)
	case key.Matches(msg, k.Close):
		if m.detail != detailNone {
			return m.toggleDetail(m.detail)
		}
	case key.Matches(msg, k.ScrollDown):
		m.detailOffset += wheelStep
	case key.Matches(msg, k.ScrollUp):
		m.detailOffset = max(0, m.detailOffset-wheelStep)
	case key.Matches(msg, k.NextFailed):
		return m.jumpFailed(1)
	case key.Matches(msg, k.PrevFailed):
		return m.jumpFailed(-1)
	case key.Matches(msg, k.Filter):
		m.cycleFilter()
	case key.Matches(msg, k.Compare):
		m.compare = !m.compare
		return m.refreshScreen()
	case key.Matches(msg, k.Focus):
		m.focus = focusInbox
		return m.answer.Focus()
	case key.Matches(msg, k.Pause):
		if m.paused {
			m.paused = false
			return m.steer(events.Steer{Action: events.SteerResume}, "resume")
		}
		m.paused = true
		return m.steer(events.Steer{Action: events.SteerPause}, "pause")
	case key.Matches(msg, k.Step):
		m.stepMode = !m.stepMode
		v := "off"
		if m.stepMode {
			v = "on"
		}
		return m.steer(events.Steer{Action: events.SteerStep, Value: v}, "step mode "+v)
	case key.Matches(msg, k.Approve):
		if m.st.Proposal == nil {
			m.status = "no call is waiting for approval"
			return nil
		}
		return m.steer(events.Steer{Action: events.SteerApprove}, fmt.Sprintf("approve step %d", m.st.Proposal.Step))
	case key.Matches(msg, k.Reject):
		if m.st.Proposal == nil {
			m.status = "no call is waiting for approval"
			return nil
		}
		return m.openPrompt(promptReject, "reason for rejecting (sent to the model)")
	case key.Matches(msg, k.Abort):
		return m.openPrompt(promptAbort, "abort the run? y/n")
	case key.Matches(msg, k.Note):
		return m.openPrompt(promptNote, "note to the model (sent with the next turn)")
	case key.Matches(msg, k.Takeover):
		return m.toggleTakeover()
	}
	return nil
}

func (m *Model) cycleFilter() {
	m.timeline.filter = (m.timeline.filter + 1) % 3
	m.timeline.selected = -1
	m.timeline.offset = 0
	m.status = "filter: " + m.timeline.filter.String()
}

func (m *Model) steer(s events.Steer, what string) tea.Cmd {
	c := m.opts.Controls
	if c == nil {
		m.status = "this console cannot steer the run"
		return nil
	}
	m.status = what + "…"
	return func() tea.Msg { return controlMsg{what: what, err: c.Steer(s)} }
}

func (m *Model) openPrompt(kind promptKind, placeholder string) tea.Cmd {
	m.prompt = kind
	m.input.Reset()
	m.input.Placeholder = placeholder
	return m.input.Focus()
}

func (m *Model) promptKey(msg tea.KeyPressMsg) tea.Cmd {
	kind := m.prompt
	if key.Matches(msg, m.prKeys.Cancel) || (kind == promptAbort && msg.String() == "n") {
		m.prompt = promptNone
		m.input.Blur()
		m.status = "cancelled"
		return nil
	}
	if kind == promptAbort {
		if msg.String() == "y" {
			m.prompt = promptNone
			return m.steer(events.Steer{Action: events.SteerAbort}, "abort")
		}
		return nil
	}
	if key.Matches(msg, m.prKeys.Submit) {
		text := strings.TrimSpace(m.input.Value())
		if text == "" {
			m.status = "empty: type something or esc to cancel"
			return nil
		}
		m.prompt = promptNone
		m.input.Blur()
		if kind == promptReject {
			return m.steer(events.Steer{Action: events.SteerReject, Reason: text}, "reject")
		}
		return m.steer(events.Steer{Action: events.SteerNote, Value: text}, "note")
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	return cmd
}

func (m *Model) inboxKey(msg tea.KeyPressMsg) tea.Cmd {
	switch {
	case key.Matches(msg, m.inKeys.Leave):
		m.focus = focusTimeline
		m.answer.Blur()
		return nil
	case key.Matches(msg, m.inKeys.Send):
		pending := m.st.Pending()
		if len(pending) == 0 {
			m.status = "no question is waiting for an answer"
			return nil
		}
		text := strings.TrimSpace(m.answer.Value())
		if text == "" {
			m.status = "type an answer first"
			return nil
		}
		q := pending[0]
		c := m.opts.Controls
		if c == nil {
			m.status = "this console cannot answer"
			return nil
		}
		mark := m.answerMark.Effective()
		m.answer.Reset()
		m.answerMark = inbox.MarkPrivate
		what := fmt.Sprintf("%s answer to %s", mark, q.ID)
		m.status = "sending the " + what + "…"
		id := q.ID
		return func() tea.Msg { return controlMsg{what: what, err: c.AnswerMarked(id, text, mark)} }
	case key.Matches(msg, m.inKeys.Mark):
		m.answerMark = m.answerMark.Next()
		m.status = fmt.Sprintf("the answer is %s: %s", m.answerMark, m.answerMark.Meaning())
		return nil
	case key.Matches(msg, m.keys.Quit) && msg.String() == "ctrl+c":
		return m.quit()
	}
	var cmd tea.Cmd
	m.answer, cmd = m.answer.Update(msg)
	return cmd
}

// screenPane places the screen pane — its rectangle in the layout, or the
// layout's whole body when it has the terminal to itself — and returns
// where its image goes, as the graphics renderer positions it.
func (m *Model) screenPane() graphics.Pane {
	l := m.layout()
	if m.screen.full {
		m.screen.SetRect(l.Body, false)
	} else {
		m.screen.SetRect(l.Screen, true)
	}
	return m.screen.Pane(m.cellW, m.cellH)
}

// imagePane is the pane a frame is drawn for: the screen pane, asking for
// enlargement in the zoom view.
func (m *Model) imagePane() graphics.Pane {
	pane := m.screenPane()
	pane.Enlarge = m.screen.view == viewZoom
	return pane
}

// wantScreen is what the screen pane should show now: the row the live
// view inspects, or the newest screen; either one's before and after in
// compare mode.
func (m *Model) wantScreen() (screenRequest, bool) {
	pane := m.imagePane()
	if pane.Cols <= 0 || pane.Rows <= 0 {
		return screenRequest{}, false
	}
	// cropFor is the part of capture screen the pane shows; none for the
	// label, which names the capture whatever part a picture would show.
	cropFor := func(screen string, point *events.Point) image.Rectangle {
		if m.mode == graphics.None {
			return image.Rectangle{}
		}
		c, _ := m.screenCrop(pane, screen, point)
		return c
	}
	if m.compare {
		if before, after, point, _, ok := m.comparePair(); ok {
			return screenRequest{Screen: after, Before: before, After: after, Point: point, Crop: cropFor(after, point), Pane: pane, Pixels: m.st.PixelsOf(after)}, true
		}
	}
	if m.inspecting() {
		r, _ := m.currentRow()
		if r.Screen == "" {
			return screenRequest{}, false
		}
		return screenRequest{Screen: r.Screen, Point: r.Point, Box: r.Box, Crop: cropFor(r.Screen, r.Point), Pane: pane, Pixels: m.st.PixelsOf(r.Screen)}, true
	}
	if m.st.Screen == "" {
		return screenRequest{}, false
	}
	return screenRequest{Screen: m.st.Screen, Point: m.st.Point, Box: m.st.Box, Crop: cropFor(m.st.Screen, m.st.Point), Pane: pane, Pixels: m.st.PixelsOf(m.st.Screen)}, true
}

// screenCrop is the part of capture screen the pane shows, around the
// action at point, and the view that is; the zero rectangle (the whole
// capture) while the screen's size is not known.
func (m *Model) screenCrop(pane graphics.Pane, screen string, point *events.Point) (image.Rectangle, screenView) {
	if m.st.ScreenW <= 0 || m.st.ScreenH <= 0 {
		return image.Rectangle{}, viewScreen
	}
	c, v := m.screen.crop(image.Rect(0, 0, m.st.ScreenW, m.st.ScreenH), m.st.WindowOn(screen), point, pane)
	if v == viewScreen {
		return image.Rectangle{}, v
	}
	return c, v
}

// comparePair is the before and after the compare mode shows: the current
// row's when it has them, else (following or in the replay) the latest
// grounding attempt's.
func (m *Model) comparePair() (before, after string, point *events.Point, title string, ok bool) {
	if r, found := m.currentRow(); found {
		if before, after, point, title, ok = rowCompare(m.st, r); ok {
			return before, after, point, title, true
		}
	}
	if m.inspecting() {
		return "", "", nil, "", false
	}
	if g := m.st.Grounding; g != nil && g.Before != "" && g.After != "" {
		return g.Before, g.After, g.Point, groundingCompareTitle(g), true
	}
	return "", "", nil, "", false
}

// refreshScreen starts rendering what the pane should show unless that is
// already shown or on its way. One render runs at a time; when it
// finishes, the newest wish is rendered next, so a fast run drops frames
// instead of queueing them.
func (m *Model) refreshScreen() tea.Cmd {
	if m.renderer == nil || m.width == 0 {
		return nil
	}
	req, ok := m.wantScreen()
	if !ok {
		return nil
	}
	k := req.key()
	if k == m.frameKey || m.inflight || m.renderDue {
		return nil
	}
	if m.live {
		interval := cmp.Or(m.opts.RenderInterval, defaultRenderInterval)
		if wait := interval - time.Since(m.lastRender); interval > 0 && wait > 0 {
			// Too soon after the last render: the newest wish is drawn
			// when the interval has passed, the ones between are dropped.
			m.renderDue = true
			return tea.Tick(wait, func(time.Time) tea.Msg { return renderDueMsg{} })
		}
		m.lastRender = time.Now()
	}
	m.inflight = true
	m.rendered.Add(1)
	return renderScreen(m.ctx, m.renderer, m.opts.Dir, req)
}

// renderDueMsg ends the wait between two live renders.
type renderDueMsg struct{}

func (m *Model) installFrame(msg frameMsg) tea.Cmd {
	m.inflight = false
	pane := m.imagePane()
	var cmds []tea.Cmd
	if msg.err != nil {
		m.status = msg.err.Error()
		m.frame = graphics.Frame{Cells: msg.err.Error()}
		m.frameKey = msg.key
	} else if strings.HasSuffix(msg.key, fmt.Sprintf("|%+v", pane)) {
		m.frame, m.frameKey, m.framePane = msg.frame, msg.key, pane
		cmds = append(cmds, m.resendRaw())
	} else if msg.frame.Raw == "" && msg.frame.Cells != "" {
		// Drawn for the pane's size before a resize: cells are clipped or
		// padded to the new size, which beats showing nothing until the
		// frame for it is drawn. An image overlay would land in the wrong
		// place, so those wait.
		m.frame, m.frameKey = msg.frame, msg.key
	}
	cmds = append(cmds, m.refreshScreen())
	return tea.Batch(cmds...)
}

// resized follows a change of the terminal's size. The program erases
// and redraws the whole screen, and with it any image written over the
// cells. An image drawn for the old layout must not be written again (a
// write still on its way would leave it mixed with the new layout until
// something redrew those cells): forgetting its key drops such writes and
// asks for a frame for the new pane. An image whose pane did not change is
// written again over the redrawn cells.
func (m *Model) resized() tea.Cmd {
	if m.frame.Raw == "" || m.frameKey == "" {
		return m.refreshScreen()
	}
	if m.framePane != m.imagePane() {
		m.frameKey = ""
		return m.refreshScreen()
	}
	return tea.Batch(m.resendRaw(), m.refreshScreen())
}

// resendRaw writes the frame's image escapes again after the renderer has
// drawn the cells they go over: a sixel is erased by any repaint of its
// rectangle, so written before the repaint it is lost.
//
// The program writes the view on its own clock, after the raw writes
// queued in the same frame, and says nothing when it has; a fixed pause
// before the image lost that race on a loaded machine. The terminal says
// instead: the view this call follows is set before the query written
// here can reach the terminal, and the program writes it in the same
// flush as the query or an earlier one, so once the terminal answers the
// query, an image written from then on comes after those cells. Nearly
// every terminal answers a primary device attributes query; one that did
// not answer the probe's gets its images at once.
func (m *Model) resendRaw() tea.Cmd {
	if m.frame.Raw == "" {
		return nil
	}
	if m.terminalSilent {
		// Written at once, a repaint may still erase it; unwritten, it
		// would never show.
		m.waiting = nil
		if m.showHelp {
			return nil
		}
		return tea.Raw(m.frame.Raw)
	}
	m.da1Sent++
	m.waiting, m.waitingFor = &rawMsg{seq: m.frame.Raw, key: m.frameKey}, m.da1Sent
	return tea.Raw(graphics.DA1Query)
}

// terminalCaughtUp notes a reply to a primary device attributes query and
// writes the image waiting for it, if it is still the frame shown. A reply
// to an earlier query says nothing of cells drawn after it was sent.
func (m *Model) terminalCaughtUp() tea.Cmd {
	m.da1Seen++
	m.terminalSilent = false // it answers after all, only slowly
	w := m.waiting
	if w == nil || m.da1Seen < m.waitingFor {
		return nil
	}
	m.waiting = nil
	if w.key != m.frameKey || m.showHelp {
		return nil
	}
	return tea.Raw(w.seq)
}

// layout returns the console's layout for the current size and panes,
// computing it only when what it depends on changed.
func (m *Model) layout() consoleLayout {
	in := layoutInput{
		Width: m.width, Height: m.height,
		BudgetLines: budgetLines(m.st, m.width*2/5-2),
		Inbox:       m.focus == focusInbox || len(m.st.Pending()) > 0,
		Detail:      m.detail != detailNone,
	}
	if !m.layoutSet || in != m.layoutIn {
		m.lay, m.layoutIn, m.layoutSet = computeLayout(in), in, true
	}
	return m.lay
}

// View draws the console.
func (m *Model) View() tea.View {
	content := m.render()
	m.lastView.Store(&content)
	v := tea.NewView(content)
	v.AltScreen = true
	// Clicks and the wheel only: cell motion reports no bare movement, so
	// the program is not woken by a mouse passing over it.
	v.MouseMode = tea.MouseModeCellMotion
	v.WindowTitle = sanitize.Line(m.windowTitle())
	return v
}

func (m *Model) windowTitle() string {
	name := m.st.Scenario
	if name == "" {
		name = "run"
	}
	title := "kasmrt · " + name
	if !m.live {
		title = "kasmrt replay · " + name
	}
	if n := len(m.st.Pending()); n > 0 && m.live {
		title = fmt.Sprintf("(%d?) %s — question waiting", n, title)
	}
	return title
}

func (m *Model) render() string {
	if m.width < minWidth || m.height < minHeight {
		return fmt.Sprintf("terminal too small (%dx%d): kasmrt needs %dx%d", m.width, m.height, minWidth, minHeight)
	}
	l := m.layout()
	st := m.styles
	parts := []part{
		{l.Header, fit(m.header(), m.width, 1)[0]},
		{l.Status, fit(m.statusLine(), m.width, 1)[0]},
		{l.Help, fit(m.helpBar(), m.width, 1)[0]},
	}
	if m.showHelp {
		parts = append(parts, part{l.Body, box(st, "keys", groupedHelp(st, m.helpGroups(), l.Body.Dx()-2), l.Body.Dx(), l.Body.Dy(), true)})
		return compose(m.width, m.height, parts...)
	}
	if m.screen.full {
		// The screen has the whole terminal: its title takes the header's
		// line, and the image the body's lines.
		pane := m.screenPane()
		title := st.Title.Render(m.screenTitle()) + st.Muted.Render(" · z: back to the console")
		if n := len(m.st.Pending()); n > 0 {
			// The inbox is hidden: a waiting question must still be seen.
			title = st.Question.Render(fmt.Sprintf("%d question(s) waiting", n)) + st.Muted.Render(" · ") + title
		}
		parts[0] = part{l.Header, fit(title, m.width, 1)[0]}
		parts = append(parts, part{l.Body, strings.Join(fit(m.screenBody(), pane.Cols, pane.Rows), "\n")})
		return compose(m.width, m.height, parts...)
	}
	pane := func(r uv.Rectangle, title string, focused bool, body func(w, h int) string) {
		if in := inner(r); !in.Empty() {
			parts = append(parts, part{r, box(st, title, body(in.Dx(), in.Dy()), r.Dx(), r.Dy(), focused)})
		}
	}
	pane(l.Screen, m.screenTitle(), false, func(int, int) string { return m.screenBody() })
	m.timeline.detailOpen = !l.Detail.Empty()
	pane(l.Timeline, m.timelineTitle(), m.focus == focusTimeline, func(w, h int) string {
		if p := m.st.Proposal; p != nil && m.live && h > 1 {
			// The call waiting for approval is the run's newest step: it
			// ends the timeline, where the operator's eyes are, not only
			// the status line.
			return m.timeline.View(st, m.st.Rows, w, h-1) + "\n" + fit(pendingLine(st, p), w, 1)[0]
		}
		return m.timeline.View(st, m.st.Rows, w, h)
	})
	pane(l.Budgets, "budgets", false, func(w, _ int) string { return budgetsView(st, m.st, w) })
	if in := inner(l.Inbox); !in.Empty() {
		// The body first: it keeps the scroll within the history the title
		// then reports.
		body := m.inboxBody(in.Dx(), in.Dy())
		pane(l.Inbox, m.inboxTitle(), m.focus == focusInbox, func(int, int) string { return body })
	}
	pane(l.Verdict, "verdict", false, func(w, _ int) string { return verdictView(st, m.st, w) })
	pane(l.Summary, "run", false, func(w, h int) string { return summaryView(st, m.st, w, h) })
	if in := inner(l.Detail); !in.Empty() {
		doc := m.detailDoc(in.Dx())
		pane(l.Detail, m.detailPaneTitle(doc.title), false, func(_, h int) string { return m.detailBody(doc, h) })
	}
	return compose(m.width, m.height, parts...)
}

func (m *Model) header() string {
	st := m.styles
	name := m.st.Scenario
	switch {
	case name != "":
	case m.live:
		// Launching the session and the app comes before the run names
		// its scenario.
		name = "starting…"
	default:
		name = "(the run never started)"
	}
	parts := []string{st.Title.Render("kasmrt"), name}
	if m.st.Mode != "" {
		parts = append(parts, m.st.Mode)
	}
	if m.live {
		switch {
		case m.st.Verdict != nil:
			// The verdict pane may be hidden (a detail open, a compact
			// layout's inbox): the header always says how the run ended.
			parts = append(parts, verdictLine(st, m.st.Verdict))
		case m.st.Ended:
			parts = append(parts, "ended")
		case m.st.Paused:
			parts = append(parts, st.StepMalformed.Render("PAUSED"))
		default:
			parts = append(parts, "running")
		}
		if m.st.StepMode {
			parts = append(parts, st.Question.Render("STEP MODE"))
		}
		if m.st.ModelIteration > 0 {
			parts = append(parts, fmt.Sprintf("turn %d", m.st.ModelIteration))
		}
		if m.inspecting() {
			parts = append(parts, st.Question.Render("INSPECTING"))
		}
	} else {
		parts[0] = st.Title.Render("kasmrt replay")
		if len(m.evs) > 0 {
			e := m.evs[m.cursor]
			at := ""
			if !m.st.Started.IsZero() {
				at = " +" + e.T.Sub(m.st.Started).Round(time.Millisecond).String()
			}
			parts = append(parts, fmt.Sprintf("event %d/%d seq %d%s %s", m.cursor+1, len(m.evs), e.Seq, at, e.Kind))
		}
	}
	if n := len(m.st.Pending()); n > 0 {
		parts = append(parts, st.Question.Render(fmt.Sprintf("%d question(s) waiting", n)))
	}
	return strings.Join(parts, st.Muted.Render(" · "))
}

func (m *Model) screenTitle() string {
	if m.compare {
		if _, _, _, title, ok := m.comparePair(); ok {
			return title
		}
	}
	screen, point, box := m.st.Screen, m.st.Point, m.st.Box
	prefix := ""
	if m.inspecting() {
		r, _ := m.currentRow()
		screen, point, box = r.Screen, r.Point, r.Box
		prefix = "past "
		if step := r.Step(); step > 0 {
			prefix = fmt.Sprintf("step %d · ", step)
		}
	}
	if screen == "" {
		return prefix + "screen"
	}
	t := fmt.Sprintf("%sscreen %04d", prefix, screenNumber(screen))
	if !strings.HasPrefix(screen, "screens/") {
		// A screenshot check's diff or window, named by its file.
		t = prefix + sanitize.Line(screen)
	}
	crop, view := m.screenCrop(m.screenPane(), screen, point)
	t += " · " + m.screen.describe(view, crop, point)
	if point != nil {
		t += " · click " + formatPoint(point)
	}
	if box != nil {
		t += " · box " + formatRect(box)
	}
	return t + " · " + m.mode.String()
}

// timelineTitle says the filter and, live, whether the timeline follows
// the run or shows a past row (and how to come back).
func (m *Model) timelineTitle() string {
	t := "timeline · " + m.timeline.filter.String()
	if !m.live {
		return t
	}
	if m.inspecting() {
		n := len(m.timeline.visible(m.st.Rows))
		return fmt.Sprintf("%s · row %d/%d · G: latest", t, m.timeline.selected+1, n)
	}
	return t + " · following"
}

func (m *Model) screenBody() string {
	req, ok := m.wantScreen()
	if !ok {
		if m.inspecting() {
			return m.styles.Muted.Render("no capture at this row yet")
		}
		return m.styles.Muted.Render("no capture yet")
	}
	if m.frame.Cells == "" {
		// Only until the first frame is drawn: later ones replace it in
		// place, with no label in between.
		return m.styles.Muted.Render(graphics.Label(screenNumber(req.Screen), m.st.ScreenW, m.st.ScreenH))
	}
	return m.frame.Cells
}

func (m *Model) inboxTitle() string {
	t := "inbox"
	if n := len(m.st.Pending()); n > 0 {
		t = fmt.Sprintf("inbox · %d waiting", n)
	}
	if m.inboxBack > 0 {
		t += fmt.Sprintf(" · %d lines back", m.inboxBack)
	}
	return t
}

func (m *Model) inboxBody(w, h int) string {
	if !m.live || h < 5 {
		view, back := inboxWindow(m.styles, m.st, w, h, m.inboxBack)
		m.inboxBack = back
		return view
	}
	m.answer.SetWidth(w)
	view, back := inboxWindow(m.styles, m.st, w, h-3, m.inboxBack)
	m.inboxBack = back
	input := m.answer.View()
	if m.answerMark == inbox.MarkSecret {
		input = maskedInput(m.styles, m.answer.Prompt, m.answer.Value(), w, m.answer.Height(), m.answer.Focused())
	}
	return view + "\n" + markLine(m.styles, m.answerMark, w) + "\n" + input
}

func (m *Model) statusLine() string {
	st := m.styles
	switch m.prompt {
	case promptReject:
		return st.StepRefused.Render("reject: ") + m.input.View()
	case promptNote:
		return st.Title.Render("note: ") + m.input.View()
	case promptAbort:
		return st.StepError.Render("abort the run? (y/n)")
	}
	if line, ok := m.takeoverLine(); ok {
		return line
	}
	if p := m.st.Proposal; p != nil && m.live {
		return st.Question.Render(fmt.Sprintf("proposed: step %d %s %s", p.Step, sanitize.Line(p.Tool), formatArgs(p.Args))) +
			st.Muted.Render(" — a approve · r reject")
	}
	// The status quotes errors, some of them a server's words.
	if !m.live && len(m.evs) > 0 {
		if m.status != "" {
			return st.Muted.Render(sanitize.Line(m.status))
		}
		return st.Muted.Render(sanitize.Line(eventSummary(m.evs[m.cursor])))
	}
	return st.Muted.Render(sanitize.Line(m.status))
}

func (m *Model) helpBar() string {
	if m.helpLine != "" {
		return m.helpLine
	}
	m.help.SetWidth(m.width)
	var keys help.KeyMap = m.rpKeys
	switch {
	case m.focus == focusInbox:
		return m.help.View(m.inKeys)
	case m.screen.full && m.live:
		keys = withScreenKeys{m.keys, m.scKeys}
	case m.screen.full:
		keys = withScreenKeys{m.rpKeys, m.scKeys}
	case m.live:
		keys = m.keys
	}
	return m.shortHelpWithHint(keys.ShortHelp(), m.width)
}

// eventSummary is one event on one line, for the replay's status line.
func eventSummary(e events.Event) string {
	s := string(e.Kind)
	if e.Step > 0 {
		s += fmt.Sprintf(" step %d", e.Step)
	}
	if e.Tool != "" {
		s += " " + e.Tool + " " + formatArgs(e.Args)
	}
	if e.Status != "" {
		s += " → " + string(e.Status)
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return ansi.Strip(s)
}
