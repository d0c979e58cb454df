package x11

import (
	"context"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// popup creates and maps a window the way a toolkit shows a tooltip or a
// menu: override-redirect, with WM_CLASS, a title and, when windowType is
// set, _NET_WM_WINDOW_TYPE.
func (tc *testClient) popup(title, windowType string) xproto.Window {
	tc.t.Helper()
	screen := xproto.Setup(tc.x).DefaultScreen(tc.x)
	id, err := xproto.NewWindowId(tc.x)
	if err != nil {
		tc.t.Fatal(err)
	}
	err = xproto.CreateWindowChecked(tc.x, screen.RootDepth, id, screen.Root, 10, 10, 80, 20, 0,
		xproto.WindowClassInputOutput, screen.RootVisual, xproto.CwBackPixel|xproto.CwOverrideRedirect,
		[]uint32{screen.WhitePixel, 1}).Check()
	if err != nil {
		tc.t.Fatalf("create popup %s: %v", title, err)
	}
	class := "kasmtest\x00KasmTest\x00"
	xproto.ChangeProperty(tc.x, xproto.PropModeReplace, id, xproto.AtomWmClass, xproto.AtomString, 8, uint32(len(class)), []byte(class))
	xproto.ChangeProperty(tc.x, xproto.PropModeReplace, id, xproto.AtomWmName, xproto.AtomString, 8, uint32(len(title)), []byte(title))
	if windowType != "" {
		typ, _ := internAtom(tc.x, "_NET_WM_WINDOW_TYPE")
		val, _ := internAtom(tc.x, windowType)
		b := make([]byte, 4)
		xgb.Put32(b, uint32(val))
		xproto.ChangeProperty(tc.x, xproto.PropModeReplace, id, typ, xproto.AtomAtom, 32, 1, b)
	}
	if err := xproto.MapWindowChecked(tc.x, id).Check(); err != nil {
		tc.t.Fatalf("map popup %s: %v", title, err)
	}
	return id
}

// TestWindowsTellPopups lists a tooltip, a menu and an untyped
// override-redirect window beside an application window of the same
// class: each popup says what it is, the application window is none, and
// FindWindow by the class finds the application window, never a popup.
func TestWindowsTellPopups(t *testing.T) {
	t.Parallel()
	s, c := newManagedDisplay(t)
	tc := newTestClient(t, s.Display())
	want := map[xproto.Window]string{
		tc.popup("Tip", "_NET_WM_WINDOW_TYPE_TOOLTIP"):     "tooltip",
		tc.popup("Menu", "_NET_WM_WINDOW_TYPE_POPUP_MENU"): "menu",
		tc.popup("Other", ""):                              "popup",
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	main := tc.window("Main", 200, 100, 0)
	want[main] = ""
	w, err := c.FindWindow(ctx, WindowMatch{Class: "KasmTest"})
	if err != nil || w.ID != uint32(main) {
		t.Fatalf("FindWindow by class = 0x%x (%v), want the application window 0x%x", w.ID, err, main)
	}
	ws, err := c.Windows()
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, w := range ws {
		kind, ours := want[xproto.Window(w.ID)]
		if !ours {
			continue
		}
		seen++
		if w.Popup != kind {
			t.Errorf("window %q: Popup %q, want %q", w.Title, w.Popup, kind)
		}
	}
	if seen != len(want) {
		t.Errorf("Windows listed %d of the test's %d windows: %+v", seen, len(want), ws)
	}
}
