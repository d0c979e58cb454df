package tui

import (
	"fmt"
	"image"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/tui/sanitize"
)

// currentRow is the timeline row the screen and the detail pane describe:
// the selected row, or the newest while the timeline follows the run (in
// the replay: the newest row up to the cursor).
func (m *Model) currentRow() (Row, bool) {
	rows := m.st.Rows
	vis := m.timeline.visible(rows)
	if len(vis) == 0 {
		return Row{}, false
	}
	sel := m.timeline.selected
	if sel < 0 || sel >= len(vis) {
		sel = len(vis) - 1
	}
	return rows[vis[sel]], true
}

// inspecting reports whether the live view shows a past row instead of
// following the run.
func (m *Model) inspecting() bool {
	return m.live && m.timeline.selected >= 0
}

// rowCompare is the before and after pair of a row: a grounding attempt's,
// the last attempt of a grounded step, or a step's screens around it.
func rowCompare(s *State, r Row) (before, after string, point *events.Point, title string, ok bool) {
	if r.Kind == RowStep {
		for i := len(s.Rows) - 1; i >= 0; i-- {
			gr := s.Rows[i]
			if g := gr.Event.Grounding; gr.Kind == RowGrounding && g != nil && g.Step == r.Event.Step && g.Before != "" && g.After != "" {
				r = gr
				break
			}
		}
	}
	if g := r.Event.Grounding; r.Kind == RowGrounding && g != nil && g.Before != "" && g.After != "" {
		return g.Before, g.After, g.Point, groundingCompareTitle(g), true
	}
	if r.Kind == RowStep && r.Before != "" && r.Screen != "" && r.Before != r.Screen {
		return r.Before, r.Screen, r.Point, fmt.Sprintf("before | after · step %d %s", r.Event.Step, sanitize.Line(r.Event.Tool)), true
	}
	return "", "", nil, "", false
}

// groundingCompareTitle titles a grounding attempt's before and after.
func groundingCompareTitle(g *events.Grounding) string {
	return fmt.Sprintf("before | after · step %d attempt %d · %s", g.Step, g.Attempt, g.Outcome)
}

// toggleDetail opens the detail pane on kind, or closes it when it shows
// kind already.
func (m *Model) toggleDetail(kind detailKind) tea.Cmd {
	if m.detail == kind {
		m.detail = detailNone
	} else {
		m.detail = kind
	}
	m.detailOffset = 0
	return m.refreshScreen()
}

// detailDoc is what the detail pane shows now.
func (m *Model) detailDoc(w int) detailDoc {
	r, ok := m.currentRow()
	switch {
	case m.detail == detailWhy:
		t, found := len(m.st.Turns)-1, len(m.st.Turns) > 0
		// A call waiting for approval has no row yet: while the timeline
		// follows, its turn is the one to explain.
		if ok && (m.st.Proposal == nil || m.timeline.selected >= 0) {
			t, found = turnFor(m.st, r)
		}
		if !found {
			return detailDoc{title: "why", lines: []string{m.styles.Muted.Render("no model turn yet (a scripted run has none)")}}
		}
		return whyDetail(m.styles, m.st, t, w)
	case !ok:
		return detailDoc{title: "detail", lines: []string{m.styles.Muted.Render("no steps yet")}}
	}
	return rowDetail(m.styles, m.st, r, w)
}

// detailBody cuts doc to h lines from the scroll offset, and keeps the
// offset within the document.
func (m *Model) detailBody(doc detailDoc, h int) string {
	m.detailOffset = min(max(0, m.detailOffset), max(0, len(doc.lines)-h))
	lines := doc.lines[m.detailOffset:]
	if len(lines) > h {
		lines = slices.Clone(lines[:h])
		lines[h-1] = m.styles.Muted.Render("↓ more · J/K or the wheel scroll")
	}
	return strings.Join(lines, "\n")
}

// detailPaneTitle titles the pane with what it shows and how far it is
// scrolled.
func (m *Model) detailPaneTitle(doc string) string {
	if m.detailOffset > 0 {
		return fmt.Sprintf("%s · line %d", doc, m.detailOffset+1)
	}
	return doc
}

// jumpFailed selects the next (dir 1) or previous (dir -1) step that did
// not succeed, wrapping around the run. The replay moves its cursor
// there; the live view selects the row and keeps running.
func (m *Model) jumpFailed(dir int) tea.Cmd {
	if !m.live {
		rows := m.allRows
		var failed []int
		for _, r := range rows {
			if r.Failed() {
				failed = append(failed, r.Last())
			}
		}
		return m.wrapJump(dir, failed, m.cursor, func(i int) { m.seek(i) })
	}
	rows := m.st.Rows
	vis := m.timeline.visible(rows)
	var failed []int
	for k, ri := range vis {
		if rows[ri].Failed() {
			failed = append(failed, k)
		}
	}
	cur := m.timeline.selected
	if cur < 0 {
		// Following: the newest row is the position, so "next" wraps to
		// the first failure and "previous" finds the newest one.
		cur = len(vis)
	}
	return m.wrapJump(dir, failed, cur, func(k int) { m.timeline.selected = k })
}

// wrapJump moves from position cur to the next or previous of the sorted
// positions in at, wrapping around, and says so when it wraps.
func (m *Model) wrapJump(dir int, at []int, cur int, move func(int)) tea.Cmd {
	if len(at) == 0 {
		m.status = "no failed step (error, malformed or refused)"
		return nil
	}
	target, wrapped := -1, false
	if dir > 0 {
		for _, p := range at {
			if p > cur {
				target = p
				break
			}
		}
		if target < 0 {
			target, wrapped = at[0], true
		}
	} else {
		for k := len(at) - 1; k >= 0; k-- {
			if at[k] < cur {
				target = at[k]
				break
			}
		}
		if target < 0 {
			target, wrapped = at[len(at)-1], true
		}
	}
	move(target)
	m.status = ""
	if wrapped {
		m.status = "wrapped around the run"
	}
	return m.refreshScreen()
}

// wheelStep is how many rows one notch of the wheel scrolls.
const wheelStep = 3

// handleMouse routes a click or a wheel turn to the pane under it. Every
// action it takes also has a key.
func (m *Model) handleMouse(msg tea.MouseMsg) tea.Cmd {
	if m.prompt != promptNone || m.showHelp {
		return nil
	}
	mouse := msg.Mouse()
	at := image.Pt(mouse.X, mouse.Y)
	l := m.layout()
	switch msg.(type) {
	case tea.MouseClickMsg:
		if mouse.Button != tea.MouseLeft {
			return nil
		}
		switch {
		case at.In(inner(l.Timeline)):
			return m.clickRow(at.Y - inner(l.Timeline).Min.Y)
		case at.In(l.Inbox) && m.live:
			if m.focus != focusInbox {
				m.focus = focusInbox
				return m.answer.Focus()
			}
		case m.focus == focusInbox && !at.In(l.Inbox):
			m.focus = focusTimeline
			m.answer.Blur()
		}
	case tea.MouseWheelMsg:
		delta := 0
		switch mouse.Button {
		case tea.MouseWheelUp:
			delta = -wheelStep
		case tea.MouseWheelDown:
			delta = wheelStep
		default:
			return nil
		}
		switch {
		case at.In(l.Timeline):
			if !m.live {
				return m.jumpRow(delta / wheelStep)
			}
			m.timeline.move(m.st.Rows, delta)
			return m.refreshScreen()
		case at.In(l.Detail):
			m.detailOffset = max(0, m.detailOffset+delta)
		case at.In(l.Inbox):
			// The newest line is at the bottom: the wheel up goes back.
			m.inboxBack = max(0, m.inboxBack-delta)
		}
	}
	return nil
}

// clickRow selects the timeline row drawn on line y of the pane's inside;
// a click on the selected row opens its detail.
func (m *Model) clickRow(y int) tea.Cmd {
	if m.focus == focusInbox {
		m.focus = focusTimeline
		m.answer.Blur()
	}
	rows := m.st.Rows
	vis := m.timeline.visible(rows)
	k := m.timeline.offset + y
	if y >= m.timeline.listH || k >= len(vis) {
		return nil
	}
	if r, ok := m.currentRow(); ok && r.Index == rows[vis[k]].Index {
		if m.detail == detailNone {
			return m.toggleDetail(detailStep)
		}
		return nil
	}
	if !m.live {
		m.seek(rows[vis[k]].Last())
		m.timeline.selectRow(m.st.Rows, vis[k])
		m.status = ""
		return m.refreshScreen()
	}
	m.timeline.selected = k
	return m.refreshScreen()
}
