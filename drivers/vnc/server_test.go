package vnc_test

import (
	"bufio"
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
