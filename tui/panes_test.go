package tui

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/themes"
	"github.com/kasmrt/kasmrt/tui/graphics"
)

// pinned renders s for a fixed colour profile, so golden files do not
// depend on the terminal the tests run in.
func pinned(t *testing.T, s string, p colorprofile.Profile) string {
	t.Helper()
	var buf bytes.Buffer
	w := &colorprofile.Writer{Forward: &buf, Profile: p}
	if _, err := w.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func testTheme(t *testing.T, noColor bool) themes.Theme {
	t.Helper()
	env := map[string]string{}
	if noColor {
		env["NO_COLOR"] = "1"
	}
	th, err := themes.Load("dark", "", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	return th
}

// TestPaneGolden renders each pane of the sample run at fixed sizes, in
// the dark theme on a 256-colour terminal and in NO_COLOR form.
func TestPaneGolden(t *testing.T) {
	t.Parallel()
	evs := sampleEvents()
	st := FoldState(evs)
	// Right after the operator paused: a question waiting, paused.
	paused := slices.IndexFunc(evs, func(e events.Event) bool { return e.Kind == events.KindSteer })
	mid := FoldState(evs[:paused+1])
	panes := []struct {
		name string
		view func(themes.Styles) string
	}{
		{"timeline_all", func(s themes.Styles) string {
			tp := timelinePane{selected: -1}
			return box(s, "timeline", tp.View(s, st.Rows, 58, 12), 60, 14, true)
		}},
		{"timeline_refusals", func(s themes.Styles) string {
			tp := timelinePane{selected: 0, filter: FilterRefusals}
			return box(s, "timeline", tp.View(s, st.Rows, 58, 8), 60, 10, true)
		}},
		{"timeline_grounding", func(s themes.Styles) string {
			tp := timelinePane{selected: -1, filter: FilterGrounding}
			return box(s, "timeline", tp.View(s, st.Rows, 58, 6), 60, 8, false)
		}},
		{"budgets", func(s themes.Styles) string {
			return box(s, "budgets", budgetsView(s, st, 38), 40, 7, false)
		}},
		{"verdict", func(s themes.Styles) string {
			return box(s, "verdict", verdictView(s, st, 38), 40, 10, false)
		}},
		{"inbox_waiting", func(s themes.Styles) string {
			return box(s, "inbox", inboxView(s, mid, 38, 6), 40, 8, true)
		}},
		{"inbox_history", func(s themes.Styles) string {
			return box(s, "inbox", inboxView(s, st, 38, 6), 40, 8, false)
		}},
	}
	for _, variant := range []struct {
		name    string
		noColor bool
		profile colorprofile.Profile
	}{{"ansi256", false, colorprofile.ANSI256}, {"nocolor", true, colorprofile.Ascii}} {
		th := testTheme(t, variant.noColor)
		for _, p := range panes {
			t.Run(p.name+"_"+variant.name, func(t *testing.T) {
				out := p.view(th.Styles)
				checkRect(t, out)
				golden.RequireEqual(t, pinned(t, out, variant.profile))
			})
		}
	}
}

// checkRect fails unless every line of a pane has the same width.
func checkRect(t *testing.T, s string) {
	t.Helper()
	lines := strings.Split(s, "\n")
	w := ansi.StringWidth(lines[0])
	for i, l := range lines {
		if got := ansi.StringWidth(l); got != w {
			t.Fatalf("line %d is %d cells wide, line 0 is %d:\n%s", i, got, w, s)
		}
	}
}

// consoleSizes are the terminal sizes the whole console is checked at:
// the smallest common terminal, a laptop's and a large one.
var consoleSizes = [][2]int{{80, 24}, {120, 40}, {200, 60}}

// TestConsoleGolden renders the whole replay console at each size with
// the text-label graphics mode.
func TestConsoleGolden(t *testing.T) {
	t.Parallel()
	for _, size := range consoleSizes {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeReport(t, dir, sampleEvents(), true)
			r, err := LoadReport(dir)
			if err != nil {
				t.Fatal(err)
			}
			m := NewReplay(r, Options{Theme: testTheme(t, true), Graphics: graphics.None, Env: func(string) string { return "" }})
			requireConsole(t, m, size)
		})
	}
}

// TestLiveConsoleGolden renders the live console at each size while the
// recorded run is paused with a question waiting.
func TestLiveConsoleGolden(t *testing.T) {
	t.Parallel()
	evs := sampleEvents()
	paused := slices.IndexFunc(evs, func(e events.Event) bool { return e.Kind == events.KindSteer })
	for _, size := range consoleSizes {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			t.Parallel()
			m := liveAt(t, evs[:paused+1])
			requireConsole(t, m, size)
		})
	}
}

// liveAt is a live console, not running, that has seen evs.
func liveAt(t *testing.T, evs []events.Event) *Model {
	t.Helper()
	dir := t.TempDir()
	writeReport(t, dir, nil, false)
	at := evs[len(evs)-1].T
	m, _ := NewLive(Options{Dir: dir, Theme: testTheme(t, true), Graphics: graphics.None,
		Env: func(string) string { return "" }, Now: func() time.Time { return at }})
	m.applyEvents(evs)
	return m
}

// requireConsole renders m at size and compares it with the golden file,
// after checking that it fills the terminal exactly.
func requireConsole(t *testing.T, m *Model, size [2]int) {
	t.Helper()
	m.width, m.height = size[0], size[1]
	out := m.render()
	checkRect(t, out)
	if got := len(strings.Split(out, "\n")); got != size[1] {
		t.Fatalf("console has %d lines, want %d", got, size[1])
	}
	if w := ansi.StringWidth(strings.Split(out, "\n")[0]); w != size[0] {
		t.Fatalf("console is %d cells wide, want %d", w, size[0])
	}
	golden.RequireEqual(t, pinned(t, out, colorprofile.Ascii))
}
