package tui

import (
	"image"
	"testing"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/kasmrt/kasmrt/drivers/x11"
)

// TestSixelPlacementAfterResizeInXterm runs kasmrt replay --graphics sixel
// in a real xterm with sixel graphics (VT340) on Xvfb, resizes the xterm,
// then gives the screen the whole terminal with z, and checks with the
// runtime's own X11 capture that the image is drawn where the screen
// pane's rectangle now is: from the second line and the first column, where
// a fixed origin would leave the title's text.
func TestSixelPlacementAfterResizeInXterm(t *testing.T) {
	t.Parallel()
	xt := startSixelXterm(t, "100x30+0+0", "KasmSixel")
	// With the 6×13 "fixed" font, cell (row, col), 1-based, starts at
	// pixel ((col-1)·6, (row-1)·13) inside xterm's 2-pixel border.
	cells := func(row, col, rows, cols int) image.Rectangle {
		x, y := 2+(col-1)*6, 2+(row-1)*13
		return image.Rect(x, y, x+cols*6, y+rows*13)
	}
	// The pane inside its border, below the header: from row 3, column 2.
	xt.waitImage(t, "before the resize", cells(3, 2, 4, 40), 24)

	w, err := xt.conn.FindWindow(xt.ctx, x11.WindowMatch{Class: "KasmSixel"})
	if err != nil {
		t.Fatalf("find the xterm: %v", err)
	}
	resize(t, xt.display, w.ID, 2*2+140*6, 2*2+45*13)
	xt.waitImage(t, "after the resize", cells(3, 2, 4, 40), 24)

	if err := xt.conn.Focus(w); err != nil {
		t.Fatal(err)
	}
	if err := xt.conn.PressKey(xt.ctx, "z"); err != nil {
		t.Fatal(err)
	}
	// The whole terminal: the title on row 1, the image from row 2,
	// column 1 (the window view of the recorded xterm, its colour bars on
	// top, about 20 colours in its first line).
	xt.waitImage(t, "with the whole terminal", cells(2, 1, 1, 40), 12)
}

// resize sets an X window's size, as a window manager or a user dragging
// its corner would.
func resize(t *testing.T, display string, id uint32, w, h int) {
	t.Helper()
	c, err := xgb.NewConnDisplay(display)
	if err != nil {
		t.Fatalf("dial X: %v", err)
	}
	defer c.Close()
	if err := xproto.ConfigureWindowChecked(c, xproto.Window(id), xproto.ConfigWindowWidth|xproto.ConfigWindowHeight,
		[]uint32{uint32(w), uint32(h)}).Check(); err != nil {
		t.Fatalf("resize window 0x%x: %v", id, err)
	}
}
