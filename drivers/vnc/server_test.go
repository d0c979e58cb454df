package vnc_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/drivers/vnc"
	"github.com/kasmrt/kasmrt/drivers/vnc/vnctest"
)

// xvfb starts an X server of the test's own and returns its display.
func xvfb(t *testing.T) string {
	t.Helper()
	for _, bin := range []string{"Xvfb", "x11vnc"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s is not installed (bash scripts/setup.sh)", bin)
		}
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("Xvfb", "-displayfd", "3", "-screen", "0", "320x200x24", "-nolisten", "tcp")
	cmd.ExtraFiles = []*os.File{w}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	n, err := bufio.NewReader(r).ReadString('\n')
	if err != nil {
		t.Fatalf("Xvfb named no display: %v", err)
	}
	return ":" + strings.TrimSpace(n)
}

// TestServerTakesOnlyItsPassword starts x11vnc on an Xvfb: a client with
// a wrong password is refused; with the right one it gets the screen, and
// its leaving ends the server.
func TestServerTakesOnlyItsPassword(t *testing.T) {
	t.Parallel()
	display := xvfb(t)
	srv, err := vnc.Start(t.Context(), vnc.Options{Display: display, Addr: "127.0.0.1:0", Password: "Pw3xK9mQ", Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	if !strings.HasPrefix(srv.Addr(), "127.0.0.1:") {
		t.Errorf("the server listens on %s", srv.Addr())
	}
	// Nothing else: no IPv6 listener on every interface, no web port.
	for _, l := range listening(t, srv.PID()) {
		if l != "0100007F" {
			t.Errorf("x11vnc also listens on %s (hex, from /proc/net)", l)
		}
	}
	if _, err := vnctest.Dial(srv.Addr(), "wrong-pw"); !vnctest.IsAuthError(err) {
		t.Fatalf("a wrong password: %v, want refused", err)
	}
	c, err := vnctest.Dial(srv.Addr(), "Pw3xK9mQ")
	if err != nil {
		t.Fatalf("the right password: %v", err)
	}
	if c.Width != 320 || c.Height != 200 {
		t.Errorf("the screen is %dx%d, want 320x200", c.Width, c.Height)
	}
	c.Close()
	<-srv.Done()
}

// listening returns the local addresses, as /proc/net/tcp and tcp6 write
// them in hex, of the TCP sockets pid listens on.
func listening(t *testing.T, pid int) []string {
	t.Helper()
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if inode, ok := strings.CutPrefix(l, "socket:["); err == nil && ok {
			inodes[strings.TrimSuffix(inode, "]")] = true
		}
	}
	var out []string
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			f := strings.Fields(line)
			const listen = "0A"
			if len(f) > 9 && f[3] == listen && inodes[f[9]] {
				addr, _, _ := strings.Cut(f[1], ":")
				out = append(out, addr)
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("x11vnc listens on nothing /proc/net shows")
	}
	return out
}
