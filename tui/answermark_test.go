package tui

import (
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/inbox"
)

// TestAnswerMarkGolden renders the inbox with an answer typed under each
// mark, in colour and in NO_COLOR form: the rule above the input row
// names the mark and its meaning, and a secret answer is drawn masked.
func TestAnswerMarkGolden(t *testing.T) {
	t.Parallel()
	evs := sampleEvents()
	paused := slices.IndexFunc(evs, func(e events.Event) bool { return e.Kind == events.KindSteer })
	const typed = "4721"
	for i, mark := range inbox.Marks() {
		for _, variant := range []struct {
			name    string
			noColor bool
			profile colorprofile.Profile
		}{{"ansi256", false, colorprofile.ANSI256}, {"nocolor", true, colorprofile.Ascii}} {
			t.Run(string(mark)+"_"+variant.name, func(t *testing.T) {
				t.Parallel()
				m := liveAt(t, evs[:paused+1])
				m.applyTheme(testTheme(t, variant.noColor))
				typeText(m, "i")
				for range i {
					m.Update(tea.KeyPressMsg{Code: 's', Mod: tea.ModCtrl})
				}
				if m.answerMark != mark {
					t.Fatalf("after %d presses of %s the mark is %q, want %q", i, markKey, m.answerMark, mark)
				}
				typeText(m, typed)
				s := m.styles
				out := box(s, "inbox", m.inboxBody(46, 8), 48, 10, true)
				checkRect(t, out)
				if shown := strings.Contains(ansi.Strip(out), typed); shown == (mark == inbox.MarkSecret) {
					t.Errorf("the typed answer on the screen: %v under mark %s:\n%s", shown, mark, ansi.Strip(out))
				}
				golden.RequireEqual(t, pinned(t, out, variant.profile))
			})
		}
	}
}
