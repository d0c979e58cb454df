package tui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/kasmrt/kasmrt/tui/graphics"
)

func helpConsoles(t *testing.T) map[string]*Model {
	t.Helper()
	return map[string]*Model{
		"live":   liveAt(t, sampleEvents()),
		"replay": NewReplay(&Report{Events: sampleEvents()}, Options{Theme: testTheme(t, true), Graphics: graphics.None, Env: func(string) string { return "" }}),
	}
}

// TestHelpGrouped opens the full help of each view and checks that it is
// grouped under titles, lists every action once (a pair such as e/E on
// one line) and names every key that acts on the screen pane.
func TestHelpGrouped(t *testing.T) {
	t.Parallel()
	for name, m := range helpConsoles(t) {
		t.Run(name, func(t *testing.T) {
			m.width, m.height, m.showHelp = 120, 40, true
			v := ansi.Strip(m.render())
			for _, title := range []string{"detail", "screen", "console", "mouse"} {
				if !strings.Contains(v, title+" ") && !strings.Contains(v, title+"\n") {
					t.Errorf("no %q group:\n%s", title, v)
				}
			}
			// The help box, without the help line below it.
			var box []string
			for _, l := range strings.Split(v, "\n") {
				if strings.Contains(l, "┃") {
					box = append(box, l)
				}
			}
			body := strings.Join(box, "\n")
			for _, unique := range []string{"next/prev failed step", "zoom in/out", "scroll detail", "alt+hjkl"} {
				if n := strings.Count(body, unique); n != 1 {
					t.Errorf("%q is listed %d times, want once:\n%s", unique, n, body)
				}
			}
			for _, gone := range []string{"previous failed step", "zoom out", "scroll detail up"} {
				if n := strings.Count(body, gone) - strings.Count(body, "next/"+gone); n > 0 {
					t.Errorf("the pair's second half %q has a line of its own:\n%s", gone, body)
				}
			}
			// Every group's bindings come from the key maps: each
			// described binding of the view is on screen.
			for _, g := range m.helpGroups() {
				for _, b := range g.keys {
					if d := b.Help().Desc; d != "" && !strings.Contains(v, d) {
						t.Errorf("group %s: %q is missing:\n%s", g.title, d, v)
					}
				}
			}
		})
	}
}

// TestHelpBarHint checks that the help line, cut at the smallest common
// terminal, still ends by saying that ? lists every key.
func TestHelpBarHint(t *testing.T) {
	t.Parallel()
	for name, m := range helpConsoles(t) {
		t.Run(fmt.Sprintf("%s_80", name), func(t *testing.T) {
			m.width, m.height = 80, 24
			bar := m.helpBar()
			if w := ansi.StringWidth(bar); w > 80 {
				t.Errorf("the help line is %d cells wide at 80 columns", w)
			}
			if !strings.HasSuffix(ansi.Strip(bar), "? all keys") {
				t.Errorf("the help line does not end with the ? hint: %q", ansi.Strip(bar))
			}
			golden.RequireEqual(t, pinned(t, bar, colorprofile.Ascii))
		})
	}
}
