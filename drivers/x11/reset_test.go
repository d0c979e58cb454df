package x11

import (
	"context"
	"errors"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jezek/xgb/res"
	"github.com/jezek/xgb/xproto"
	"github.com/kasmrt/kasmrt/internal/testkit"
)

// Reset disconnects every client the last run left, windowed or not, and
// keeps the window manager: the display is as a new one to the next run.
func TestReset(t *testing.T) {
	testkit.Need(t, "Xvfb", "openbox", "xmessage", "xprop")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := StartServer(ctx, DisplayOptions{Width: 640, Height: 400, WindowManager: WindowManagerOpenbox})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := Dial(s.Display())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fresh, err := c.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	// Clients in sessions of their own, as a run's app may leave behind:
	// two windows and one connection without any.
	var left []*exec.Cmd
	for _, argv := range [][]string{{"xmessage", "-title", "one", "-geometry", "+10+10", "one"}, {"xmessage", "-title", "two", "-geometry", "+200+10", "two"}, {"xprop", "-root", "-spy"}} {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = []string{"DISPLAY=" + s.Display()}
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer cmd.Process.Kill()
		left = append(left, cmd)
	}
	for _, want := range []string{"one", "two"} {
		if _, err := c.FindWindow(ctx, WindowMatch{Title: want}); err != nil {
			t.Fatalf("window %s: %v", want, err)
		}
	}
	// The connection without a window shows only in the server's client
	// list; on a loaded machine it may come after the windows.
	spy := uint32(left[2].Process.Pid)
	eventually(t, "xprop's connection", func() bool {
		return slices.Contains(clientPIDs(t, c), spy)
	})
	_ = c.Click(ctx, 20, 20)
	// A property an application left on the root, as an accessibility
	// bus leaves its address.
	if b, err := exec.Command("xprop", "-display", s.Display(), "-root", "-f", "KASMRT_LEFT", "8s", "-set", "KASMRT_LEFT", "stale").CombinedOutput(); err != nil {
		t.Fatalf("xprop -set: %v\n%s", err, b)
	}
	// The bound is for a loaded machine, where the server takes its time
	// to drop the killed clients; a reset that works ends well before.
	if err := c.Reset(ctx, 15*time.Second, fresh); err != nil {
		t.Fatalf("reset: %v", err)
	}
	wins, err := c.Windows()
	if err != nil || len(wins) != 0 {
		t.Errorf("windows after reset = %+v, %v; want none", wins, err)
	}
	for _, cmd := range left {
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Errorf("%v still runs after its connection was killed", cmd.Args)
		}
	}
	if _, ok := c.windowManagerWindow(); !ok {
		t.Error("the window manager is gone")
	}
	if b, _ := exec.Command("xprop", "-display", s.Display(), "-root", "KASMRT_LEFT").CombinedOutput(); !strings.Contains(string(b), "not found") {
		t.Errorf("the root keeps KASMRT_LEFT after reset: %s", b)
	}
	p, err := xproto.QueryPointer(c.x, c.root).Reply()
	if err != nil || p.RootX != 320 || p.RootY != 200 {
		t.Errorf("pointer at %d,%d (%v), want the centre 320,200", p.RootX, p.RootY, err)
	}
	// The display serves the next application as a new one would.
	next := exec.Command("xmessage", "-title", "next", "-geometry", "+40+40", "next")
	next.Env = []string{"DISPLAY=" + s.Display()}
	if err := next.Start(); err != nil {
		t.Fatal(err)
	}
	defer next.Process.Kill()
	if _, err := c.FindWindow(ctx, WindowMatch{Title: "next"}); err != nil {
		t.Fatalf("the next window: %v", err)
	}
}

// A client that cannot be removed in time is reported, not ignored.
func TestResetTimeout(t *testing.T) {
	s, c := newDisplay(t)
	cmd := exec.Command("xprop", "-root", "-spy")
	cmd.Env = []string{"DISPLAY=" + s.Display()}
	if err := cmd.Start(); err != nil {
		t.Skipf("xprop: %v", err)
	}
	defer cmd.Process.Kill()
	// A client yet to connect is none to remove: wait for its connection.
	spy := uint32(cmd.Process.Pid)
	eventually(t, "xprop's connection", func() bool {
		return slices.Contains(clientPIDs(t, c), spy)
	})
	if err := c.Reset(context.Background(), 0, Fresh{}); !errors.Is(err, ErrClientsLeft) {
		t.Fatalf("err = %v, want ErrClientsLeft at once", err)
	}
}

// clientPIDs lists the PIDs of the display's local clients.
func clientPIDs(t *testing.T, c *Conn) []uint32 {
	t.Helper()
	if err := res.Init(c.x); err != nil {
		t.Fatal(err)
	}
	reply, err := res.QueryClientIds(c.x, 1, []res.ClientIdSpec{{Client: 0, Mask: res.ClientIdMaskLocalClientPID}}).Reply()
	if err != nil {
		t.Fatal(err)
	}
	var pids []uint32
	for _, id := range reply.Ids {
		if len(id.Value) > 0 {
			pids = append(pids, id.Value[0])
		}
	}
	return pids
}
