package graphics

import (
	"fmt"
	"strings"
)

// Mode is how the screen pane draws an image.
type Mode int

const (
	// Auto asks Detect to choose; it is only a flag value, never a result.
	Auto Mode = iota
	// None draws a one-line text label instead of the image.
	None
	// Blocks draws half-block cells ("▀") with foreground and background
	// colours, two image pixels per cell.
	Blocks
	// Sixel draws DEC sixel graphics written with tea.Raw into a reserved
	// rectangle.
	Sixel
	// Kitty transmits PNG data with the kitty graphics protocol and draws it
	// with Unicode placeholder cells.
	Kitty
)

// String returns the flag spelling of m.
func (m Mode) String() string {
	switch m {
	case Auto:
		return "auto"
	case None:
		return "none"
	case Blocks:
		return "blocks"
	case Sixel:
		return "sixel"
	case Kitty:
		return "kitty"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ParseMode reads the --graphics flag: auto, kitty, sixel, blocks or none.
func ParseMode(s string) (Mode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "auto":
		return Auto, nil
	case "none":
		return None, nil
	case "blocks":
		return Blocks, nil
	case "sixel":
		return Sixel, nil
	case "kitty":
		return Kitty, nil
	}
	return Auto, fmt.Errorf("graphics mode %q: want auto, kitty, sixel, blocks or none", s)
}

// Label is the text the None mode shows for a screen, e.g.
// "[screen 0012 · 1280×800]".
func Label(screen, width, height int) string {
	return fmt.Sprintf("[screen %04d · %d×%d]", screen, width, height)
}
