package tui

import (
	"image/color"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	uv "github.com/charmbracelet/ultraviolet"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/themes"
	"github.com/kasmrt/kasmrt/tui/graphics"
)

// runCmd runs cmd and the batches it makes, handing every message but
// frames and raw writes (which the test delivers itself) nowhere; it
// returns them in order.
func runCmd(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	switch msg := cmd().(type) {
	case tea.BatchMsg:
		var out []tea.Msg
		for _, c := range msg {
			out = append(out, runCmd(c)...)
		}
		return out
	case nil:
		return nil
	default:
		return []tea.Msg{msg}
	}
}

// settle delivers frames and the terminal's answers to m until none is
// left, as a terminal would answer: every primary device attributes query
// written is answered, in order. It returns the image escapes written to
// the terminal, in order.
func settle(m *Model, msgs []tea.Msg) (raws []string) {
	for len(msgs) > 0 {
		msg := msgs[0]
		msgs = msgs[1:]
		switch s := rawString(msg); s {
		case graphics.DA1Query:
			msgs = append(msgs, da1Reply)
			continue
		case "":
		default:
			raws = append(raws, s)
			continue
		}
		switch msg.(type) {
		case frameMsg, uv.PrimaryDeviceAttributesEvent:
			_, cmd := m.Update(msg)
			msgs = append(msgs, runCmd(cmd)...)
		}
	}
	return raws
}

// da1Reply is a sixel terminal's answer to a primary device attributes
// query.
var da1Reply = uv.PrimaryDeviceAttributesEvent{62, 4, 22}

// rawString is the text a tea.Raw command writes, or "".
func rawString(msg tea.Msg) string {
	if r, ok := msg.(tea.RawMsg); ok {
		s, _ := r.Msg.(string)
		return s
	}
	return ""
}

// TestResizeDropsStaleImage: a sixel frame's image is written a moment
// after the cells it covers are drawn. When the terminal is resized in that
// moment (a window being dragged, a terminal reporting its size twice),
// the frame drawn for the old size must not be written over the new
// layout, where it would stay mixed with the new frame until something
// redrew those cells; the frame for the new size is written instead.
func TestResizeDropsStaleImage(t *testing.T) {
	t.Parallel()
	r, err := LoadReport(zenityRun)
	if err != nil {
		t.Fatal(err)
	}
	m := NewReplay(r, Options{Theme: testTheme(t, false), Graphics: graphics.Sixel, Env: func(string) string { return "" }})
	_, cmd := m.Update(tea.WindowSizeMsg{Width: 160, Height: 48})
	// Render the first frame, and hold back the terminal's answer its
	// image write waits for.
	var held []tea.Msg
	msgs := runCmd(cmd)
	for len(msgs) > 0 {
		msg := msgs[0]
		msgs = msgs[1:]
		if _, ok := msg.(frameMsg); ok {
			_, c := m.Update(msg)
			msgs = append(msgs, runCmd(c)...)
		} else if rawString(msg) == graphics.DA1Query {
			held = append(held, da1Reply)
		}
	}
	if len(held) == 0 || m.frame.Raw == "" {
		t.Fatalf("the first sixel frame was not drawn: %d held, raw %d bytes, cells %q, key %q", len(held), len(m.frame.Raw), m.frame.Cells[:min(40, len(m.frame.Cells))], m.frameKey)
	}
	oldRaw := m.frame.Raw
	_, cmd = m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	raws := settle(m, append(held, runCmd(cmd)...))
	for _, s := range raws {
		if strings.Contains(s, oldRaw) {
			t.Errorf("the image drawn for 160×48 was written after the resize to 100×30")
		}
	}
	if len(raws) == 0 || m.frame.Raw == oldRaw || !strings.Contains(raws[len(raws)-1], m.frame.Raw) {
		t.Errorf("the frame for 100×30 was not written last (%d image writes)", len(raws))
	}
}

// TestLiveRenderInterval: captures that come faster than the render
// interval are not each decoded and drawn; the newest is drawn once the
// interval has passed, the ones between are dropped.
func TestLiveRenderInterval(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeReport(t, dir, nil, false)
	m, _ := NewLive(Options{Dir: dir, Theme: testTheme(t, true), Graphics: graphics.Blocks, Env: func(string) string { return "" },
		RenderInterval: time.Hour})
	m.width, m.height = 120, 40
	evs := sampleEvents()
	var screens []events.Event
	for _, e := range evs {
		if e.Kind == events.KindScreen {
			screens = append(screens, e)
		}
	}
	if len(screens) < 3 {
		t.Fatalf("the sample has %d screens", len(screens))
	}
	// The first capture is drawn at once.
	m.fold(screens[:1])
	for _, msg := range runCmd(m.refreshScreen()) {
		if f, ok := msg.(frameMsg); ok {
			// Nothing newer is wished for: installing asks for no render
			// (a command here would only be the image write, none in
			// blocks mode).
			m.installFrame(f)
		}
	}
	// The next ones, within the interval, wait; they are not drawn. (The
	// command returned is the wait itself, not run here.)
	for _, e := range screens[1:] {
		m.fold([]events.Event{e})
		m.refreshScreen()
	}
	if got := m.rendered.Load(); got != 1 {
		t.Errorf("%d captures within the interval were drawn %d times, want once", len(screens), got)
	}
	if !m.renderDue {
		t.Error("no render was scheduled for when the interval has passed")
	}
	m.Update(renderDueMsg{})
	if got := m.rendered.Load(); got != 2 {
		t.Errorf("after the interval the newest capture was not drawn (%d renders)", got)
	}
}

// TestBackgroundAnswerRewritesImage: a theme that follows the terminal's
// background changes its colours when the terminal answers, and the
// renderer repaints every cell whose colour changed, the image pane's
// border and blank cells with them, which erases a sixel already written
// over them. When the answer comes after the first image (a terminal slow
// to answer on a loaded machine), the image is written again after the
// repaint rather than left erased.
func TestBackgroundAnswerRewritesImage(t *testing.T) {
	t.Parallel()
	m := autoThemeSixelReplay(t)
	_, cmd := m.Update(tea.WindowSizeMsg{Width: 160, Height: 48})
	if raws := settle(m, runCmd(cmd)); len(raws) == 0 || m.frame.Raw == "" {
		t.Fatalf("the first sixel frame was not written (%d writes)", len(raws))
	}
	for _, c := range []struct {
		name     string
		dark     bool
		repaints bool
	}{
		{"light background", false, true},
		{"the same background again", false, false},
		{"dark background", true, true},
	} {
		bg := color.Color(color.White)
		if c.dark {
			bg = color.Black
		}
		_, cmd := m.Update(tea.BackgroundColorMsg{Color: bg})
		raws := settle(m, runCmd(cmd))
		rewritten := len(raws) > 0 && strings.Contains(raws[len(raws)-1], m.frame.Raw)
		if rewritten != c.repaints {
			t.Errorf("%s: image rewritten %v (%d writes), want %v", c.name, rewritten, len(raws), c.repaints)
		}
	}
}

// TestImageWaitsForTheTerminal: the program writes the view on its own
// clock, so an image escape written a fixed moment after the cells under
// it changed can reach the terminal before them and be erased by them (a
// loaded machine left the pane blank that way). The image is written only
// once the terminal has answered a query sent after those cells changed;
// the answer to an earlier query does not count.
func TestImageWaitsForTheTerminal(t *testing.T) {
	t.Parallel()
	m := autoThemeSixelReplay(t)
	steps := []struct {
		what            string
		msg             tea.Msg
		images, queries int
	}{
		{"the first frame is drawn", tea.WindowSizeMsg{Width: 160, Height: 48}, 0, 1},
		{"the colours change under it", tea.BackgroundColorMsg{Color: color.White}, 0, 1},
		{"the terminal answers the first query", da1Reply, 0, 0},
		{"the terminal answers the second", da1Reply, 1, 0},
		{"a stray answer", da1Reply, 0, 0},
	}
	for _, s := range steps {
		_, cmd := m.Update(s.msg)
		if images, queries := written(m, cmd); images != s.images || queries != s.queries {
			t.Errorf("%s: %d image writes and %d queries, want %d and %d", s.what, images, queries, s.images, s.queries)
		}
	}
}

// TestImageForASilentTerminal: a terminal that did not answer the probe's
// query would leave an image waiting for an answer forever, so its images
// are written at once; once it answers after all, they wait again.
func TestImageForASilentTerminal(t *testing.T) {
	t.Parallel()
	r, err := LoadReport(zenityRun)
	if err != nil {
		t.Fatal(err)
	}
	// foot draws sixel, which the console trusts without an answer.
	env := func(k string) string { return map[string]string{"TERM": "foot"}[k] }
	m := NewReplay(r, Options{Graphics: graphics.Auto, Env: env})
	m.Init()
	steps := []struct {
		what            string
		msg             tea.Msg
		images, queries int
	}{
		{"the probe goes unanswered", probeTimeoutMsg{}, 0, 0},
		{"the first frame is drawn", tea.WindowSizeMsg{Width: 160, Height: 48}, 1, 0},
		{"the terminal answers at last", da1Reply, 0, 0},
		{"the window grows", tea.WindowSizeMsg{Width: 170, Height: 50}, 0, 1},
	}
	for _, s := range steps {
		_, cmd := m.Update(s.msg)
		if images, queries := written(m, cmd); images != s.images || queries != s.queries {
			t.Errorf("%s: %d image writes and %d queries, want %d and %d", s.what, images, queries, s.images, s.queries)
		}
	}
	if m.mode != graphics.Sixel {
		t.Errorf("mode %v, want sixel", m.mode)
	}
}

// written runs cmd and returns the image escapes and the queries it
// writes, delivering every other message it makes to m, as the program
// would.
func written(m *Model, cmd tea.Cmd) (images, queries int) {
	msgs := runCmd(cmd)
	for len(msgs) > 0 {
		msg := msgs[0]
		msgs = msgs[1:]
		switch s := rawString(msg); {
		case s == graphics.DA1Query:
			queries++
		case s != "":
			images++
		default:
			_, c := m.Update(msg)
			msgs = append(msgs, runCmd(c)...)
		}
	}
	return images, queries
}

// autoThemeSixelReplay is the zenity run's replay drawing sixel images,
// with the theme that follows the terminal's background.
func autoThemeSixelReplay(t *testing.T) *Model {
	t.Helper()
	r, err := LoadReport(zenityRun)
	if err != nil {
		t.Fatal(err)
	}
	auto, err := themes.Load(themes.Auto, "", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	return NewReplay(r, Options{Theme: auto, Graphics: graphics.Sixel, Env: func(string) string { return "" }})
}
