package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kasmrt/kasmrt/engine/events"
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

// settle delivers frames and raw writes to m until none is left, and
// returns the image escapes written to the terminal, in order.
func settle(m *Model, msgs []tea.Msg) (raws []string) {
	for len(msgs) > 0 {
		msg := msgs[0]
		msgs = msgs[1:]
		switch msg.(type) {
		case frameMsg, rawMsg:
			_, cmd := m.Update(msg)
			for _, out := range runCmd(cmd) {
				if s := rawString(out); s != "" {
					raws = append(raws, s)
					continue
				}
				msgs = append(msgs, out)
			}
		}
	}
	return raws
}

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
	// Render the first frame, and hold its image write back.
	var held []tea.Msg
	msgs := runCmd(cmd)
	for len(msgs) > 0 {
		msg := msgs[0]
		msgs = msgs[1:]
		switch msg.(type) {
		case frameMsg:
			_, c := m.Update(msg)
			msgs = append(msgs, runCmd(c)...)
		case rawMsg:
			held = append(held, msg)
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
