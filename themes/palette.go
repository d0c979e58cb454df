package themes

import (
	"image/color"
	"slices"

	"charm.land/lipgloss/v2"
)

// Palette names the colours of every role the console uses; styles derive
// from it and nothing in the console picks a colour on its own.
type Palette struct {
	Background color.Color // the console's canvas
	Foreground color.Color // body text
	Muted      color.Color // secondary text: timestamps, hints
	Subtle     color.Color // tertiary: separators, empty budget bars
	Border     color.Color // unfocused pane borders
	Accent     color.Color // focused pane border, title
	Primary    color.Color // key information: current step, key names
	Secondary  color.Color // supporting highlights
	OK         color.Color // a step that succeeded, pass verdicts
	Warn       color.Color // concerns, budgets running low, malformed calls
	Error      color.Color // tool errors, failed verdicts
	Refusal    color.Color // guard refusals
	Grounding  color.Color // grounded clicks and their evidence
	Question   color.Color // ask_human questions waiting in the inbox
	Selection  color.Color // background of the selected row
}

// roles maps the role names used in theme files to the palette's fields.
// The order is the order error messages list them in.
var roleNames = []string{
	"background", "foreground", "muted", "subtle", "border", "accent",
	"primary", "secondary", "ok", "warn", "error", "refusal", "grounding",
	"question", "selection",
}

// role returns the field of p that a theme file's role name sets, or nil.
func (p *Palette) role(name string) *color.Color {
	switch name {
	case "background":
		return &p.Background
	case "foreground":
		return &p.Foreground
	case "muted":
		return &p.Muted
	case "subtle":
		return &p.Subtle
	case "border":
		return &p.Border
	case "accent":
		return &p.Accent
	case "primary":
		return &p.Primary
	case "secondary":
		return &p.Secondary
	case "ok":
		return &p.OK
	case "warn":
		return &p.Warn
	case "error":
		return &p.Error
	case "refusal":
		return &p.Refusal
	case "grounding":
		return &p.Grounding
	case "question":
		return &p.Question
	case "selection":
		return &p.Selection
	}
	return nil
}

// Roles returns the role names a theme file may set, in a fixed order.
func Roles() []string { return slices.Clone(roleNames) }

// Built-in palette names. Auto is the default: the console asks the
// terminal for its background and draws with Dark or Light to match; until
// (or unless) the terminal answers, it draws with a palette that is
// legible on black and on white alike.
const (
	Auto         = "auto"
	Dark         = "dark"
	Light        = "light"
	HighContrast = "high-contrast"
)

// Builtin returns the built-in palette called name.
func Builtin(name string) (Palette, bool) {
	c := lipgloss.Color
	switch name {
	case Dark:
		return Palette{
			Background: c("#1e1e2e"), Foreground: c("#cdd6f4"), Muted: c("#a6adc8"),
			Subtle: c("#585b70"), Border: c("#45475a"), Accent: c("#89b4fa"),
			Primary: c("#cba6f7"), Secondary: c("#94e2d5"), OK: c("#a6e3a1"),
			Warn: c("#f9e2af"), Error: c("#f38ba8"), Refusal: c("#fab387"),
			Grounding: c("#74c7ec"), Question: c("#f5c2e7"), Selection: c("#313244"),
		}, true
	case Light:
		// Text roles reach a contrast of 3.9 (subtle) to 4.5 and more on
		// white: the pastel yellows, pinks and oranges of a dark theme
		// vanish on a light terminal (TestBuiltinPalettesLegible).
		return Palette{
			Background: c("#eff1f5"), Foreground: c("#4c4f69"), Muted: c("#6c6f85"),
			Subtle: c("#7c7f93"), Border: c("#bcc0cc"), Accent: c("#1e66f5"),
			Primary: c("#8839ef"), Secondary: c("#137a80"), OK: c("#2f7d1f"),
			Warn: c("#9a5a00"), Error: c("#d20f39"), Refusal: c("#c2410c"),
			Grounding: c("#16768a"), Question: c("#b0358f"), Selection: c("#ccd0da"),
		}, true
	case Auto:
		// Body text and the selected row's text keep the terminal's own
		// foreground, which its background was chosen for; every other
		// role is a mid-tone with a contrast of at least 3.9 against both
		// #000000 and #ffffff (TestAutoPaletteLegibleOnBoth).
		return Palette{
			Background: lipgloss.NoColor{}, Foreground: lipgloss.NoColor{}, Muted: c("#767676"),
			Subtle: c("#808080"), Border: c("#808080"), Accent: c("#3878e0"),
			Primary: c("#9a5ae0"), Secondary: c("#1a8a84"), OK: c("#2e8a2e"),
			Warn: c("#a87000"), Error: c("#e0305a"), Refusal: c("#d05a10"),
			Grounding: c("#1a80a8"), Question: c("#c040a0"), Selection: c("#767676"),
		}, true
	case HighContrast:
		return Palette{
			Background: c("#000000"), Foreground: c("#ffffff"), Muted: c("#d0d0d0"),
			Subtle: c("#a0a0a0"), Border: c("#ffffff"), Accent: c("#ffff00"),
			Primary: c("#00ffff"), Secondary: c("#ff00ff"), OK: c("#00ff00"),
			Warn: c("#ffff00"), Error: c("#ff3030"), Refusal: c("#ff8c00"),
			Grounding: c("#00bfff"), Question: c("#ff80ff"), Selection: c("#0000c0"),
		}, true
	}
	return Palette{}, false
}
