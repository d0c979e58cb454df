package tui

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/table"
	tea "charm.land/bubbletea/v2"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/tui/sanitize"
)

// fleetColumn is a column of the runs table, in display order.
type fleetColumn int

const (
	colScenario fleetColumn = iota
	colSample
	colState
	colStep
	colVerdict
	colDuration
	colTokens
	colQuestions
	fleetColumnCount
)

func (c fleetColumn) title() string {
	return [...]string{"SCENARIO", "SAMPLE", "STATE", "STEP", "VERDICT", "DURATION", "TOKENS", "?"}[c]
}

// heading is the column's title in a header of the given narrowness.
func (c fleetColumn) heading(narrow bool) string {
	if narrow {
		return [...]string{"SCENARIO", "#", "STATE", "STEP", "VERDICT", "TIME", "TOKENS", "?"}[c]
	}
	return c.title()
}

// fixed is the column's width in cells, narrower on a narrow terminal
// (a verdict is cut, "pass-with…"); 0 shares what is left.
func (c fleetColumn) fixed(narrow bool) int {
	if narrow {
		return [...]int{0, 4, 8, 0, 10, 7, 6, 2}[c]
	}
	return [...]int{0, 7, 8, 0, 18, 9, 7, 2}[c]
}

func (fr *fleetRun) state() RunState {
	st := fr.model.st
	switch {
	case fr.desc.State == RunNotRun:
		return RunNotRun
	case st.Ended || fr.desc.State == RunEnded:
		return RunEnded
	case st.Seen > 0 || fr.desc.State == RunRunning:
		return RunRunning
	}
	return RunQueued
}

func (fr *fleetRun) scenario() string {
	if fr.desc.Scenario != "" {
		return fr.desc.Scenario
	}
	if fr.model.st.Scenario != "" {
		return fr.model.st.Scenario
	}
	return fr.desc.ID
}

func (fr *fleetRun) label() string {
	return fmt.Sprintf("%s #%d", fr.scenario(), fr.desc.Sample)
}

func (fr *fleetRun) verdict() events.Verdict {
	if v := fr.model.st.Verdict; v != nil {
		return v.Verdict
	}
	return fr.desc.Verdict
}

// step is the run's newest step: its number, tool and, while it runs, an
// ellipsis.
func (fr *fleetRun) step() string {
	rows := fr.model.st.Rows
	if n := len(rows); n > 0 {
		// Standing still for a backend is what the operator should see.
		if d, ok := events.DataOf[events.CapacityWait](rows[n-1].Event); ok {
			return "waits for " + d.Group
		}
	}
	for i := len(rows) - 1; i >= 0; i-- {
		r := rows[i]
		if r.Kind != RowStep {
			continue
		}
		s := fmt.Sprintf("%d %s", r.Event.Step, r.Event.Tool)
		if r.Ended == nil {
			return s + " …"
		}
		return s + " " + string(r.Ended.Status)
	}
	return ""
}

func (fr *fleetRun) duration(now time.Time) time.Duration {
	st := fr.model.st
	if st.Started.IsZero() {
		return time.Duration(fr.desc.DurationMS) * time.Millisecond
	}
	end := now
	if st.Ended || fr.desc.State == RunEnded {
		end = st.Now
	}
	return max(0, end.Sub(st.Started))
}

func (fr *fleetRun) tokens() float64 {
	if t := tokens(fr.model.st.Usage); t > 0 {
		return t
	}
	return fr.desc.Tokens
}

// stateOrder sorts runs that need the operator first.
func stateOrder(s RunState) int {
	switch s {
	case RunRunning:
		return 0
	case RunQueued:
		return 1
	case RunEnded:
		return 2
	}
	return 3
}

func (f *Fleet) now() time.Time { return f.opts.Run.Now() }

func (f *Fleet) compare(a, b *fleetRun) int {
	now := f.now()
	switch f.sortBy {
	case colScenario:
		return cmp.Compare(a.scenario(), b.scenario())
	case colSample:
		return cmp.Compare(a.desc.Sample, b.desc.Sample)
	case colState:
		return cmp.Compare(stateOrder(a.state()), stateOrder(b.state()))
	case colStep:
		return cmp.Compare(a.model.st.Seen, b.model.st.Seen)
	case colVerdict:
		return cmp.Compare(a.verdict(), b.verdict())
	case colDuration:
		return cmp.Compare(a.duration(now), b.duration(now))
	case colTokens:
		return cmp.Compare(a.tokens(), b.tokens())
	case colQuestions:
		return cmp.Compare(len(a.model.st.Pending()), len(b.model.st.Pending()))
	}
	return 0
}

// matches reports whether the run passes the filter: every word of it
// appears in the run's scenario, id, state or verdict.
func (fr *fleetRun) matches(filter string) bool {
	hay := strings.ToLower(strings.Join([]string{fr.scenario(), fr.desc.ID, string(fr.state()), string(fr.verdict()), "#" + strconv.Itoa(fr.desc.Sample)}, " "))
	for _, w := range strings.Fields(strings.ToLower(filter)) {
		if !strings.Contains(hay, w) {
			return false
		}
	}
	return true
}

// refreshRows recomputes the table from the runs: filter, sort, cells. The
// selection stays on the same run when it is still listed.
func (f *Fleet) refreshRows() {
	f.rowsStale = false
	var selected *fleetRun
	if i := f.table.Cursor(); i >= 0 && i < len(f.shown) {
		selected = f.shown[i]
	}
	filter := f.filter.Value()
	shown := make([]*fleetRun, 0, len(f.runs))
	for _, fr := range f.runs {
		if fr.matches(filter) {
			shown = append(shown, fr)
		}
	}
	slices.SortStableFunc(shown, func(a, b *fleetRun) int {
		c := f.compare(a, b)
		if f.sortDesc {
			c = -c
		}
		return c
	})
	f.shown = shown
	now := f.now()
	rows := make([]table.Row, len(shown))
	cursor := 0
	for i, fr := range shown {
		if fr == selected {
			cursor = i
		}
		q := ""
		if n := len(fr.model.st.Pending()); n > 0 {
			q = strconv.Itoa(n)
		}
		dur := ""
		if d := fr.duration(now); d > 0 {
			dur = formatDuration(d.Milliseconds())
		}
		tok := ""
		if t := fr.tokens(); t > 0 {
			tok = formatAmount(t, "")
		}
		rows[i] = table.Row{fr.scenario(), "#" + strconv.Itoa(fr.desc.Sample), string(fr.state()), fr.step(), string(fr.verdict()), dur, tok, q}
	}
	// The table renders its visible rows on every change: give it only
	// real ones.
	if !slices.EqualFunc(rows, f.table.Rows(), slices.Equal) {
		f.table.SetRows(rows)
		f.boxKey = ""
	}
	if len(rows) > 0 && f.table.Cursor() != cursor {
		f.table.SetCursor(cursor)
		f.boxKey = ""
	}
	if f.focus == fleetInbox && len(f.pending()) == 0 {
		// The last question was answered: the keys belong to the table
		// again, or a q would be typed into an answer nobody needs.
		f.focus = fleetTable
		f.answer.Blur()
	}
}

// fleetLayout is the table view's rectangles: heights of the table and
// inbox panes.
type fleetLayout struct{ tableH, inboxH int }

func (f *Fleet) layout() fleetLayout {
	bodyH := max(0, f.height-3)
	inboxH := min(max(5, len(f.pending())+4), max(5, bodyH/3))
	return fleetLayout{tableH: max(3, bodyH-inboxH), inboxH: inboxH}
}

// layoutTable sizes the table's columns to the terminal: fixed columns
// keep their width, the scenario and the step share the rest.
func (f *Fleet) layoutTable() {
	inner := max(0, f.width-2)
	key := fmt.Sprintf("%d %d %d %v", inner, f.layout().tableH, f.sortBy, f.sortDesc)
	if key == f.tableKey {
		return
	}
	f.tableKey, f.boxKey = key, ""
	narrow := inner < 110
	fixed := 0
	for c := range fleetColumnCount {
		// Each cell is padded by one on either side.
		fixed += c.fixed(narrow) + 2
	}
	free := max(16, inner-fixed)
	cols := make([]table.Column, fleetColumnCount)
	for c := range fleetColumnCount {
		w := c.fixed(narrow)
		switch c {
		case colScenario:
			w = free * 9 / 20
		case colStep:
			w = free - free*9/20
		}
		title := c.heading(narrow)
		if c == f.sortBy {
			if f.sortDesc {
				title += "↓"
			} else {
				title += "↑"
			}
		}
		cols[c] = table.Column{Title: title, Width: w}
	}
	f.table.SetColumns(cols)
	f.table.SetWidth(inner)
	f.table.SetHeight(max(1, f.layout().tableH-2))
}

// View draws the table, or the watched run's panes with a line to go back.
func (f *Fleet) View() tea.View {
	if fr := f.watched; fr != nil {
		v := fr.model.View()
		v.Content += "\n" + fit(f.breadcrumb(fr), f.width, 1)[0]
		f.lastView.Store(&v.Content)
		return v
	}
	content := f.render()
	f.lastView.Store(&content)
	v := tea.NewView(content)
	v.AltScreen = true
	v.WindowTitle = sanitize.Line(f.windowTitle())
	return v
}

func (f *Fleet) windowTitle() string {
	title := "kasmrt suite · " + f.title()
	if n := len(f.pending()); n > 0 {
		title = fmt.Sprintf("(%d?) %s — question waiting", n, title)
	}
	return title
}

func (f *Fleet) title() string {
	if f.opts.Title != "" {
		return f.opts.Title
	}
	return "runs"
}

// breadcrumb is the watched run's last line: where it sits in the fleet,
// the way back, and the questions other runs are waiting on.
func (f *Fleet) breadcrumb(fr *fleetRun) string {
	st := f.styles
	parts := []string{st.Title.Render("suite " + f.title()), fr.label(), st.HelpKey.Render("esc") + st.HelpDesc.Render(" back to the runs")}
	others := 0
	for _, q := range f.pending() {
		if q.run != fr {
			others++
		}
	}
	if others > 0 {
		parts = append(parts, st.Question.Render(fmt.Sprintf("%d question(s) waiting in other runs", others)))
	}
	if f.confirmQuit {
		parts = append(parts, st.StepError.Render("stop the suite? (y/n)"))
	}
	return strings.Join(parts, st.Muted.Render(" · "))
}

func (f *Fleet) render() string {
	if f.width < 40 || f.height < 12 {
		return fmt.Sprintf("terminal too small (%dx%d): kasmrt needs 40x12", f.width, f.height)
	}
	f.layoutTable()
	l := f.layout()
	st := f.styles
	header := fit(f.header(), f.width, 1)[0]
	tableTitle := fmt.Sprintf("runs · %d of %d", len(f.shown), len(f.runs))
	if v := f.filter.Value(); v != "" {
		tableTitle += " · filter " + v
	}
	tableTitle += " · sort " + strings.ToLower(f.sortBy.title())
	if f.sortDesc {
		tableTitle += " ↓"
	}
	if key := fmt.Sprintf("%s|%d|%v", tableTitle, l.tableH, f.focus == fleetTable); key != f.boxKey || f.tableBox == "" {
		f.boxKey = key
		f.tableBox = box(st, tableTitle, f.table.View(), f.width, l.tableH, f.focus == fleetTable)
	}
	body := f.tableBox
	inbox := box(st, f.inboxTitle(), f.inboxBody(f.width-2, l.inboxH-2), f.width, l.inboxH, f.focus == fleetInbox)
	status := fit(f.statusLine(), f.width, 1)[0]
	f.help.SetWidth(f.width)
	helpBar := fit(f.help.View(f.keys.forFocus(f.focus)), f.width, 1)[0]
	// Every part is already the terminal's width: plain joins, no
	// measuring of each line again.
	return header + "\n" + body + "\n" + inbox + "\n" + status + "\n" + helpBar
}

func (f *Fleet) header() string {
	st := f.styles
	counts := map[RunState]int{}
	for _, fr := range f.runs {
		counts[fr.state()]++
	}
	parts := []string{st.Title.Render("kasmrt suite"), f.title()}
	for _, s := range []RunState{RunRunning, RunQueued, RunEnded, RunNotRun} {
		if n := counts[s]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, s))
		}
	}
	if f.sourceDone {
		parts = append(parts, "done")
	}
	if n := len(f.pending()); n > 0 {
		parts = append(parts, st.Question.Render(fmt.Sprintf("%d question(s) waiting", n)))
	}
	return strings.Join(parts, st.Muted.Render(" · "))
}

func (f *Fleet) inboxTitle() string {
	if n := len(f.pending()); n > 0 {
		return fmt.Sprintf("inbox · %d waiting", n)
	}
	return "inbox"
}

// inboxBody lists every waiting question with its run; in the inbox the
// selected one is marked and the answer line is below.
func (f *Fleet) inboxBody(w, h int) string {
	st := f.styles
	qs := f.pending()
	if len(qs) == 0 {
		return st.Muted.Render("no question is waiting")
	}
	sel := min(f.inboxSel, len(qs)-1)
	listH := h
	if f.focus == fleetInbox {
		// The answer's row and the mark's rule above it.
		listH = max(1, h-2)
	}
	start := max(0, min(sel-listH+1, len(qs)-listH))
	var lines []string
	for i := start; i < len(qs) && len(lines) < listH; i++ {
		q := qs[i]
		line := fmt.Sprintf("%s: %s", q.run.label(), q.q.Text)
		if i == sel && f.focus == fleetInbox {
			lines = append(lines, st.Selected.Render(fit("▸ "+line, w, 1)[0]))
			continue
		}
		lines = append(lines, st.Question.Render(fit("  "+line, w, 1)[0]))
	}
	if f.focus == fleetInbox {
		f.answer.SetWidth(max(1, w-3))
		lines = append(lines, markLine(st, f.answerMark, w), f.answer.View())
	}
	return strings.Join(lines, "\n")
}

func (f *Fleet) statusLine() string {
	st := f.styles
	switch {
	case f.confirmQuit:
		return st.StepError.Render(fmt.Sprintf("stop the suite? %d run(s) have not ended; each running one ends with a complete report (y/n)", f.active()))
	case f.focus == fleetFilter:
		return f.filter.View()
	}
	return st.Muted.Render(sanitize.Line(f.status))
}
