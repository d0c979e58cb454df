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

// Built-in palette names.
const (
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
		return Palette{
			Background: c("#eff1f5"), Foreground: c("#4c4f69"), Muted: c("#6c6f85"),
			Subtle: c("#9ca0b0"), Border: c("#bcc0cc"), Accent: c("#1e66f5"),
			Primary: c("#8839ef"), Secondary: c("#179299"), OK: c("#40a02b"),
			Warn: c("#df8e1d"), Error: c("#d20f39"), Refusal: c("#fe640b"),
			Grounding: c("#209fb5"), Question: c("#ea76cb"), Selection: c("#ccd0da"),
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
