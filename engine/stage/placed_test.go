package stage

import (
	"image"
	"testing"

	"github.com/kasmrt/kasmrt/drivers/desktop"
)

// TestPlacedOffset checks where a window-relative point lands on the
// screen: a window the application measures as the desktop does moves by
// its origin; one it measures larger, by its client-side shadow, moves
// also by half that margin, so a GTK 3 dialog's button on Wayland is
// pressed at its centre.
func TestPlacedOffset(t *testing.T) {
	cases := []struct {
		name string
		w    desktop.Window
		own  image.Rectangle
		want image.Point
	}{
		{"same size", desktop.Window{X: 320, Y: 160, Width: 640, Height: 480}, image.Rect(0, 0, 640, 480), image.Pt(320, 160)},
		{"own origin", desktop.Window{X: 320, Y: 160, Width: 640, Height: 480}, image.Rect(10, 20, 650, 500), image.Pt(310, 140)},
		// Mousepad's Save As dialog under sway: GTK 3 counts from its
		// shadow's corner, 26 px beyond the window on each side.
		{"shadow", desktop.Window{X: 38, Y: 0, Width: 1203, Height: 800}, image.Rect(0, 0, 1255, 852), image.Pt(12, -26)},
		{"smaller", desktop.Window{X: 38, Y: 0, Width: 1203, Height: 800}, image.Rect(0, 0, 1200, 790), image.Pt(38, 0)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := offset(c.w, c.own); got != c.want {
				t.Errorf("offset = %v, want %v", got, c.want)
			}
		})
	}
}
