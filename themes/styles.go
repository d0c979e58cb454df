package themes

import (
	"charm.land/lipgloss/v2"
)

// Step statuses as the report and events spell them.
const (
	StatusOK        = "ok"
	StatusRefused   = "refused"
	StatusMalformed = "malformed"
	StatusError     = "error"
)

// Styles are the console's lipgloss styles, all derived from one Palette (or
// from none, for NO_COLOR).
type Styles struct {
	Base     lipgloss.Style // body text on the canvas
	Title    lipgloss.Style // the console title and pane titles
	Muted    lipgloss.Style
	Subtle   lipgloss.Style
	Selected lipgloss.Style // the selected row of a list

	PaneFocused lipgloss.Style // border of the pane with focus
	PaneBlurred lipgloss.Style // border of the other panes

	StepOK        lipgloss.Style
	StepRefused   lipgloss.Style
	StepMalformed lipgloss.Style
	StepError     lipgloss.Style

	Grounding lipgloss.Style // grounded clicks and their outcomes
	Question  lipgloss.Style // waiting ask_human questions

	BudgetFill  lipgloss.Style // used part of a budget bar
	BudgetWarn  lipgloss.Style // used part when three quarters are spent
	BudgetEmpty lipgloss.Style // unused part of a budget bar

	HelpKey  lipgloss.Style
	HelpDesc lipgloss.Style
	HelpSep  lipgloss.Style

	// Input is text the operator types (answers, notes, filters); it is
	// drawn in the body colour on the terminal's own background, never on
	// a background of its own that the terminal's foreground may match.
	Input       lipgloss.Style
	InputPrompt lipgloss.Style // the "> " before typed text
	Placeholder lipgloss.Style // the hint shown while nothing is typed

	VerdictPass lipgloss.Style
	VerdictFail lipgloss.Style
}

// Status returns the style for a step status (ok, refused, malformed,
// error); unknown statuses get the muted style.
func (s Styles) Status(status string) lipgloss.Style {
	switch status {
	case StatusOK:
		return s.StepOK
	case StatusRefused:
		return s.StepRefused
	case StatusMalformed:
		return s.StepMalformed
	case StatusError:
		return s.StepError
	}
	return s.Muted
}

// Budget returns the style for the used part of a budget bar that is
// fraction (0–1) spent.
func (s Styles) Budget(fraction float64) lipgloss.Style {
	if fraction >= 0.75 {
		return s.BudgetWarn
	}
	return s.BudgetFill
}

// NewStyles derives the console's styles from p.
func NewStyles(p Palette) Styles {
	s := lipgloss.NewStyle
	return Styles{
		Base:     s().Foreground(p.Foreground),
		Title:    s().Foreground(p.Accent).Bold(true),
		Muted:    s().Foreground(p.Muted),
		Subtle:   s().Foreground(p.Subtle),
		Selected: s().Foreground(p.Foreground).Background(p.Selection).Bold(true),

		PaneFocused: s().Border(lipgloss.RoundedBorder()).BorderForeground(p.Accent),
		PaneBlurred: s().Border(lipgloss.RoundedBorder()).BorderForeground(p.Border),

		StepOK:        s().Foreground(p.OK),
		StepRefused:   s().Foreground(p.Refusal).Bold(true),
		StepMalformed: s().Foreground(p.Warn),
		StepError:     s().Foreground(p.Error).Bold(true),

		Grounding: s().Foreground(p.Grounding),
		Question:  s().Foreground(p.Question).Bold(true),

		BudgetFill:  s().Foreground(p.Primary),
		BudgetWarn:  s().Foreground(p.Warn),
		BudgetEmpty: s().Foreground(p.Subtle),

		HelpKey:  s().Foreground(p.Primary).Bold(true),
		HelpDesc: s().Foreground(p.Muted),
		HelpSep:  s().Foreground(p.Subtle),

		Input:       s().Foreground(p.Foreground),
		InputPrompt: s().Foreground(p.Accent).Bold(true),
		Placeholder: s().Foreground(p.Muted),

		VerdictPass: s().Foreground(p.OK).Bold(true),
		VerdictFail: s().Foreground(p.Error).Bold(true),
	}
}

// NoColorStyles is the style set for NO_COLOR: emphasis by bold,
// underline, faint and reverse only, so every distinction the colours make
// is still visible.
func NoColorStyles() Styles {
	s := lipgloss.NewStyle
	return Styles{
		Base:     s(),
		Title:    s().Bold(true),
		Muted:    s().Faint(true),
		Subtle:   s().Faint(true),
		Selected: s().Reverse(true),

		PaneFocused: s().Border(lipgloss.ThickBorder()),
		PaneBlurred: s().Border(lipgloss.NormalBorder()),

		StepOK:        s(),
		StepRefused:   s().Bold(true).Underline(true),
		StepMalformed: s().Underline(true),
		StepError:     s().Bold(true).Reverse(true),

		Grounding: s().Italic(true),
		Question:  s().Bold(true).Underline(true),

		BudgetFill:  s(),
		BudgetWarn:  s().Bold(true),
		BudgetEmpty: s().Faint(true),

		HelpKey:  s().Bold(true),
		HelpDesc: s(),
		HelpSep:  s().Faint(true),

		Input:       s(),
		InputPrompt: s().Bold(true),
		Placeholder: s().Faint(true),

		VerdictPass: s().Bold(true),
		VerdictFail: s().Bold(true).Reverse(true),
	}
}
