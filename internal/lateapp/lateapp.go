// Package lateapp is an X client for tests of settling: a white window
// that turns black a set delay after each key press, as an application
// that answers slowly (a query, a layout pass) draws late. Test binaries
// run it in a child process of their own (see Run). Until then a small
// black mark in its top-left corner shows it painted: a window of one
// colour is one still blank to the runtime, which waits for it to draw.
package lateapp

import (
	"fmt"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// Class is the WM_CLASS the window carries, for finding it.
const Class = "KasmLate"

// Geometry of the window on the screen.
const (
	X, Y, Width, Height = 40, 40, 320, 240
)

// markSize is the side of the mark the white window shows, far from its
// centre, where the tests look.
const markSize = 8

// Run opens a window on display and, after each key press, waits delay
// and paints the window black. It returns when the connection closes.
func Run(display string, delay time.Duration) error {
	x, err := xgb.NewConnDisplay(display)
	if err != nil {
		return fmt.Errorf("late app: dial %s: %w", display, err)
	}
	defer x.Close()
	screen := xproto.Setup(x).DefaultScreen(x)
	win, err := xproto.NewWindowId(x)
	if err != nil {
		return fmt.Errorf("late app: %w", err)
	}
	err = xproto.CreateWindowChecked(x, screen.RootDepth, win, screen.Root, X, Y, Width, Height, 0,
		xproto.WindowClassInputOutput, screen.RootVisual,
		xproto.CwBackPixel|xproto.CwEventMask,
		[]uint32{screen.WhitePixel, xproto.EventMaskKeyPress | xproto.EventMaskExposure}).Check()
	if err != nil {
		return fmt.Errorf("late app: create window: %w", err)
	}
	class := "kasmlate\x00" + Class + "\x00"
	xproto.ChangeProperty(x, xproto.PropModeReplace, win, xproto.AtomWmClass, xproto.AtomString, 8, uint32(len(class)), []byte(class))
	gc, err := xproto.NewGcontextId(x)
	if err != nil {
		return fmt.Errorf("late app: %w", err)
	}
	xproto.CreateGC(x, gc, xproto.Drawable(win), xproto.GcForeground, []uint32{screen.BlackPixel})
	if err := xproto.MapWindowChecked(x, win).Check(); err != nil {
		return fmt.Errorf("late app: map window: %w", err)
	}
	black := false
	for {
		ev, xerr := x.WaitForEvent()
		if ev == nil && xerr == nil {
			return nil
		}
		switch ev.(type) {
		case xproto.KeyPressEvent:
			time.Sleep(delay)
			black = true
			xproto.ChangeWindowAttributes(x, win, xproto.CwBackPixel, []uint32{screen.BlackPixel})
			xproto.PolyFillRectangle(x, xproto.Drawable(win), gc, []xproto.Rectangle{{Width: Width, Height: Height}})
			xproto.GetInputFocus(x).Reply()
		case xproto.ExposeEvent:
			mark := xproto.Rectangle{Width: markSize, Height: markSize}
			if black {
				mark = xproto.Rectangle{Width: Width, Height: Height}
			}
			xproto.PolyFillRectangle(x, xproto.Drawable(win), gc, []xproto.Rectangle{mark})
		}
	}
}
