package tui

import (
	"image/color"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/textarea"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/kasmrt/kasmrt/themes"
)

// The bubbles' own default styles draw the line being typed on ANSI colour
// 0 and leave the text in the terminal's foreground: on xterm's and tmux's
// default black-on-white, typed answers vanish. The console's text fields
// are styled from the theme instead, on no background of their own.

// inputCursor is the colour of the virtual cursor: the prompt's, so it is
// as legible as the prompt on the terminal's background.
func inputCursor(s themes.Styles) color.Color {
	if c := s.InputPrompt.GetForeground(); c != nil {
		return c
	}
	return lipgloss.NoColor{}
}

// textareaStyles are the inbox's answer field's styles for s.
func textareaStyles(s themes.Styles) textarea.Styles {
	state := textarea.StyleState{
		Base:             lipgloss.NewStyle(),
		Text:             s.Input,
		CursorLine:       s.Input,
		CursorLineNumber: s.Placeholder,
		LineNumber:       s.Placeholder,
		EndOfBuffer:      s.Placeholder,
		Placeholder:      s.Placeholder,
		Prompt:           s.InputPrompt,
		Selection:        s.Selected,
	}
	blurred := state
	blurred.Text, blurred.CursorLine = s.Muted, s.Muted
	return textarea.Styles{
		Focused: state,
		Blurred: blurred,
		Cursor:  textarea.CursorStyle{Color: inputCursor(s), Shape: tea.CursorBlock, Blink: true},
	}
}

// textinputStyles are the styles of one-line fields (notes, rejections,
// filters) for s.
func textinputStyles(s themes.Styles) textinput.Styles {
	state := textinput.StyleState{
		Text:        s.Input,
		Placeholder: s.Placeholder,
		Suggestion:  s.Placeholder,
		Prompt:      s.InputPrompt,
	}
	blurred := state
	blurred.Text = s.Muted
	return textinput.Styles{
		Focused: state,
		Blurred: blurred,
		Cursor:  textinput.CursorStyle{Color: inputCursor(s), Shape: tea.CursorBlock, Blink: true},
	}
}

// helpStyles styles the key help from s.
func helpStyles(h *help.Model, s themes.Styles) {
	h.Styles.ShortKey = s.HelpKey
	h.Styles.ShortDesc = s.HelpDesc
	h.Styles.ShortSeparator = s.HelpSep
	h.Styles.FullKey = s.HelpKey
	h.Styles.FullDesc = s.HelpDesc
	h.Styles.FullSeparator = s.HelpSep
	h.Styles.Ellipsis = s.HelpSep
}

// applyTheme makes th the theme the console draws with, down to its text
// fields and help.
func (m *Model) applyTheme(th themes.Theme) {
	m.opts.Theme = th
	m.styles = th.Styles
	helpStyles(&m.help, m.styles)
	m.answer.SetStyles(textareaStyles(m.styles))
	m.input.SetStyles(textinputStyles(m.styles))
}

// followBackground draws the console for the terminal's background when
// its theme follows it. New colours repaint every cell whose colour
// changed, the image pane's border and the blank cells under the image
// among them, and a sixel is erased by a repaint of its cells: the image
// is written again after the repaint. The answer can come after the first
// image was written (the terminal is slow to answer on a loaded machine),
// which left the pane blank.
func (m *Model) followBackground(dark bool) tea.Cmd {
	th := m.opts.Theme.ForBackground(dark)
	if th.Name == m.opts.Theme.Name {
		return nil
	}
	m.applyTheme(th)
	return m.resendRaw()
}

// requestBackground asks the terminal for its background colour when the
// theme follows it; the answer comes as a tea.BackgroundColorMsg.
func requestBackground(th themes.Theme) tea.Cmd {
	if !th.Auto {
		return nil
	}
	return tea.RequestBackgroundColor
}
