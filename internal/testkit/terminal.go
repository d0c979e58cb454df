package testkit

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ScreenWait bounds how long a Terminal waits for a screen: long enough
// for a console that starts an X server and an application on a loaded
// machine, while a passing test goes on as soon as the screen shows.
const ScreenWait = 60 * time.Second

// Terminal is a program running in a real terminal: a detached tmux
// session of a fixed size on a server of its own, read back with
// capture-pane. The server is killed when the test ends.
type Terminal struct {
	tb     testing.TB
	socket string
	name   string
}

// StartTerminal runs argv in a new tmux session of cols×rows cells named
// name, with TERM set to tmux's own terminal type; argv may begin with
// env and more variables.
func StartTerminal(tb testing.TB, name string, cols, rows int, argv ...string) *Terminal {
	tb.Helper()
	Need(tb, "tmux")
	term := &Terminal{tb: tb, socket: filepath.Join(tb.TempDir(), "tmux.sock"), name: name}
	args := append([]string{"new-session", "-d", "-x", strconv.Itoa(cols), "-y", strconv.Itoa(rows), "-s", name, "env", "TERM=tmux-256color"}, argv...)
	if out, err := term.Run(args...); err != nil {
		tb.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	tb.Cleanup(func() { _, _ = term.Run("kill-server") })
	return term
}

// Run runs a tmux command against the terminal's server and returns what
// it printed.
func (term *Terminal) Run(args ...string) (string, error) {
	out, err := exec.Command("tmux", append([]string{"-S", term.socket}, args...)...).CombinedOutput()
	return string(out), err
}

// Keys sends tmux key names (q, Escape, Enter, Down…), one after another.
func (term *Terminal) Keys(keys ...string) {
	term.tb.Helper()
	if out, err := term.Run(append([]string{"send-keys", "-t", term.name}, keys...)...); err != nil {
		term.tb.Fatalf("send-keys %q: %v\n%s", keys, err, out)
	}
}

// Type sends text as typed, without reading key names in it.
func (term *Terminal) Type(text string) {
	term.tb.Helper()
	if out, err := term.Run("send-keys", "-t", term.name, "-l", text); err != nil {
		term.tb.Fatalf("type %q: %v\n%s", text, err, out)
	}
}

// Mouse sends an SGR mouse report as the terminal writes one: button b
// (0 left, 64 wheel up, 65 wheel down) at the 0-based cell x, y, pressed
// and, for a click, released.
func (term *Terminal) Mouse(b, x, y int) {
	term.tb.Helper()
	seq := fmt.Sprintf("\x1b[<%d;%d;%dM", b, x+1, y+1)
	if b < 64 {
		seq += fmt.Sprintf("\x1b[<%d;%d;%dm", b, x+1, y+1)
	}
	term.Type(seq)
}

// Capture returns what the terminal shows now; args go to capture-pane
// (-e for the cells' colours).
func (term *Terminal) Capture(args ...string) string {
	out, _ := term.Run(append([]string{"capture-pane", "-p", "-t", term.name}, args...)...)
	return out
}

// Screen waits until the terminal shows want and returns what it shows;
// args go to capture-pane.
func (term *Terminal) Screen(want string, args ...string) string {
	term.tb.Helper()
	return term.await(want, true, args)
}

// ScreenWithout waits until the terminal no longer shows gone.
func (term *Terminal) ScreenWithout(gone string) string {
	term.tb.Helper()
	return term.await(gone, false, nil)
}

func (term *Terminal) await(text string, present bool, args []string) string {
	term.tb.Helper()
	deadline := time.Now().Add(ScreenWait)
	for {
		out, err := term.Run(append([]string{"capture-pane", "-p", "-t", term.name}, args...)...)
		if err == nil && strings.Contains(out, text) == present {
			return out
		}
		if time.Now().After(deadline) {
			if present {
				term.tb.Fatalf("the terminal %s never showed %q; last screen:\n%s", term.name, text, out)
			}
			term.tb.Fatalf("the terminal %s still shows %q; last screen:\n%s", term.name, text, out)
		}
		time.Sleep(pollInterval)
	}
}

// WaitExit waits for the program, and with it the session, to end; what
// says what should have ended it.
func (term *Terminal) WaitExit(what string) {
	term.tb.Helper()
	Eventually(term.tb, ScreenWait, what+" did not end the program in the terminal", func() bool {
		_, err := term.Run("has-session", "-t", term.name)
		return err != nil
	})
}

// PanePID returns the process id of the program the terminal runs.
func (term *Terminal) PanePID() int {
	term.tb.Helper()
	out, err := term.Run("list-panes", "-t", term.name, "-F", "#{pane_pid}")
	if err != nil {
		term.tb.Fatalf("list-panes: %v\n%s", err, out)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		term.tb.Fatalf("list-panes: %v", err)
	}
	return pid
}

// Close kills the session, as closing the terminal's window does: the
// program gets SIGHUP.
func (term *Terminal) Close() {
	term.tb.Helper()
	if out, err := term.Run("kill-session", "-t", term.name); err != nil {
		term.tb.Fatalf("kill-session: %v\n%s", err, out)
	}
}
