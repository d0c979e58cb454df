package wayland

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
)

// The pointer's image and the captures.
//
// wlroots' headless output has no cursor plane, so the compositor draws
// the pointer's image into the screen itself, and screencopy's copies hold
// it whatever overlay_cursor asks (the driver asks for none): two captures
// of a still window around a pointer move differ where the arrow was. An X
// server's captures never hold the pointer, and the runs' checks, masks and
// settling assume they do not. So the session gives every cursor name an
// image of one transparent pixel: sway's own cursor (over the desktop)
// through its xcursor_theme, and the applications' (over their windows)
// through XCURSOR_PATH, which libwayland-cursor, Qt and GTK read their
// cursor themes from. The pointer still moves, enters, hovers and clicks
// as before; only its image is empty.

// cursorTheme is the theme's name as sway and XCURSOR_THEME give it.
// GTK asks for the theme its settings name, Adwaita unless set, so the
// theme answers to that name too; XCURSOR_PATH holds no other theme.
const cursorTheme = "default"

var cursorThemeNames = []string{cursorTheme, "Adwaita"}

// cursorSize is the nominal size of the theme's one image.
const cursorSize = 24

// cursorNames are the names toolkits ask a theme for: the CSS names and
// the X cursor font's older ones.
var cursorNames = []string{
	"default", "left_ptr", "arrow", "top_left_arrow", "pointer", "hand", "hand1", "hand2",
	"text", "xterm", "ibeam", "vertical-text", "wait", "watch", "progress", "left_ptr_watch",
	"help", "question_arrow", "crosshair", "cross", "tcross", "cell", "plus", "move", "fleur",
	"all-scroll", "grab", "grabbing", "openhand", "closedhand", "dnd-move", "dnd-copy", "dnd-link",
	"dnd-none", "copy", "alias", "context-menu", "no-drop", "not-allowed", "crossed_circle",
	"col-resize", "row-resize", "sb_h_double_arrow", "sb_v_double_arrow", "e-resize", "w-resize",
	"n-resize", "s-resize", "ne-resize", "nw-resize", "se-resize", "sw-resize", "ew-resize",
	"ns-resize", "nesw-resize", "nwse-resize", "right_side", "left_side", "top_side",
	"bottom_side", "top_right_corner", "top_left_corner", "bottom_right_corner",
	"bottom_left_corner", "zoom-in", "zoom-out", "X_cursor", "pirate", "draft",
}

// blankCursor is an Xcursor file of one image: one transparent pixel.
func blankCursor() []byte {
	const imageType = 0xfffd0002
	words := []uint32{
		0x72756358, 16, 0x10000, 1, // "Xcur", header size, version, one entry
		imageType, cursorSize, 28, // the entry: an image of the nominal size, at byte 28
		36, imageType, cursorSize, 1, 1, 1, 0, 0, 0, // the image's header: 1x1, hotspot 0,0, no delay
		0, // its pixel, ARGB: transparent
	}
	b := make([]byte, 0, 4*len(words))
	for _, w := range words {
		b = binary.LittleEndian.AppendUint32(b, w)
	}
	return b
}

// writeCursorThemes writes the blank themes under dir (XCURSOR_PATH),
// readable by the compositor when it runs as another user.
func writeCursorThemes(dir string) error {
	img := blankCursor()
	for _, theme := range cursorThemeNames {
		cursors := filepath.Join(dir, theme, "cursors")
		if err := os.MkdirAll(cursors, 0o755); err != nil {
			return fmt.Errorf("write the blank cursor theme: %w", err)
		}
		for _, name := range cursorNames {
			if err := os.WriteFile(filepath.Join(cursors, name), img, 0o644); err != nil {
				return fmt.Errorf("write the blank cursor theme: %w", err)
			}
		}
	}
	// MkdirAll made dir with the umask's mode; the compositor must list it.
	return os.Chmod(dir, 0o755)
}
