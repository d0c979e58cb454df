package tui

import (
	"context"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/tui/sanitize"
)

// TakeoverAccess is how the operator reaches a taken-over desktop with a
// VNC viewer. The password is one-time and a secret: the console shows it
// in its status line while the takeover lasts, and nowhere else.
type TakeoverAccess struct {
	Addr, URL, Password string
}

// TakeoverControls are the Controls of a run started with --takeover: T
// takes the desktop over (the run pauses at its next turn, or at once
// while its question waits for an answer, and starts a VNC server) and
// hands it back.
type TakeoverControls interface {
	TakeOverDesktop(ctx context.Context) (TakeoverAccess, error)
	HandBackDesktop() error
}

// takeoverView is the console's side of a takeover.
type takeoverView struct {
	// asking is set from T until the VNC server listens.
	asking bool
	access *TakeoverAccess
}

type takeoverMsg struct {
	access TakeoverAccess
	err    error
}

type handedBackMsg struct{ err error }

// toggleTakeover asks for the desktop, or hands it back.
func (m *Model) toggleTakeover() tea.Cmd {
	c, ok := m.opts.Controls.(TakeoverControls)
	if !ok {
		m.status = "this console cannot take the desktop over"
		return nil
	}
	if m.desk.asking || m.desk.access != nil {
		m.status = "handing the desktop back…"
		return func() tea.Msg { return handedBackMsg{err: c.HandBackDesktop()} }
	}
	m.desk.asking = true
	m.status = "taking the desktop over: the run pauses at its next turn…"
	if len(m.st.Pending()) > 0 {
		m.status = "taking the desktop over: the run hands it over while its question waits…"
	}
	ctx := m.ctx
	return func() tea.Msg {
		a, err := c.TakeOverDesktop(ctx)
		return takeoverMsg{access: a, err: err}
	}
}

// updateTakeover handles the takeover's messages; ok is false for any
// other message.
func (m *Model) updateTakeover(msg tea.Msg) (cmd tea.Cmd, ok bool) {
	switch msg := msg.(type) {
	case takeoverMsg:
		m.desk.asking = false
		if msg.err != nil {
			m.status = "takeover failed: " + msg.err.Error()
			return nil, true
		}
		m.desk.access = &msg.access
		return nil, true
	case handedBackMsg:
		if msg.err != nil {
			m.status = "hand-back failed: " + msg.err.Error()
		} else {
			m.status = "desktop handed back"
		}
		return nil, true
	}
	return nil, false
}

// foldTakeover follows the run's takeover events: the desktop is the
// run's again once takeover.ended arrives, whoever handed it back.
func (m *Model) foldTakeover(e events.Event) {
	if e.Kind == events.KindTakeoverEnded {
		m.desk.access, m.desk.asking = nil, false
		m.status = "desktop handed back; the run goes on"
	}
}

// takeoverLine is the status line while the operator has the desktop.
func (m *Model) takeoverLine() (string, bool) {
	a := m.desk.access
	if a == nil {
		return "", false
	}
	st := m.styles
	back := " — T hands it back"
	if p := m.st.Pending(); len(p) > 0 {
		// The run handed the desktop over inside ask_human: the question
		// still waits, and the run goes on once both are done.
		back += fmt.Sprintf("; question %s still waits (answer it any time: the run goes on after the hand-back)", sanitize.Line(p[0].ID))
	}
	return st.Question.Render("desktop taken over: "+sanitize.Line(a.URL)+"  password "+sanitize.Line(a.Password)) +
		st.Muted.Render(back), true
}

// formatTakeover is a takeover event's timeline row.
func formatTakeover(e events.Event) string {
	if d, ok := events.DataOf[events.TakeoverStarted](e); ok {
		return fmt.Sprintf("takeover by the %s: VNC at %s", d.By, d.Addr)
	}
	d, ok := events.DataOf[events.TakeoverEnded](e)
	if !ok {
		return string(e.Kind) + ": " + e.Message
	}
	var changed []string
	if n := len(d.WindowsOpened); n > 0 {
		changed = append(changed, fmt.Sprintf("%d window(s) opened", n))
	}
	if n := len(d.WindowsClosed); n > 0 {
		changed = append(changed, fmt.Sprintf("%d closed", n))
	}
	if d.FocusBefore != d.FocusAfter {
		changed = append(changed, "focus moved")
	}
	if d.ScreenChanged {
		changed = append(changed, "screen changed")
	}
	if len(changed) == 0 {
		changed = []string{"nothing changed"}
	}
	how := map[string]string{events.TakeoverClientLeft: "handed back (the viewer left)",
		events.TakeoverRunEnded: "takeover ended with the run"}[d.Ended]
	if how == "" {
		how = "handed back"
	}
	return fmt.Sprintf("%s after %gs: %s", how, d.DurationS, strings.Join(changed, ", "))
}
