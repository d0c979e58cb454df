package x11

import (
	"context"
	"errors"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/kasmrt/kasmrt/internal/testkit"
)

// TestPing asks a GTK 3 window whether its main loop runs: it answers
// while it runs (and so does a Qt 5 window), stays silent while its process is stopped (a main loop
// that is blocked), and answers again once it goes on; a window that does
// not take part in the protocol (xterm's) is told apart from a silent one.
func TestPing(t *testing.T) {
	t.Parallel()
	python := testkit.GTKPython(t)
	s, c := newManagedDisplay(t)
	p, _ := launch(t, s.Display(), python, "testdata/window.py")
	w := findWindow(t, c, WindowMatch{Title: "ping me"})

	ping := func(bound time.Duration) error {
		ctx, cancel := context.WithTimeout(context.Background(), bound)
		defer cancel()
		return c.Ping(ctx, w.ID)
	}
	// A running main loop answers at once; the bound only keeps a broken
	// test from hanging.
	if err := ping(30 * time.Second); err != nil {
		t.Fatalf("Ping of a running GTK window: %v", err)
	}
	if err := syscall.Kill(p.PID(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	if err := ping(500 * time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Ping of a stopped GTK window = %v, want no answer (deadline exceeded)", err)
	}
	if err := syscall.Kill(p.PID(), syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if err := ping(30 * time.Second); err != nil {
		t.Errorf("Ping once the GTK window's process goes on: %v", err)
	}

	// Qt 5 sends its answer for structure notification, where GTK sends
	// it for substructure notification.
	if _, err := exec.LookPath("speedcrunch"); err == nil {
		_, _ = launch(t, s.Display(), "env", "HOME="+t.TempDir(), "speedcrunch")
		q := findWindow(t, c, WindowMatch{Class: "SpeedCrunch"})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := c.Ping(ctx, q.ID); err != nil {
			t.Errorf("Ping of a running Qt 5 window: %v", err)
		}
		cancel()
	}

	_, _ = launch(t, s.Display(), "xterm", "-T", "no ping", "-e", "sleep", "600")
	x := findWindow(t, c, WindowMatch{Title: "no ping"})
	if err := c.Ping(context.Background(), x.ID); !errors.Is(err, ErrPingUnsupported) {
		t.Errorf("Ping of xterm = %v, want ErrPingUnsupported", err)
	}
	if err := c.Ping(context.Background(), 0x7fffff); !errors.Is(err, ErrWindowGone) {
		t.Errorf("Ping of a window that does not exist = %v, want ErrWindowGone", err)
	}
}

// TestWindowAt finds the client window under a point through the window
// manager's frame, a popup over it, and nothing on the bare root.
func TestWindowAt(t *testing.T) {
	t.Parallel()
	s, c := newManagedDisplay(t)
	_, _ = launch(t, s.Display(), "xterm", "-T", "under the pointer", "-geometry", "40x10+0+0", "-e", "sleep", "600")
	w := findWindow(t, c, WindowMatch{Title: "under the pointer"})
	x, y := w.Center()
	got, ok, err := c.WindowAt(x, y)
	if err != nil || !ok || got.ID != w.ID || got.Popup {
		t.Errorf("WindowAt(%d,%d) = 0x%x (popup %v), %v, %v; want the managed xterm 0x%x", x, y, got.ID, got.Popup, ok, err, w.ID)
	}
	// An override-redirect window with WM_CLASS over the xterm, as a
	// toolkit's menu is: the pointer reaches it, and it is a popup.
	x2, err := xgb.NewConnDisplay(s.Display())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(x2.Close)
	setup := xproto.Setup(x2)
	menu, err := xproto.NewWindowId(x2)
	if err != nil {
		t.Fatal(err)
	}
	screen := setup.DefaultScreen(x2)
	err = xproto.CreateWindowChecked(x2, screen.RootDepth, menu, screen.Root, int16(x-10), int16(y-10), 20, 20, 0,
		xproto.WindowClassInputOutput, screen.RootVisual, xproto.CwOverrideRedirect, []uint32{1}).Check()
	if err != nil {
		t.Fatal(err)
	}
	class := "menu\x00Menu\x00"
	if err := xproto.ChangePropertyChecked(x2, xproto.PropModeReplace, menu, xproto.AtomWmClass, xproto.AtomString, 8, uint32(len(class)), []byte(class)).Check(); err != nil {
		t.Fatal(err)
	}
	if err := xproto.MapWindowChecked(x2, menu).Check(); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := c.WindowAt(x, y); err != nil || !ok || got.ID != uint32(menu) || !got.Popup {
		t.Errorf("WindowAt(%d,%d) over a menu = 0x%x (popup %v), %v, %v; want the popup 0x%x", x, y, got.ID, got.Popup, ok, err, menu)
	}
	sw, sh := c.ScreenSize()
	if got, ok, err := c.WindowAt(sw-1, sh-1); err != nil || ok {
		t.Errorf("WindowAt(the bare corner) = 0x%x, %v, %v; want none", got.ID, ok, err)
	}
}
