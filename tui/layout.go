package tui

import (
	"image"
	"slices"
	"strings"

	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/ultraviolet/layout"

	"github.com/kasmrt/kasmrt/tui/graphics"
)

// The wide layout needs this many cells; below it the console stacks its
// panes compactly (down to minWidth×minHeight).
const (
	wideMinWidth  = 100
	wideMinHeight = 28
	minWidth      = 40
	minHeight     = 12
)

// layoutInput is everything the layout depends on. The model computes a
// layout only when one of these changes: a resize, a pane opening or
// closing, the budgets pane growing.
type layoutInput struct {
	Width, Height int
	// BudgetLines is how many lines the budgets pane's body wants.
	BudgetLines int
	// Detail is set while a step's detail or a turn's reasons are open.
	Detail bool
	// Inbox asks the compact layout for the inbox (a question waits or it
	// has the focus); the wide layout always has one unless Detail hides
	// it and no question waits.
	Inbox bool
}

// consoleLayout is where each part of the console goes for one
// layoutInput, in 0-based terminal cells. A part with an empty rectangle
// is not shown.
type consoleLayout struct {
	Header, Body, Status, Help uv.Rectangle

	Screen, Timeline, Detail uv.Rectangle
	Budgets, Inbox, Verdict  uv.Rectangle
	// Summary is the compact layout's one pane for budgets and verdict.
	Summary uv.Rectangle
	// Compact is the stacked layout of small terminals.
	Compact bool
}

// computeLayout splits the terminal into the console's panes.
//
// Wide (from 100x28): the screen over the timeline on the left three
// fifths; budgets, inbox and verdict on the right, where the detail view
// takes the inbox's and verdict's room while it is open.
//
// Compact: the screen and the timeline side by side over a summary strip
// of budgets and verdict; the inbox replaces the strip when it is needed
// and the detail view replaces the timeline.
func computeLayout(in layoutInput) consoleLayout {
	var l consoleLayout
	area := uv.Rect(0, 0, max(0, in.Width), max(0, in.Height))
	layout.Vertical(layout.Len(1), layout.Fill(1), layout.Len(1), layout.Len(1)).
		Split(area).Assign(&l.Header, &l.Body, &l.Status, &l.Help)
	l.Compact = in.Width < wideMinWidth || in.Height < wideMinHeight
	if l.Compact {
		l.compact(in)
	} else {
		l.wide(in)
	}
	return l
}

func (l *consoleLayout) wide(in layoutInput) {
	bodyH := l.Body.Dy()
	var left, right uv.Rectangle
	layout.Horizontal(layout.Percent(60), layout.Fill(1)).Split(l.Body).Assign(&left, &right)
	layout.Vertical(layout.Percent(55), layout.Fill(1)).Split(left).Assign(&l.Screen, &l.Timeline)
	budgetsH := min(max(4, in.BudgetLines+2), bodyH/3)
	switch {
	case in.Detail && in.Inbox:
		layout.Vertical(layout.Len(budgetsH), layout.Fill(1), layout.Len(min(8, bodyH/3))).
			Split(right).Assign(&l.Budgets, &l.Detail, &l.Inbox)
	case in.Detail:
		layout.Vertical(layout.Len(budgetsH), layout.Fill(1)).Split(right).Assign(&l.Budgets, &l.Detail)
	default:
		layout.Vertical(layout.Len(budgetsH), layout.Fill(1), layout.Len(max(4, bodyH/4))).
			Split(right).Assign(&l.Budgets, &l.Inbox, &l.Verdict)
	}
}

func (l *consoleLayout) compact(in layoutInput) {
	bodyH := l.Body.Dy()
	bottomH := 5
	if in.Inbox {
		bottomH = min(8, bodyH/2)
	}
	var top, bottom, right uv.Rectangle
	layout.Vertical(layout.Fill(1), layout.Len(bottomH)).Split(l.Body).Assign(&top, &bottom)
	layout.Horizontal(layout.Percent(50), layout.Fill(1)).Split(top).Assign(&l.Screen, &right)
	if in.Detail {
		l.Detail = right
	} else {
		l.Timeline = right
	}
	if in.Inbox {
		l.Inbox = bottom
	} else {
		l.Summary = bottom
	}
}

// inner is a pane's rectangle inside its border.
func inner(r uv.Rectangle) uv.Rectangle {
	if r.Dx() < 2 || r.Dy() < 2 {
		return uv.Rectangle{}
	}
	return image.Rect(r.Min.X+1, r.Min.Y+1, r.Max.X-1, r.Max.Y-1)
}

// paneFor is the graphics pane of a screen rectangle: the cells inside
// its border, 1-based as cursor positioning counts them.
func paneFor(r uv.Rectangle, cellW, cellH int) graphics.Pane {
	in := inner(r)
	if in.Empty() {
		return graphics.Pane{CellW: cellW, CellH: cellH}
	}
	return graphics.Pane{Row: in.Min.Y + 1, Col: in.Min.X + 1, Cols: in.Dx(), Rows: in.Dy(), CellW: cellW, CellH: cellH}
}

// part is one pane's rendered text and the rectangle it is drawn into.
type part struct {
	rect uv.Rectangle
	text string
}

// compose draws every part into its rectangle on a w×h area and returns
// the area one line per row. A part's lines are exactly its rectangle's
// width (box and fit make them so), so each row is its parts' lines side
// by side, left to right, and no cell is measured or parsed again; cells
// no part covers are blank.
func compose(w, h int, parts ...part) string {
	sorted := slices.Clone(parts)
	sorted = slices.DeleteFunc(sorted, func(p part) bool { return p.rect.Empty() })
	slices.SortStableFunc(sorted, func(a, b part) int { return a.rect.Min.X - b.rect.Min.X })
	lines := make([][]string, len(sorted))
	for i, p := range sorted {
		lines[i] = strings.SplitN(p.text, "\n", p.rect.Dy())
		for len(lines[i]) < p.rect.Dy() {
			lines[i] = append(lines[i], strings.Repeat(" ", p.rect.Dx()))
		}
	}
	var out strings.Builder
	for y := range h {
		if y > 0 {
			out.WriteByte('\n')
		}
		x := 0
		for i, p := range sorted {
			if y < p.rect.Min.Y || y >= p.rect.Max.Y || p.rect.Min.X < x {
				continue
			}
			out.WriteString(strings.Repeat(" ", p.rect.Min.X-x))
			out.WriteString(lines[i][y-p.rect.Min.Y])
			x = p.rect.Max.X
		}
		out.WriteString(strings.Repeat(" ", max(0, w-x)))
	}
	return out.String()
}
