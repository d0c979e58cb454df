package tui

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"
	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/ansi"

	"github.com/kasmrt/kasmrt/tui/graphics"
)

// TestLayoutTilesTheTerminal checks, at every size from the smallest the
// console accepts to a large terminal and with each pane opened or
// closed, that the panes shown lie inside the body without overlapping
// and cover it exactly, and that the small terminal gets the compact
// layout.
func TestLayoutTilesTheTerminal(t *testing.T) {
	t.Parallel()
	for _, size := range [][2]int{{minWidth, minHeight}, {80, 24}, {99, 40}, {100, 27}, {100, 28}, {120, 40}, {200, 60}, {320, 90}} {
		for _, detail := range []bool{false, true} {
			for _, inbox := range []bool{false, true} {
				in := layoutInput{Width: size[0], Height: size[1], BudgetLines: 8, Detail: detail, Inbox: inbox}
				t.Run(fmt.Sprintf("%dx%d detail=%v inbox=%v", size[0], size[1], detail, inbox), func(t *testing.T) {
					t.Parallel()
					l := computeLayout(in)
					if want := size[0] < wideMinWidth || size[1] < wideMinHeight; l.Compact != want {
						t.Errorf("compact = %v, want %v", l.Compact, want)
					}
					if l.Body != uv.Rect(0, 1, size[0], size[1]-3) || l.Header.Dy() != 1 || l.Status.Min.Y != size[1]-2 || l.Help.Min.Y != size[1]-1 {
						t.Errorf("header %v body %v status %v help %v", l.Header, l.Body, l.Status, l.Help)
					}
					panes := map[string]uv.Rectangle{"screen": l.Screen, "timeline": l.Timeline, "detail": l.Detail,
						"budgets": l.Budgets, "inbox": l.Inbox, "verdict": l.Verdict, "summary": l.Summary}
					area := 0
					for name, r := range panes {
						if r.Empty() {
							continue
						}
						if !r.In(l.Body) {
							t.Errorf("%s %v is outside the body %v", name, r, l.Body)
						}
						if r.Dx() < 4 || r.Dy() < 3 {
							t.Errorf("%s %v is too small to draw", name, r)
						}
						for other, o := range panes {
							if other < name && !o.Empty() && r.Overlaps(o) {
								t.Errorf("%s %v overlaps %s %v", name, r, other, o)
							}
						}
						area += r.Dx() * r.Dy()
					}
					if area != l.Body.Dx()*l.Body.Dy() {
						t.Errorf("the panes cover %d cells of the body's %d", area, l.Body.Dx()*l.Body.Dy())
					}
					if l.Screen.Empty() || detail != !l.Detail.Empty() || (inbox || !l.Compact && !detail) != !l.Inbox.Empty() {
						t.Errorf("screen %v detail %v inbox %v for detail=%v inbox=%v", l.Screen, l.Detail, l.Inbox, detail, inbox)
					}
				})
			}
		}
	}
}

// TestScreenPaneFollowsLayout checks that the image goes where the
// screen pane is drawn: the graphics pane's first cell is the one inside
// the drawn border's top-left corner, and it spans the border's inside, in
// every layout.
func TestScreenPaneFollowsLayout(t *testing.T) {
	t.Parallel()
	for _, size := range consoleSizes {
		for _, inbox := range []bool{false, true} {
			m := newModel(Options{Theme: testTheme(t, true), Graphics: graphics.None, Env: func(string) string { return "" }})
			m.width, m.height, m.cellW, m.cellH = size[0], size[1], 9, 18
			if inbox {
				m.focus = focusInbox
			}
			lines := strings.Split(ansi.Strip(m.render()), "\n")
			row, col := -1, -1
			for i, l := range lines {
				if k := strings.Index(l, "┌─screen"); k >= 0 {
					row, col = i, ansi.StringWidth(l[:k])
					break
				}
			}
			if row < 0 {
				t.Fatalf("%dx%d: no screen pane drawn:\n%s", size[0], size[1], strings.Join(lines, "\n"))
			}
			top := []rune(ansi.Cut(lines[row], col, size[0]))
			cols := slices.Index(top, '┐') - 1
			rows := 0
			for i := row + 1; i < len(lines) && !strings.HasPrefix(ansi.Cut(lines[i], col, size[0]), "└"); i++ {
				rows++
			}
			want := graphics.Pane{Row: row + 2, Col: col + 2, Cols: cols, Rows: rows, CellW: 9, CellH: 18}
			if got := m.screenPane(); got != want {
				t.Errorf("%dx%d inbox=%v: the image goes to %+v, the pane is drawn at %+v", size[0], size[1], inbox, got, want)
			}
		}
	}
}

// TestHelpShowsEveryKey opens the help at the smallest common terminal
// and checks that every binding's description is on screen, none cut off.
func TestHelpShowsEveryKey(t *testing.T) {
	t.Parallel()
	live := liveAt(t, sampleEvents())
	replay := NewReplay(&Report{Events: sampleEvents()}, Options{Theme: testTheme(t, true), Graphics: graphics.None, Env: func(string) string { return "" }})
	for name, c := range map[string]struct {
		m      *Model
		groups [][]key.Binding
	}{
		"live":   {live, append(live.keys.FullHelp(), live.inKeys.ShortHelp())},
		"replay": {replay, replay.rpKeys.FullHelp()},
	} {
		c.m.width, c.m.height, c.m.showHelp = 80, 24, true
		v := ansi.Strip(c.m.render())
		for _, g := range c.groups {
			for _, b := range g {
				if !strings.Contains(v, b.Help().Desc) {
					t.Errorf("%s: the help at 80x24 lacks %q:\n%s", name, b.Help().Desc, v)
				}
			}
		}
	}
}
