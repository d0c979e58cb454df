package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/kasmrt/kasmrt/themes"
)

// keyGroup is one titled group of the full help. The help is generated
// from the view's key maps through their groups, so a binding is listed
// once, under the title of what it acts on.
type keyGroup struct {
	title string
	keys  []key.Binding
}

// bindings flattens groups for help.KeyMap's FullHelp.
func bindings(groups []keyGroup) [][]key.Binding {
	out := make([][]key.Binding, 0, len(groups))
	for _, g := range groups {
		out = append(out, g.keys)
	}
	return out
}

// partner is a binding described by another's help: E by e's "e/E
// next/prev failed step", - by +'s "+/- zoom in/out". It matches keys but
// has no help line of its own.
func partner(keys ...string) key.Binding {
	return key.NewBinding(key.WithKeys(keys...))
}

// helpGroups is the full help of the view m is in: its own groups, the
// screen pane's, the inbox's (live) and the mouse's.
func (m *Model) helpGroups() []keyGroup {
	var groups []keyGroup
	if m.live {
		groups = m.keys.groups()
		groups = append(groups, keyGroup{"inbox", append([]key.Binding{m.keys.Focus}, m.inKeys.ShortHelp()...)})
	} else {
		groups = m.rpKeys.groups()
	}
	return append(groups, keyGroup{"screen", m.scKeys.ShortHelp()}, keyGroup{"mouse", mouseHelp()})
}

// groupView is one group as a column: its title, then a key and its
// description a line.
func groupView(st themes.Styles, g keyGroup) string {
	keyW := 0
	for _, b := range g.keys {
		keyW = max(keyW, ansi.StringWidth(b.Help().Key))
	}
	lines := []string{st.Title.Render(g.title)}
	for _, b := range g.keys {
		h := b.Help()
		if h.Key == "" && h.Desc == "" {
			continue
		}
		pad := strings.Repeat(" ", keyW-ansi.StringWidth(h.Key))
		lines = append(lines, st.HelpKey.Render(h.Key)+pad+" "+st.HelpDesc.Render(h.Desc))
	}
	return strings.Join(lines, "\n")
}

// groupedHelp lays the groups out in columns, as many to a row as fit in
// w cells, rows apart by a blank line.
func groupedHelp(st themes.Styles, groups []keyGroup, w int) string {
	const gap = "   "
	var rows, row []string
	rowW := 0
	flush := func() {
		if len(row) > 0 {
			rows = append(rows, lipgloss.JoinHorizontal(lipgloss.Top, row...))
		}
		row, rowW = nil, 0
	}
	for _, g := range groups {
		col := groupView(st, g)
		cw := lipgloss.Width(col)
		if len(row) > 0 && rowW+len(gap)+cw > w {
			flush()
		}
		if len(row) > 0 {
			row = append(row, gap)
			rowW += len(gap)
		}
		row = append(row, col)
		rowW += cw
	}
	flush()
	return strings.Join(rows, "\n\n")
}

// shortHelpWithHint is the help line for bindings, cut to w cells, always
// ending with the hint that ? lists every key.
func (m *Model) shortHelpWithHint(bindings []key.Binding, w int) string {
	st := m.styles
	hint := st.HelpSep.Render(" • ") + st.HelpKey.Render("?") + " " + st.HelpDesc.Render("all keys")
	var shown []key.Binding
	for _, b := range bindings {
		if b.Help().Key != "?" {
			shown = append(shown, b)
		}
	}
	m.help.SetWidth(max(1, w-lipgloss.Width(hint)))
	defer m.help.SetWidth(m.width)
	return m.help.ShortHelpView(shown) + hint
}
