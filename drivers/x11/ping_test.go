package x11

import (
	"context"
	"errors"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestPing asks a GTK 3 window whether its main loop runs: it answers
// while it runs, stays silent while its process is stopped (a main loop
// that is blocked), and answers again once it goes on; a window that does
// not take part in the protocol (xterm's) is told apart from a silent one.
func TestPing(t *testing.T) {
	t.Parallel()
	python := gtkPython(t)
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

	_, _ = launch(t, s.Display(), "xterm", "-T", "no ping", "-e", "sleep", "600")
	x := findWindow(t, c, WindowMatch{Title: "no ping"})
	if err := c.Ping(context.Background(), x.ID); !errors.Is(err, ErrPingUnsupported) {
		t.Errorf("Ping of xterm = %v, want ErrPingUnsupported", err)
	}
	if err := c.Ping(context.Background(), 0x7fffff); !errors.Is(err, ErrWindowGone) {
		t.Errorf("Ping of a window that does not exist = %v, want ErrWindowGone", err)
	}
}

// gtkPython is a Python 3 that has GTK 3 through PyGObject: Debian's, whose
// python3-gi a python3 earlier on PATH (pyenv's) may not see.
func gtkPython(t *testing.T) string {
	t.Helper()
	for _, python := range []string{"/usr/bin/python3", "python3"} {
		probe := exec.Command(python, "-c", "import gi; gi.require_version('Gtk', '3.0'); from gi.repository import Gtk")
		if probe.Run() == nil {
			return python
		}
	}
	t.Skip("no python3 with GTK 3 (Debian packages python3-gi, gir1.2-gtk-3.0)")
	return ""
}

// TestWindowAt finds the client window under a point through the window
// manager's frame, and nothing on the bare root.
func TestWindowAt(t *testing.T) {
	t.Parallel()
	s, c := newManagedDisplay(t)
	_, _ = launch(t, s.Display(), "xterm", "-T", "under the pointer", "-geometry", "40x10+0+0", "-e", "sleep", "600")
	w := findWindow(t, c, WindowMatch{Title: "under the pointer"})
	x, y := w.Center()
	got, ok, err := c.WindowAt(x, y)
	if err != nil || !ok || got.ID != w.ID {
		t.Errorf("WindowAt(%d,%d) = 0x%x, %v, %v; want the xterm 0x%x", x, y, got.ID, ok, err, w.ID)
	}
	sw, sh := c.ScreenSize()
	if got, ok, err := c.WindowAt(sw-1, sh-1); err != nil || ok {
		t.Errorf("WindowAt(the bare corner) = 0x%x, %v, %v; want none", got.ID, ok, err)
	}
}
