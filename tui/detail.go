package tui

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/themes"
	"github.com/kasmrt/kasmrt/tui/sanitize"
)

// detailKind is what the detail pane shows.
type detailKind int

const (
	detailNone detailKind = iota
	// detailStep is the current row in full: a step's arguments, result,
	// duration, screens and grounding attempts.
	detailStep
	// detailWhy is the model turn behind the current row: what the model
	// was sent, what it said and what it called.
	detailWhy
)

// detailDoc is the detail pane's text before it is cut to the pane's
// height: a title and lines of width w.
type detailDoc struct {
	title string
	lines []string
}

// lineWriter collects a document's lines, wrapping and indenting them to
// one width. Every text from the run passes through sanitize, so a
// control sequence in a model's reply or an app's output is shown, not
// obeyed.
type lineWriter struct {
	st    themes.Styles
	w     int
	lines []string
}

func (lw *lineWriter) heading(s string) {
	lw.lines = append(lw.lines, lw.st.Title.Render(ansi.Truncate(s, lw.w, "…")))
}

// text adds untrusted, possibly multi-line text, wrapped and indented.
func (lw *lineWriter) text(s string) {
	for _, para := range strings.Split(sanitize.Text(s), "\n") {
		for _, l := range wrap(para, max(1, lw.w-2)) {
			lw.lines = append(lw.lines, "  "+l)
		}
	}
}

// styled adds one line of the console's own words, already styled.
func (lw *lineWriter) styled(s string) {
	lw.lines = append(lw.lines, ansi.Truncate(s, lw.w, "…"))
}

func (lw *lineWriter) muted(s string) {
	for _, l := range wrap(s, lw.w) {
		lw.lines = append(lw.lines, lw.st.Muted.Render(l))
	}
}

// rowDetail describes a timeline row in full.
func rowDetail(st themes.Styles, s *State, r Row, w int) detailDoc {
	lw := &lineWriter{st: st, w: w}
	e := r.Event
	switch r.Kind {
	case RowStep:
		return stepDetail(lw, s, r)
	case RowGrounding:
		g := e.Grounding
		if g == nil {
			break
		}
		lw.heading(fmt.Sprintf("grounding step %d attempt %d", g.Step, g.Attempt))
		lw.styled(st.Grounding.Render(g.Outcome) + " at " + formatPoint(g.Point))
		lw.heading("description")
		lw.text(g.Description)
		lw.heading("expected")
		lw.text(g.Expect)
		if g.Reason != "" {
			lw.heading("reason")
			lw.text(g.Reason)
		}
		screensLines(lw, g.Before, g.After)
		return detailDoc{title: fmt.Sprintf("grounding · step %d", g.Step), lines: lw.lines}
	}
	if d, ok := events.DataOf[events.Baseline](e); ok {
		return baselineDetail(lw, s, e, d)
	}
	text, _ := rowText(r)
	lw.heading(string(e.Kind) + at(s, e.T))
	lw.text(strings.TrimSpace(text))
	if e.Message != "" && !strings.Contains(text, e.Message) {
		lw.text(e.Message)
	}
	if e.Screen != "" {
		lw.muted("screen " + e.Screen)
	}
	return detailDoc{title: string(e.Kind), lines: lw.lines}
}

func stepDetail(lw *lineWriter, s *State, r Row) detailDoc {
	st, e := lw.st, r.Event
	head := fmt.Sprintf("step %d %s", e.Step, sanitize.Line(e.Tool))
	if e.Source != "" {
		head += " · " + string(e.Source)
	}
	lw.heading(head)
	status := st.Status(r.Status()).Render(r.Status())
	if r.Ended != nil {
		status += st.Muted.Render(" · " + formatDuration(r.Ended.DurationMS))
	}
	lw.styled(status + st.Muted.Render(" · started"+at(s, e.T)))
	lw.heading("arguments")
	if len(e.Args) == 0 {
		lw.muted("  none")
	}
	for _, k := range slices.Sorted(maps.Keys(e.Args)) {
		lw.text(k + ": " + argValue(e.Args[k]))
	}
	lw.heading("result")
	switch {
	case r.Ended == nil:
		lw.muted("  running…")
	case r.Ended.Message == "":
		lw.muted("  " + string(r.Ended.Status))
	default:
		lw.text(r.Ended.Message)
	}
	if r.Ended != nil && r.Ended.Point != nil {
		lw.muted("  at " + formatPoint(r.Ended.Point))
	}
	screensLines(lw, r.Before, r.Screen)
	var attempts []*events.Grounding
	for _, gr := range s.Rows {
		if gr.Kind == RowGrounding && gr.Event.Grounding != nil && gr.Event.Grounding.Step == e.Step {
			attempts = append(attempts, gr.Event.Grounding)
		}
	}
	if len(attempts) > 0 {
		lw.heading(fmt.Sprintf("grounding attempts (%d)", len(attempts)))
		for _, g := range attempts {
			line := fmt.Sprintf("%d. %s at %s", g.Attempt, g.Outcome, formatPoint(g.Point))
			if g.Reason != "" {
				line += ": " + g.Reason
			}
			lw.text(line)
		}
	}
	var shots []string
	for _, br := range s.Rows {
		if d, ok := events.DataOf[events.Baseline](br.Event); ok && br.Event.Step == e.Step {
			shots = append(shots, d.Name+" "+d.Result)
		}
	}
	if len(shots) > 0 {
		lw.heading("screenshot checks")
		lw.text(strings.Join(shots, ", "))
		lw.muted("  their rows below show each diff")
	}
	if t, ok := s.TurnOf(e.Step); ok {
		lw.muted(fmt.Sprintf("called by model turn %d · w shows why", s.Turns[t].Request.Iteration))
	}
	return detailDoc{title: fmt.Sprintf("step %d", e.Step), lines: lw.lines}
}

// baselineDetail describes a screenshot check: what it compared, how much
// differed, and the images kept. The screen pane shows the diff.
func baselineDetail(lw *lineWriter, s *State, e events.Event, d events.Baseline) detailDoc {
	lw.heading(fmt.Sprintf("screenshot %s · step %d%s", sanitize.Line(d.Name), e.Step, at(s, e.T)))
	status := themes.StatusError
	if d.Result == events.BaselineMatched || d.Result == events.BaselineWritten {
		status = themes.StatusOK
	}
	lw.styled(lw.st.Status(status).Render(d.Result))
	lw.text(e.Message)
	lw.heading("baseline")
	lw.text(d.File)
	var kept []string
	for _, f := range []struct{ what, path string }{{"baseline", d.Expected}, {"window", d.Actual}, {"diff", d.Diff}} {
		if f.path != "" {
			kept = append(kept, f.what+" "+f.path)
		}
	}
	if len(kept) > 0 {
		lw.heading("kept in the report")
		lw.text(strings.Join(kept, "\n"))
		lw.muted("  the screen pane shows the " + map[bool]string{true: "diff: red differs, yellow anti-aliasing, magenta masked", false: "window"}[d.Diff != ""])
	}
	return detailDoc{title: "screenshot " + sanitize.Line(d.Name), lines: lw.lines}
}

func screensLines(lw *lineWriter, before, after string) {
	if before == "" && after == "" {
		return
	}
	lw.heading("screens")
	var parts []string
	if before != "" {
		parts = append(parts, fmt.Sprintf("before %04d", screenNumber(before)))
	}
	if after != "" {
		parts = append(parts, fmt.Sprintf("after %04d", screenNumber(after)))
	}
	line := "  " + strings.Join(parts, " · ")
	if before != "" && after != "" && before != after {
		line += " · b side by side"
	}
	lw.muted(line)
}

// turnFor is the model turn behind row r: the one that called its step,
// or else the newest turn asked before the row.
func turnFor(s *State, r Row) (int, bool) {
	if step := r.Step(); step > 0 {
		if t, ok := s.TurnOf(step); ok {
			return t, true
		}
	}
	found := -1
	for i, t := range s.Turns {
		if t.Index <= r.Index {
			found = i
		}
	}
	return found, found >= 0
}

// whyDetail shows one model turn: its size, what it was told since its
// previous reply, the Environment Update, what it said and called, and
// the tools it had.
func whyDetail(st themes.Styles, s *State, t int, w int) detailDoc {
	lw := &lineWriter{st: st, w: w}
	turn := s.Turns[t]
	d := turn.Request
	lw.heading(fmt.Sprintf("model turn %d", d.Iteration) + at(s, turn.T))
	size := fmt.Sprintf("%d messages · %d images", d.Messages, d.Images)
	if d.ImageBytes > 0 {
		size += fmt.Sprintf(" (%s)", formatBytes(d.ImageBytes))
	}
	lw.muted(size)
	if rep := turn.Reply; rep != nil {
		line := "reply in " + formatDuration(rep.DurationMS)
		if n := tokens(rep.Usage); n > 0 {
			line += fmt.Sprintf(" · %s tokens", formatAmount(n, ""))
		}
		if turn.Aux > 0 {
			line += fmt.Sprintf(" · %d more model call(s) in the turn", turn.Aux)
		}
		lw.muted(line)
	}
	lw.heading("the model said")
	switch {
	case turn.Reply == nil:
		lw.muted("  waiting for the reply…")
	case strings.TrimSpace(turn.Reply.Message) == "":
		lw.muted("  (no text)")
	default:
		lw.text(turn.Reply.Message)
	}
	lw.heading("it called")
	if p := s.Proposal; len(turn.Steps) == 0 && p != nil && t == len(s.Turns)-1 {
		// Step mode: the call waits for the operator, who decides on it
		// with this view in front of them.
		lw.text(fmt.Sprintf("%d %s %s → waiting for approval (a approve · r reject)", p.Step, p.Tool, formatArgs(p.Args)))
	} else if len(turn.Steps) == 0 && turn.Reply != nil {
		lw.muted("  no tool")
	}
	for _, n := range turn.Steps {
		if i, ok := s.stepRows[n]; ok {
			text, status := rowText(s.Rows[i])
			lw.text(strings.TrimSpace(text) + " → " + status)
		}
	}
	if len(d.Tools) == 0 && d.Update == "" && len(d.Sent) == 0 {
		lw.muted("this report was written before requests recorded what they sent the model")
		return detailDoc{title: fmt.Sprintf("why · turn %d", d.Iteration), lines: lw.lines}
	}
	lw.heading("it was sent")
	for _, m := range d.Sent {
		text := m.Text
		if m.Images > 0 {
			text += fmt.Sprintf(" [+%d image(s)]", m.Images)
		}
		lw.text(m.Role + ": " + text)
	}
	if d.Update != "" {
		lw.heading("Environment Update")
		lw.text(strings.TrimPrefix(d.Update, "Environment Update\n"))
	}
	lw.heading(fmt.Sprintf("tools offered (%d)", len(d.Tools)))
	lw.text(strings.Join(d.Tools, " · "))
	return detailDoc{title: fmt.Sprintf("why · turn %d", d.Iteration), lines: lw.lines}
}

// at writes an event time as the offset from the run's start.
func at(s *State, t time.Time) string {
	if s.Started.IsZero() || t.IsZero() {
		return ""
	}
	return " +" + t.Sub(s.Started).Round(time.Millisecond).String()
}

// argValue writes an argument's value: strings as they are, the rest as
// JSON.
func argValue(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// formatBytes writes a size in B, KB or MB.
func formatBytes(n int) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.0f KB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/(1024*1024))
}
