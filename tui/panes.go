package tui

import (
	"fmt"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/themes"
	"github.com/kasmrt/kasmrt/tui/sanitize"
)

// box draws a pane: a w×h border with the title set into its top edge and
// body clipped and padded to the inside.
func box(st themes.Styles, title, body string, w, h int, focused bool) string {
	if w < 2 || h < 2 {
		return ""
	}
	border := st.PaneBlurred
	if focused {
		border = st.PaneFocused
	}
	b := border.GetBorderStyle()
	edge := lipgloss.NewStyle().Foreground(border.GetBorderTopForeground())
	inner := w - 2
	title = ansi.Truncate(title, max(0, inner-2), "…")
	var out strings.Builder
	out.WriteString(edge.Render(b.TopLeft))
	used := 0
	if title != "" {
		out.WriteString(edge.Render(b.Top))
		out.WriteString(st.Title.Render(title))
		used = 1 + ansi.StringWidth(title)
	}
	out.WriteString(edge.Render(strings.Repeat(b.Top, max(0, inner-used))))
	out.WriteString(edge.Render(b.TopRight))
	left, right := edge.Render(b.Left), edge.Render(b.Right)
	for _, l := range fit(body, inner, h-2) {
		out.WriteString("\n")
		out.WriteString(left)
		out.WriteString(l)
		out.WriteString(right)
	}
	out.WriteString("\n")
	out.WriteString(edge.Render(b.BottomLeft + strings.Repeat(b.Bottom, inner) + b.BottomRight))
	return out.String()
}

// fit clips or pads s to exactly h lines of w cells.
func fit(s string, w, h int) []string {
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	for i, l := range lines {
		lw := ansi.StringWidth(l)
		if lw > w {
			l = ansi.Truncate(l, w, "…")
			lw = ansi.StringWidth(l)
		}
		lines[i] = l + strings.Repeat(" ", max(0, w-lw))
	}
	return lines
}

// wrap breaks plain text to width w.
func wrap(s string, w int) []string {
	if w <= 0 {
		return nil
	}
	return strings.Split(ansi.Wrap(s, w, " "), "\n")
}

// Filter narrows the timeline.
type Filter int

// Timeline filters.
const (
	FilterAll Filter = iota
	FilterRefusals
	FilterGrounding
)

func (f Filter) String() string {
	switch f {
	case FilterRefusals:
		return "refusals only"
	case FilterGrounding:
		return "grounding only"
	}
	return "all"
}

// timelinePane lists every step and what happened around it. It follows
// the newest row until the operator scrolls away, and comes back with G.
type timelinePane struct {
	filter   Filter
	selected int // index into the filtered rows; -1 follows the tail
	offset   int
	// listH is how many rows the last View listed, so a click can tell a
	// row from the detail lines under the list.
	listH int
	// detailOpen leaves the selected row's message to the detail pane,
	// giving its lines to the list.
	detailOpen bool
}

// visible returns the indexes into rows that pass the filter.
func (t *timelinePane) visible(rows []Row) []int {
	var out []int
	for i, r := range rows {
		switch t.filter {
		case FilterRefusals:
			if !r.Refusal() {
				continue
			}
		case FilterGrounding:
			if !r.GroundingRow() {
				continue
			}
		}
		out = append(out, i)
	}
	return out
}

// move scrolls the selection by delta rows of the filtered list.
func (t *timelinePane) move(rows []Row, delta int) {
	n := len(t.visible(rows))
	if n == 0 {
		return
	}
	sel := t.selected
	if sel < 0 || sel >= n {
		sel = n - 1
	}
	sel = min(max(0, sel+delta), n-1)
	t.selected = sel
	if sel == n-1 && delta > 0 {
		t.selected = -1
	}
}

// selectRow selects the filtered row showing rows[i] (or the nearest
// before it).
func (t *timelinePane) selectRow(rows []Row, i int) {
	vis := t.visible(rows)
	t.selected = -1
	for k, ri := range vis {
		if ri <= i {
			t.selected = k
		}
	}
	if t.selected < 0 && len(vis) > 0 {
		t.selected = 0
	}
}

// View renders the timeline body into w×h cells.
func (t *timelinePane) View(st themes.Styles, rows []Row, w, h int) string {
	vis := t.visible(rows)
	if len(vis) == 0 {
		msg := "no steps yet"
		if t.filter != FilterAll {
			msg = "nothing matches the filter (" + t.filter.String() + ")"
		}
		return st.Muted.Render(msg)
	}
	sel := t.selected
	if sel < 0 || sel >= len(vis) {
		sel = len(vis) - 1
	}
	// The selected row's full message gets the pane's last lines.
	var detail []string
	if !t.detailOpen {
		detail = t.detail(rows[vis[sel]], w)
	}
	listH := max(1, h-len(detail))
	if t.offset > sel {
		t.offset = sel
	}
	if sel >= t.offset+listH {
		t.offset = sel - listH + 1
	}
	t.offset = min(t.offset, max(0, len(vis)-listH))
	t.listH = listH
	var lines []string
	for k := t.offset; k < len(vis) && k < t.offset+listH; k++ {
		lines = append(lines, t.line(st, rows[vis[k]], w, k == sel))
	}
	for len(lines) < listH {
		lines = append(lines, "")
	}
	for _, d := range detail {
		lines = append(lines, st.Muted.Render(d))
	}
	return strings.Join(lines, "\n")
}

func (t *timelinePane) line(st themes.Styles, r Row, w int, selected bool) string {
	text, status := rowText(r)
	// A row carries the model's, the app's and the tools' words: their
	// control sequences are shown, not obeyed, and stay on one line.
	text, status = sanitize.Line(text), sanitize.Line(status)
	mark := " "
	if selected {
		mark = "›"
	}
	if r.Refusal() {
		mark = "✗"
		if selected {
			mark = "✘"
		}
	}
	textW := w - 1
	if status != "" {
		textW = w - 1 - min(ansi.StringWidth(status), max(12, w/3)) - 2
	}
	plain := ansi.Truncate(mark+text, max(1, textW), "…")
	style := st.Base
	switch {
	case r.Kind == RowGrounding:
		style = st.Grounding
	case r.Kind != RowStep:
		style = st.Muted
	}
	if r.Refusal() {
		style = st.Status(string(r.Ended.Status))
	}
	out := style.Render(plain)
	if status != "" {
		room := w - ansi.StringWidth(plain) - 2
		if room > 3 {
			out += "  " + st.Status(r.Status()).Render(ansi.Truncate(status, room, "…"))
		}
	}
	if selected {
		out = st.Selected.Render(ansi.Strip(out))
	}
	return out
}

// detail returns up to three lines of the selected row's exact message.
func (t *timelinePane) detail(r Row, w int) []string {
	if r.Kind != RowStep || r.Ended == nil || r.Ended.Message == "" {
		return nil
	}
	lines := wrap(string(r.Ended.Status)+": "+sanitize.Line(r.Ended.Message), w)
	if len(lines) > 3 {
		lines = lines[:3]
	}
	return lines
}

// noClickElementLines says, in at most two lines of width w, why the run
// offers no click_element, so an author reading the console learns it
// before a call fails.
func noClickElementLines(s *State, w int) []string {
	if s.NoClickElement == "" {
		return nil
	}
	lines := strings.Split(ansi.Wordwrap("no click_element: "+s.NoClickElement, max(w, 10), ""), "\n")
	if len(lines) > 2 {
		lines = lines[:2]
		lines[1] = ansi.Truncate(lines[1]+" …", max(w, 10), "…")
	}
	for i := range lines {
		lines[i] = ansi.Truncate(lines[i], max(w, 10), "…")
	}
	return lines
}

// budgetsView renders every bound with its use and limit and the deadline
// countdown with the reserve.
func budgetsView(st themes.Styles, s *State, w int) string {
	var lines []string
	if s.Deadline > 0 {
		left := s.Remaining()
		line := fmt.Sprintf("deadline %s/%s · %s reserve", formatClock(left), formatClock(s.Deadline), formatClock(s.Reserve))
		style := st.Base
		if left <= s.Reserve {
			line = fmt.Sprintf("deadline %s · IN RESERVE (last %s)", formatClock(left), formatClock(s.Reserve))
			style = st.BudgetWarn
		}
		lines = append(lines, style.Render(line))
	}
	if t := tokens(s.Usage); t > 0 {
		lines = append(lines, st.Base.Render(fmt.Sprintf("tokens %s (%d model calls)", formatAmount(t, ""), s.ModelCalls)))
	}
	for _, l := range noClickElementLines(s, w) {
		lines = append(lines, st.BudgetWarn.Render(l))
	}
	if len(s.Budgets) == 0 && len(lines) == 0 {
		return st.Muted.Render("no budgets yet")
	}
	nameW := 0
	for _, b := range s.Budgets {
		nameW = max(nameW, ansi.StringWidth(b.Name))
	}
	nameW = min(nameW, max(4, w/3))
	for _, b := range s.Budgets {
		name := ansi.Truncate(b.Name, nameW, "…")
		name += strings.Repeat(" ", nameW-ansi.StringWidth(name))
		amount := formatBudget(b)
		barW := w - nameW - ansi.StringWidth(amount) - 3
		bar := ""
		if barW >= 4 && b.Limit > 0 {
			frac := min(1, b.Used/b.Limit)
			n := int(frac*float64(barW) + 0.5)
			bar = st.Budget(frac).Render(strings.Repeat("▰", n)) + st.BudgetEmpty.Render(strings.Repeat("▱", barW-n)) + " "
		} else if barW >= 4 {
			bar = strings.Repeat(" ", barW+1)
		}
		style := st.Base
		if b.Limit > 0 && b.Used >= b.Limit {
			style = st.BudgetWarn
		}
		lines = append(lines, style.Render(name)+" "+bar+style.Render(amount))
	}
	return strings.Join(lines, "\n")
}

// verdictLine is the verdict and its outcome, coloured as passing or not.
func verdictLine(st themes.Styles, v *events.Decision) string {
	style := st.VerdictFail
	if v.Verdict == events.VerdictPass || v.Verdict == events.VerdictPassConcerns {
		style = st.VerdictPass
	}
	return style.Render(fmt.Sprintf("%s (%s)", v.Verdict, v.Outcome))
}

// verdictView renders the verdict with why, the checks and the concerns.
func verdictView(st themes.Styles, s *State, w int) string {
	var lines []string
	switch {
	case s.Verdict != nil:
		lines = append(lines, verdictLine(st, s.Verdict))
		for _, r := range s.Verdict.Reasons {
			for _, l := range wrap("· "+r, w) {
				lines = append(lines, l)
			}
		}
	case s.Aborted:
		lines = append(lines, st.VerdictFail.Render("aborting…"))
	default:
		lines = append(lines, st.Muted.Render("undecided"))
	}
	if s.LoopEnded != "" {
		lines = append(lines, st.Muted.Render("loop ended: "+s.LoopEnded))
	}
	if s.Cache != "" {
		lines = append(lines, st.Muted.Render(s.Cache))
	}
	for _, c := range s.Checks {
		res := st.StepOK.Render("ok")
		if !c.OK {
			res = st.StepError.Render("FAILED")
		}
		line := "check " + c.Name + " " + res
		if c.Evidence != "" {
			line += st.Muted.Render(": " + c.Evidence)
		}
		lines = append(lines, line)
	}
	if len(s.Concerns) > 0 {
		lines = append(lines, st.Title.Render(fmt.Sprintf("concerns (%d)", len(s.Concerns))))
		for _, c := range s.Concerns {
			for _, l := range wrap("! "+c, w) {
				lines = append(lines, st.StepMalformed.Render(l))
			}
		}
	}
	return strings.Join(lines, "\n")
}

// inboxView renders the inbox history, newest at the bottom, with pending
// questions marked, into h lines (the caller adds the text area).
func inboxView(st themes.Styles, s *State, w, h int) string {
	view, _ := inboxWindow(st, s, w, h, 0)
	return view
}

// inboxWindow is inboxView scrolled back by back lines from the newest,
// with back kept within the history.
func inboxWindow(st themes.Styles, s *State, w, h, back int) (string, int) {
	if len(s.Inbox) == 0 {
		return st.Muted.Render("no questions or messages"), 0
	}
	var lines []string
	for _, it := range s.Inbox {
		var prefix string
		style := st.Base
		switch it.Kind {
		case events.KindQuestion:
			prefix = "? " + it.Question.ID + ": "
			if it.Question != nil && isPending(s, it.Question.ID) {
				style = st.Question
				prefix = "? " + it.Question.ID + " (waiting): "
			}
		case events.KindAnswer:
			prefix = "↳ " + it.Question.ID + ": "
			if it.Question.By != "" {
				prefix = "↳ " + it.Question.ID + " by " + it.Question.By + ": "
			}
			style = st.Muted
		case events.KindRespond:
			prefix = "model: "
		case events.KindSteer:
			prefix = "note to model: "
			style = st.Muted
		}
		for _, l := range wrap(prefix+sanitize.Text(it.Text), w) {
			lines = append(lines, style.Render(l))
		}
	}
	back = min(max(0, back), max(0, len(lines)-h))
	end := len(lines) - back
	return strings.Join(lines[max(0, end-h):end], "\n"), back
}

func isPending(s *State, id string) bool {
	for _, q := range s.Pending() {
		if q.ID == id {
			return true
		}
	}
	return false
}

// tokens is the run's token use so far: the providers' total_tokens, or
// prompt plus completion tokens where they report no total.
func tokens(usage map[string]float64) float64 {
	if t := usage["total_tokens"]; t > 0 {
		return t
	}
	return usage["prompt_tokens"] + usage["completion_tokens"] + usage["input_tokens"] + usage["output_tokens"]
}
