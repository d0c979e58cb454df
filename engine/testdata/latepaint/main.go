// Command latepaint is a test application that is slow in the two ways
// readiness must wait out: it maps its window late, leaves it black for a
// while, and only then paints it (a light background with a dark bar).
// LATEPAINT_MAP_MS and LATEPAINT_PAINT_MS set the two delays.
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "latepaint:", err)
		os.Exit(1)
	}
}

func delay(name string) time.Duration {
	ms, _ := strconv.Atoi(os.Getenv(name))
	return time.Duration(ms) * time.Millisecond
}

func run() error {
	x, err := xgb.NewConn()
	if err != nil {
		return err
	}
	defer x.Close()
	time.Sleep(delay("LATEPAINT_MAP_MS"))
	screen := xproto.Setup(x).DefaultScreen(x)
	win, err := xproto.NewWindowId(x)
	if err != nil {
		return err
	}
	err = xproto.CreateWindowChecked(x, screen.RootDepth, win, screen.Root, 0, 0, 400, 300, 0,
		xproto.WindowClassInputOutput, screen.RootVisual,
		xproto.CwBackPixel|xproto.CwEventMask, []uint32{screen.BlackPixel, xproto.EventMaskExposure}).Check()
	if err != nil {
		return err
	}
	class := "latepaint\x00LatePaint\x00"
	xproto.ChangeProperty(x, xproto.PropModeReplace, win, xproto.AtomWmClass, xproto.AtomString, 8, uint32(len(class)), []byte(class))
	title := "Late Paint"
	xproto.ChangeProperty(x, xproto.PropModeReplace, win, xproto.AtomWmName, xproto.AtomString, 8, uint32(len(title)), []byte(title))
	if a, err := xproto.InternAtom(x, false, 11, "_NET_WM_PID").Reply(); err == nil {
		pid := make([]byte, 4)
		xgb.Put32(pid, uint32(os.Getpid()))
		xproto.ChangeProperty(x, xproto.PropModeReplace, win, a.Atom, xproto.AtomCardinal, 32, 1, pid)
	}
	if err := xproto.MapWindowChecked(x, win).Check(); err != nil {
		return err
	}
	time.Sleep(delay("LATEPAINT_PAINT_MS"))
	gc, err := xproto.NewGcontextId(x)
	if err != nil {
		return err
	}
	if err := xproto.CreateGCChecked(x, gc, xproto.Drawable(win), xproto.GcForeground, []uint32{0x202060}).Check(); err != nil {
		return err
	}
	xproto.ChangeWindowAttributes(x, win, xproto.CwBackPixel, []uint32{0xf0f0e0})
	paint := func() {
		xproto.ClearArea(x, false, win, 0, 0, 0, 0)
		xproto.PolyFillRectangle(x, xproto.Drawable(win), gc, []xproto.Rectangle{{X: 20, Y: 20, Width: 360, Height: 40}})
	}
	paint()
	for {
		ev, err := x.WaitForEvent()
		if ev == nil && err == nil {
			return nil
		}
		if _, ok := ev.(xproto.ExposeEvent); ok {
			paint()
		}
	}
}
