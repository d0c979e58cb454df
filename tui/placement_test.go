package tui

import (
	"context"
	"image"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/kasmrt/kasmrt/drivers/x11"
	"github.com/kasmrt/kasmrt/internal/testkit"
)

// TestSixelPlacementAfterResizeInXterm runs kasmrt replay --graphics sixel
// in a real xterm with sixel graphics (VT340) on Xvfb, resizes the xterm,
// then gives the screen the whole terminal with z, and checks with the
// runtime's own X11 capture that the image is drawn where the screen
// pane's rectangle now is: from the second line and the first column, where
// a fixed origin would leave the title's text.
func TestSixelPlacementAfterResizeInXterm(t *testing.T) {
	t.Parallel()
	testkit.Need(t, "Xvfb")
	testkit.Need(t, "xterm")
	bin := kasmrt.Path(t)
	dir := t.TempDir()
	writeReport(t, dir, sampleEvents(), true)

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	sess, err := x11.StartSession(ctx, x11.SessionOptions{Width: 1024, Height: 768})
	if err != nil {
		t.Fatalf("start Xvfb: %v", err)
	}
	defer sess.Close()
	conn, err := x11.Dial(sess.Display())
	if err != nil {
		t.Fatalf("dial X: %v", err)
	}
	defer conn.Close()
	xt := exec.CommandContext(ctx, "xterm", "-display", sess.Display(), "-ti", "vt340",
		"-xrm", "XTerm*decTerminalID: vt340", "-xrm", "XTerm*numColorRegisters: 256",
		"-xrm", "XTerm*sixelScrolling: true", "-class", "KasmSixel",
		"-geometry", "100x30+0+0", "-fn", "fixed",
		"-e", bin, "replay", dir, "--graphics", "sixel")
	xt.Env = append(os.Environ(), "TERM=xterm", "NO_COLOR=")
	if err := xt.Start(); err != nil {
		t.Fatalf("start xterm: %v", err)
	}
	defer func() { _ = xt.Process.Kill(); _ = xt.Wait() }()

	// With the 6×13 "fixed" font, cell (row, col), 1-based, starts at
	// pixel ((col-1)·6, (row-1)·13) inside xterm's 2-pixel border.
	cells := func(row, col, rows, cols int) image.Rectangle {
		x, y := 2+(col-1)*6, 2+(row-1)*13
		return image.Rect(x, y, x+cols*6, y+rows*13)
	}
	// A line of text shows two or three colours (the "fixed" font is not
	// antialiased); the image, far more.
	waitImage := func(what string, r image.Rectangle, want int) {
		t.Helper()
		var colours int
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			img, err := conn.Capture(ctx)
			if err != nil {
				t.Fatalf("capture: %v", err)
			}
			if colours = distinctColours(img, r); colours >= want {
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
		t.Fatalf("%s: %v shows %d distinct colours, want an image (≥ %d)", what, r, colours, want)
	}
	// The pane inside its border, below the header: from row 3, column 2.
	waitImage("before the resize", cells(3, 2, 4, 40), 24)

	w, err := conn.FindWindow(ctx, x11.WindowMatch{Class: "KasmSixel"})
	if err != nil {
		t.Fatalf("find the xterm: %v", err)
	}
	resize(t, sess.Display(), w.ID, 2*2+140*6, 2*2+45*13)
	waitImage("after the resize", cells(3, 2, 4, 40), 24)

	if err := conn.Focus(w); err != nil {
		t.Fatal(err)
	}
	if err := conn.PressKey(ctx, "z"); err != nil {
		t.Fatal(err)
	}
	// The whole terminal: the title on row 1, the image from row 2,
	// column 1 (the window view of the recorded xterm, its colour bars on
	// top, about 20 colours in its first line).
	waitImage("with the whole terminal", cells(2, 1, 1, 40), 12)
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
