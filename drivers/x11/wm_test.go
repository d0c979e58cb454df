package x11

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
	"github.com/kasmrt/kasmrt/internal/testkit"
)

// newManagedDisplay starts a private Xvfb with the session's window
// manager and dials it.
func newManagedDisplay(t *testing.T) (*Server, *Conn) {
	t.Helper()
	testkit.Need(t, "Xvfb", "openbox")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	s, err := StartServer(ctx, DisplayOptions{WindowManager: WindowManagerOpenbox})
	if err != nil {
		t.Fatalf("StartServer: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	if got := s.WindowManager(); got != WindowManagerOpenbox {
		t.Fatalf("WindowManager() = %q, want openbox", got)
	}
	c, err := Dial(s.Display())
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return s, c
}

// testClient is an X client the test plays itself: it creates top-level
// windows the way a toolkit does (at 0,0, with WM_CLASS, a title,
// _NET_WM_PID and, for a dialog, WM_TRANSIENT_FOR).
type testClient struct {
	t *testing.T
	x *xgb.Conn
}

func newTestClient(t *testing.T, display string) *testClient {
	t.Helper()
	x, err := xgb.NewConnDisplay(display)
	if err != nil {
		t.Fatalf("connect a test client: %v", err)
	}
	t.Cleanup(x.Close)
	return &testClient{t: t, x: x}
}

func (tc *testClient) window(title string, w, h int, transientFor xproto.Window) xproto.Window {
	tc.t.Helper()
	screen := xproto.Setup(tc.x).DefaultScreen(tc.x)
	id, err := xproto.NewWindowId(tc.x)
	if err != nil {
		tc.t.Fatal(err)
	}
	err = xproto.CreateWindowChecked(tc.x, screen.RootDepth, id, screen.Root, 0, 0, uint16(w), uint16(h), 0,
		xproto.WindowClassInputOutput, screen.RootVisual, xproto.CwBackPixel, []uint32{screen.WhitePixel}).Check()
	if err != nil {
		tc.t.Fatalf("create window %s: %v", title, err)
	}
	pid, _ := internAtom(tc.x, "_NET_WM_PID")
	class := "kasmtest\x00KasmTest\x00"
	xproto.ChangeProperty(tc.x, xproto.PropModeReplace, id, xproto.AtomWmClass, xproto.AtomString, 8, uint32(len(class)), []byte(class))
	xproto.ChangeProperty(tc.x, xproto.PropModeReplace, id, xproto.AtomWmName, xproto.AtomString, 8, uint32(len(title)), []byte(title))
	pidBytes := make([]byte, 4)
	xgb.Put32(pidBytes, uint32(os.Getpid()))
	xproto.ChangeProperty(tc.x, xproto.PropModeReplace, id, pid, xproto.AtomCardinal, 32, 1, pidBytes)
	if transientFor != 0 {
		b := make([]byte, 4)
		xgb.Put32(b, uint32(transientFor))
		xproto.ChangeProperty(tc.x, xproto.PropModeReplace, id, xproto.AtomWmTransientFor, xproto.AtomWindow, 32, 1, b)
	}
	if err := xproto.MapWindowChecked(tc.x, id).Check(); err != nil {
		tc.t.Fatalf("map window %s: %v", title, err)
	}
	return id
}

// TestWindowManagerPlacesAndFocuses checks the desktop behaviour a run
// relies on: a new window maps inside the screen and gets the focus, a
// dialog is centred on its parent, a window larger than the screen is
// shrunk to fit, and closing the dialog gives the focus back.
func TestWindowManagerPlacesAndFocuses(t *testing.T) {
	t.Parallel()
	s, c := newManagedDisplay(t)
	tc := newTestClient(t, s.Display())
	sw, sh := c.ScreenSize()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	focusedOn := func(id xproto.Window) func() bool {
		return func() bool {
			w, ok, err := c.FocusedWindow()
			return err == nil && ok && w.ID == uint32(id)
		}
	}
	inside := func(w Window) bool {
		return w.X >= 0 && w.Y >= 0 && w.X+w.Width <= sw && w.Y+w.Height <= sh
	}

	mainID := tc.window("Main", 400, 300, 0)
	main := findWindow(t, c, WindowMatch{Title: "Main"})
	// The first client of a session gets the window IDs of a closed
	// connection; the manager must not confuse them with its probe's.
	if main.Width != 400 || main.Height != 300 {
		t.Errorf("main window is %dx%d, want the 400x300 it asked for", main.Width, main.Height)
	}
	if !inside(main) {
		t.Errorf("main window at %d,%d %dx%d is not inside the %dx%d screen", main.X, main.Y, main.Width, main.Height, sw, sh)
	}
	eventually(t, "the new main window has the focus", focusedOn(mainID))

	dialogID := tc.window("Dialog", 200, 100, mainID)
	dialog, err := c.FindWindow(ctx, WindowMatch{Title: "Dialog"})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the dialog has the focus", focusedOn(dialogID))
	mx, my := main.Center()
	dx, dy := dialog.Center()
	if abs(mx-dx) > 2 || abs(my-dy) > 2 {
		t.Errorf("dialog centred at %d,%d, want on its parent's centre %d,%d", dx, dy, mx, my)
	}

	tc.window("Huge", 2*sw, 2*sh, 0)
	huge, err := c.FindWindow(ctx, WindowMatch{Title: "Huge"})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the oversized window fits the screen", func() bool {
		w, err := c.Window(huge.ID)
		return err == nil && inside(w)
	})

	// Closing the newest windows gives the focus back to the one before.
	xproto.DestroyWindow(tc.x, xproto.Window(huge.ID))
	xproto.DestroyWindow(tc.x, dialogID)
	eventually(t, "the focus returns to the main window", focusedOn(mainID))

	// Focus moves the focus and raises the window under the manager.
	other := tc.window("Other", 300, 200, 0)
	eventually(t, "the other window has the focus", focusedOn(other))
	if err := c.Focus(main); err != nil {
		t.Fatalf("Focus: %v", err)
	}
	if !focusedOn(mainID)() {
		t.Error("Focus returned before the main window had the focus")
	}
	eventually(t, "the main window is raised above the other", func() bool {
		ws, err := c.Windows()
		if err != nil {
			return false
		}
		at := map[uint32]int{}
		for i, w := range ws {
			at[w.ID] = i
		}
		return at[main.ID] > at[uint32(other)]
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// TestWaitPainted waits for a window that maps black and paints only
// later: it is ready once painted, not when mapped, and a window that
// never paints is not ready when the time is up.
func TestWaitPainted(t *testing.T) {
	t.Parallel()
	s, c := newManagedDisplay(t)
	tc := newTestClient(t, s.Display())
	screen := xproto.Setup(tc.x).DefaultScreen(tc.x)

	id := tc.window("Late", 300, 200, 0)
	xproto.ChangeWindowAttributes(tc.x, id, xproto.CwBackPixel, []uint32{screen.BlackPixel})
	xproto.ClearArea(tc.x, false, id, 0, 0, 0, 0)
	w := findWindow(t, c, WindowMatch{Title: "Late"})
	const paintAfter = 700 * time.Millisecond
	start := time.Now()
	go func() {
		time.Sleep(paintAfter)
		gc, _ := xproto.NewGcontextId(tc.x)
		xproto.CreateGC(tc.x, gc, xproto.Drawable(id), xproto.GcForeground, []uint32{screen.BlackPixel})
		xproto.ChangeWindowAttributes(tc.x, id, xproto.CwBackPixel, []uint32{screen.WhitePixel})
		xproto.ClearArea(tc.x, false, id, 0, 0, 0, 0)
		xproto.PolyFillRectangle(tc.x, xproto.Drawable(id), gc, []xproto.Rectangle{{X: 10, Y: 10, Width: 100, Height: 20}})
		xproto.GetInputFocus(tc.x).Reply() // flush
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	painted, err := c.WaitPainted(ctx, w, SettleOptions{Interval: 20 * time.Millisecond})
	if err != nil || !painted {
		t.Fatalf("WaitPainted = %v, %v", painted, err)
	}
	if took := time.Since(start); took < paintAfter {
		t.Errorf("ready after %s, before the window painted (%s)", took, paintAfter)
	}
	pix, err := c.captureArea(w)
	if err != nil || blank(pix) {
		t.Errorf("the window is blank when called ready (%v)", err)
	}

	blackID := tc.window("Never", 200, 100, 0)
	xproto.ChangeWindowAttributes(tc.x, blackID, xproto.CwBackPixel, []uint32{screen.BlackPixel})
	xproto.ClearArea(tc.x, false, blackID, 0, 0, 0, 0)
	never := findWindow(t, c, WindowMatch{Title: "Never"})
	short, cancelShort := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancelShort()
	if painted, err := c.WaitPainted(short, never, SettleOptions{Interval: 20 * time.Millisecond}); painted || err != nil {
		t.Errorf("a window that never paints: WaitPainted = %v, %v; want false, nil", painted, err)
	}
}

// TestWindowsLeaveOutTheManager lists the application's windows under the
// window manager: its clients inside their frames, never the manager's
// own announcement window or popups.
func TestWindowsLeaveOutTheManager(t *testing.T) {
	t.Parallel()
	s, c := newManagedDisplay(t)
	tc := newTestClient(t, s.Display())
	tc.window("Client", 200, 100, 0)
	findWindow(t, c, WindowMatch{Title: "Client"})
	ws, err := c.Windows()
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 1 || ws[0].Title != "Client" {
		t.Errorf("Windows() = %+v, want only the client", ws)
	}
}
