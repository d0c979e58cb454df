package tui

import (
	"strings"
	"unicode/utf8"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/kasmrt/kasmrt/inbox"
	"github.com/kasmrt/kasmrt/themes"
)

// markKey is the key that cycles the mark of the answer being typed, in
// the run's inbox and the fleet's. A control key, so that it never ends
// up in the answer.
const markKey = "ctrl+s"

// maskRune stands for each character of an answer marked secret while it
// is typed, so the console never draws the secret itself.
const maskRune = "•"

// markStyle colours a mark by what it gives away: nothing (private),
// the answer to the model (shareable), or a secret kept from everyone.
func markStyle(st themes.Styles, m inbox.Mark) lipgloss.Style {
	switch m.Effective() {
	case inbox.MarkShareable:
		return st.Question
	case inbox.MarkSecret:
		return st.StepRefused
	}
	return st.Muted
}

// markLine is the rule above the answer's input row: the answer's mark
// and what it means, cut to w cells, and the key that changes it when
// there is room (the help bar names it too).
func markLine(st themes.Styles, m inbox.Mark, w int) string {
	m = m.Effective()
	name := "─ " + string(m) + ": "
	text := m.Meaning()
	if k := " · " + markKey; ansi.StringWidth(name+text+k) < w {
		text += k
	}
	text = ansi.Truncate(text+" ", max(0, w-ansi.StringWidth(name)), "…")
	if n := ansi.StringWidth(name + text); n < w {
		text += strings.Repeat("─", w-n)
	}
	if ansi.StringWidth(name) > w {
		return st.Muted.Render(ansi.Truncate(name, w, ""))
	}
	return markStyle(st, m).Render(name) + st.Muted.Render(text)
}

// maskedInput draws an answer marked secret as it is typed: the prompt
// and one mask character for each character typed (the last that fit in
// w cells), on as many lines as the text area it replaces has, so the
// layout does not move; the cursor is drawn while the row has the focus.
// Nothing of the text itself is drawn.
func maskedInput(st themes.Styles, prompt, text string, w, h int, focused bool) string {
	n := utf8.RuneCountInString(text)
	room := max(0, w-ansi.StringWidth(prompt)-1)
	// The cursor stands after the mask, as the text area draws it.
	cursor := " "
	if focused {
		cursor = st.Input.Reverse(true).Render(" ")
	}
	var first string
	switch {
	case n == 0:
		first = cursor + st.Placeholder.Render(ansi.Truncate("type the secret; it is drawn masked", max(0, room-1), "…"))
	default:
		first = st.Input.Render(strings.Repeat(maskRune, min(n, room))) + cursor
	}
	lines := []string{st.InputPrompt.Render(prompt) + first}
	for len(lines) < h {
		lines = append(lines, st.InputPrompt.Render(prompt))
	}
	for i, l := range lines {
		if pad := w - ansi.StringWidth(l); pad > 0 {
			lines[i] = l + strings.Repeat(" ", pad)
		}
	}
	return strings.Join(lines, "\n")
}
