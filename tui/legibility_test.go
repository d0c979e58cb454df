package tui

import (
	"fmt"
	"image/color"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/themes"
	"github.com/kasmrt/kasmrt/tui/graphics"
)

// terminal is what a terminal draws cells without a colour of their own
// with.
type terminal struct {
	name   string
	fg, bg color.RGBA
}

var (
	// lightTerminal is xterm's and most desktop terminals' default.
	lightTerminal = terminal{"black on white", color.RGBA{0, 0, 0, 255}, color.RGBA{255, 255, 255, 255}}
	darkTerminal  = terminal{"white on black", color.RGBA{229, 229, 229, 255}, color.RGBA{0, 0, 0, 255}}
)

// cellColours is what term shows a cell's text and background in.
func cellColours(term terminal, st uv.Style) (fg, bg color.Color) {
	fg, bg = term.fg, term.bg
	if st.Fg != nil {
		fg = st.Fg
	}
	if st.Bg != nil {
		bg = st.Bg
	}
	if st.Attrs&uv.AttrReverse != 0 {
		fg, bg = bg, fg
	}
	return fg, bg
}

// consoleForTerminal is a live console at size, in the theme the run
// command resolves without --theme, that has seen evs; when answered, the
// terminal has told it its background.
func consoleForTerminal(t *testing.T, evs []events.Event, term terminal, answered bool, size [2]int) *Model {
	t.Helper()
	env := func(string) string { return "" }
	th, err := themes.Load("", "", env)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeReport(t, dir, nil, false)
	at := evs[len(evs)-1].T
	m, _ := NewLive(Options{Dir: dir, Theme: th, Graphics: graphics.None, Env: env, Now: func() time.Time { return at }})
	m.applyEvents(evs)
	if answered {
		m.Update(tea.BackgroundColorMsg{Color: term.bg})
	}
	m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
	return m
}

func typeText(m *Model, s string) {
	for _, r := range s {
		m.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

// TestTypedAnswerLegible types an answer into the inbox and reads the row
// it is drawn on as a 256-colour terminal (tmux) shows it, on a light and
// on a dark terminal, before and after the terminal has said what its
// background is: every typed letter stands out from what is behind it.
func TestTypedAnswerLegible(t *testing.T) {
	t.Parallel()
	evs := sampleEvents()
	paused := slices.IndexFunc(evs, func(e events.Event) bool { return e.Kind == events.KindSteer })
	const typed = "hello kasmrt"
	for _, term := range []terminal{lightTerminal, darkTerminal} {
		for _, answered := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/answered=%v", term.name, answered), func(t *testing.T) {
				t.Parallel()
				m := consoleForTerminal(t, evs[:paused+1], term, answered, [2]int{120, 40})
				typeText(m, "i")
				if m.focus != focusInbox {
					t.Fatal("i did not focus the inbox")
				}
				typeText(m, typed)
				out := pinned(t, m.render(), colorprofile.ANSI256)
				checked := 0
				for _, line := range uv.NewStyledString(out).Lines(ansi.GraphemeWidth) {
					text := ansi.Strip(line.String())
					col := strings.Index(text, typed)
					if col < 0 {
						continue
					}
					// The column in cells: the text before it may hold
					// wide box-drawing runes counted as one cell each.
					x := ansi.StringWidth(text[:col])
					for i := range len(typed) {
						c := line.At(x + i)
						if c == nil || c.Content == " " {
							continue
						}
						fg, bg := cellColours(term, c.Style)
						if r := themes.Contrast(fg, bg); r < 4.5 {
							t.Errorf("typed %q drawn in %v on %v: contrast %.2f, want ≥ 4.5", c.Content, fg, bg, r)
						}
						checked++
					}
				}
				if checked == 0 {
					t.Fatalf("the typed answer is not on the screen:\n%s", ansi.Strip(out))
				}
			})
		}
	}
}

// TestConsoleLegibleOnTerminal reads every letter and digit of the live
// console — title, timeline, budgets, inbox, status and help — as a
// 256-colour terminal shows it, on a light and on a dark terminal, before
// and after the terminal has said what its background is. Text must reach
// a contrast of 3 (secondary text) against what is behind it.
func TestConsoleLegibleOnTerminal(t *testing.T) {
	t.Parallel()
	evs := sampleEvents()
	paused := slices.IndexFunc(evs, func(e events.Event) bool { return e.Kind == events.KindSteer })
	for _, term := range []terminal{lightTerminal, darkTerminal} {
		for _, answered := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/answered=%v", term.name, answered), func(t *testing.T) {
				t.Parallel()
				m := consoleForTerminal(t, evs[:paused+1], term, answered, [2]int{120, 40})
				if bad := illegibleCells(t, term, m.render()); bad > 0 {
					t.Errorf("%d cells of text are hard to read", bad)
				}
			})
		}
	}
}

// illegibleCells reads every letter and digit of out as a 256-colour
// terminal shows it on term and reports (the first ten) and counts those
// below a contrast of 3 against what is behind them.
func illegibleCells(t *testing.T, term terminal, out string) int {
	t.Helper()
	bad := 0
	for y, line := range uv.NewStyledString(pinned(t, out, colorprofile.ANSI256)).Lines(ansi.GraphemeWidth) {
		for x, c := range line {
			r, _ := utf8.DecodeRuneInString(c.Content)
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				continue
			}
			fg, bg := cellColours(term, c.Style)
			if ratio := themes.Contrast(fg, bg); ratio < 3 {
				if bad < 10 {
					t.Errorf("%q at %d,%d in line %q drawn in %v on %v: contrast %.2f, want ≥ 3",
						c.Content, x, y, strings.TrimSpace(ansi.Strip(line.String())), fg, bg, ratio)
				}
				bad++
			}
		}
	}
	return bad
}

// TestFleetLegibleOnTerminal is TestConsoleLegibleOnTerminal for the
// fleet console of a suite, with its inbox open.
func TestFleetLegibleOnTerminal(t *testing.T) {
	t.Parallel()
	for _, term := range []terminal{lightTerminal, darkTerminal} {
		for _, answered := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/answered=%v", term.name, answered), func(t *testing.T) {
				t.Parallel()
				th, err := themes.Load("", "", func(string) string { return "" })
				if err != nil {
					t.Fatal(err)
				}
				f := newSampleFleetThemed(t, th, 120, 30)
				if answered {
					f.Update(tea.BackgroundColorMsg{Color: term.bg})
					want := themes.Light
					if term.bg == darkTerminal.bg {
						want = themes.Dark
					}
					pal, _ := themes.Builtin(want)
					if got := f.styles.Title.GetForeground(); got != pal.Accent {
						t.Errorf("after the terminal's answer the fleet draws titles in %v, want %s's %v", got, want, pal.Accent)
					}
					for _, fr := range f.runs {
						if fr.model.opts.Theme.Name != want {
							t.Errorf("run %s is drawn with %s, want %s", fr.desc.ID, fr.model.opts.Theme.Name, want)
						}
					}
				}
				f.Update(keyPress("i"))
				if bad := illegibleCells(t, term, f.View().Content); bad > 0 {
					t.Errorf("%d cells of text are hard to read", bad)
				}
			})
		}
	}
}

// TestConsoleLightGolden is the live console on a light terminal that has
// told the console its background, in 256 colours.
func TestConsoleLightGolden(t *testing.T) {
	t.Parallel()
	evs := sampleEvents()
	paused := slices.IndexFunc(evs, func(e events.Event) bool { return e.Kind == events.KindSteer })
	m := consoleForTerminal(t, evs[:paused+1], lightTerminal, true, [2]int{120, 40})
	out := m.render()
	checkRect(t, out)
	golden.RequireEqual(t, pinned(t, out, colorprofile.ANSI256))
}
