package wayland

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/drivers/desktop"
	"github.com/kasmrt/kasmrt/drivers/proc"
	"github.com/kasmrt/kasmrt/internal/testkit"
)

// newSession starts a private headless sway for one test and dials it.
func newSession(t *testing.T) (*Server, *Conn) {
	t.Helper()
	testkit.Need(t, "sway")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := StartServer(ctx, desktop.DisplayOptions{Width: 1024, Height: 768})
	if err != nil {
		t.Fatalf("StartServer: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	c, err := Dial(s.Display())
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return s, c
}

// lockedBuffer collects an app's output while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// launch starts a native Wayland client of s, as the stage does, with
// DISPLAY unset, and stops it when the test ends.
func launch(t *testing.T, s *Server, argv ...string) (*proc.Process, *lockedBuffer) {
	t.Helper()
	testkit.Need(t, argv[0])
	out := &lockedBuffer{}
	p, err := proc.Start(context.Background(), proc.Spec{
		Argv:   argv,
		Env:    append(s.ClientEnv(), "LC_ALL=C.UTF-8", "NO_AT_BRIDGE=1", "XDG_RUNTIME_DIR="+t.TempDir()),
		Unset:  s.ClientUnset(),
		Output: out,
	})
	if err != nil {
		t.Fatalf("launch: %v", err)
	}
	t.Cleanup(func() { p.Stop(time.Second) })
	return p, out
}

func findWindow(t *testing.T, c *Conn, m desktop.WindowMatch) desktop.Window {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w, err := c.FindWindow(ctx, m)
	if err != nil {
		t.Fatalf("FindWindow(%s): %v", m, err)
	}
	return w
}

// TestSessionIsPrivateAndEndsClean starts sway, checks its runtime
// directory is private and holds the socket, and that Close ends the
// compositor and removes the directory.
func TestSessionIsPrivateAndEndsClean(t *testing.T) {
	s, c := newSession(t)
	fi, err := os.Stat(s.runtime)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("runtime directory mode %v, want 0700", fi.Mode().Perm())
	}
	if filepath.Dir(s.Display()) != s.runtime {
		t.Errorf("socket %s is not in the session's runtime directory %s", s.Display(), s.runtime)
	}
	if w, h := c.ScreenSize(); w != 1024 || h != 768 {
		t.Errorf("screen %dx%d, want 1024x768", w, h)
	}
	img, err := c.Capture(context.Background())
	if err != nil {
		t.Fatalf("Capture: %v\n%s", err, s.tail())
	}
	if b := img.Bounds(); b.Dx() != 1024 || b.Dy() != 768 {
		t.Errorf("capture %v, want 1024x768", b)
	}
	c.Close()
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	select {
	case <-s.Done():
	default:
		t.Error("sway still runs after Close")
	}
	if _, err := os.Stat(s.dir); !os.IsNotExist(err) {
		t.Errorf("session directory %s still there after Close (%v)", s.dir, err)
	}
}

// TestTypeTextAndPressKeyReachAWaylandClient types into zenity's entry
// (GTK, a native Wayland client: DISPLAY is unset) and presses Return:
// zenity prints what its entry holds.
func TestTypeTextAndPressKeyReachAWaylandClient(t *testing.T) {
	s, c := newSession(t)
	p, out := launch(t, s, "zenity", "--entry", "--title", "kasmrt-entry")
	w := findWindow(t, c, desktop.WindowMatch{Title: "kasmrt-entry"})
	if w.PID != p.PID() {
		t.Errorf("window pid %d, want %d", w.PID, p.PID())
	}
	if err := c.Focus(w); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const text = "Héllo wörld €5 ünïcode ✓"
	if err := c.TypeText(ctx, text); err != nil {
		t.Fatal(err)
	}
	if err := c.PressKey(ctx, "ctrl+a"); err != nil {
		t.Fatal(err)
	}
	if err := c.PressKey(ctx, "ctrl+c"); err != nil {
		t.Fatal(err)
	}
	if err := c.PressKey(ctx, "End"); err != nil {
		t.Fatal(err)
	}
	if err := c.TypeText(ctx, "!"); err != nil {
		t.Fatal(err)
	}
	if err := c.PressKey(ctx, "Return"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
	case <-time.After(30 * time.Second):
		t.Fatalf("zenity did not take Return; output: %s", out)
	}
	if got := strings.TrimSpace(out.String()); !strings.HasSuffix(got, text+"!") {
		t.Errorf("zenity printed %q, want %q", got, text+"!")
	}
}

// TestClickReachesAWaylandClient clicks one of zenity's two buttons, which
// share the bottom row of its question dialog (No left, Yes right): the
// exit status says which one the application saw pressed.
func TestClickReachesAWaylandClient(t *testing.T) {
	tests := []struct {
		button string
		// at is the fraction of the window's width the click is at.
		at   float64
		code int
	}{
		{"Yes", 0.75, 0},
		{"No", 0.25, 1},
	}
	for _, tt := range tests {
		t.Run(tt.button, func(t *testing.T) {
			s, c := newSession(t)
			p, _ := launch(t, s, "zenity", "--question", "--title", "kasmrt-question", "--text", "Pick")
			w := findWindow(t, c, desktop.WindowMatch{Title: "kasmrt-question"})
			ctx := context.Background()
			if ok, err := c.WaitPainted(ctx, w, desktop.SettleOptions{Cap: 10 * time.Second}); !ok || err != nil {
				t.Fatalf("WaitPainted: %v %v", ok, err)
			}
			x, y := w.X+int(float64(w.Width)*tt.at), w.Y+w.Height-22
			if err := c.Click(ctx, x, y); err != nil {
				t.Fatal(err)
			}
			select {
			case <-p.Done():
			case <-time.After(30 * time.Second):
				t.Fatalf("zenity did not take the click at %d,%d", x, y)
			}
			if got := p.ExitStatus().Code; got != tt.code {
				t.Errorf("zenity exited %d after a click on %s, want %d", got, tt.button, tt.code)
			}
		})
	}
}

// TestFocusAndWindows opens two windows, focuses each in turn, and reads
// the focus and the titles back.
func TestFocusAndWindows(t *testing.T) {
	s, c := newSession(t)
	launch(t, s, "zenity", "--info", "--title", "kasmrt-first", "--text", "one")
	first := findWindow(t, c, desktop.WindowMatch{Title: "kasmrt-first"})
	launch(t, s, "zenity", "--info", "--title", "kasmrt-second", "--text", "two")
	second := findWindow(t, c, desktop.WindowMatch{Title: "kasmrt-second"})
	for _, w := range []desktop.Window{first, second, first} {
		if err := c.Focus(w); err != nil {
			t.Fatal(err)
		}
		got, ok, err := c.FocusedWindow()
		if err != nil || !ok || got.ID != w.ID {
			t.Errorf("after Focus(%q): focused %q (%v, %v)", w.Title, got.Title, ok, err)
		}
	}
	ws, err := c.Windows()
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, w := range ws {
		titles = append(titles, w.Title)
	}
	if len(ws) != 2 || !strings.Contains(strings.Join(titles, ","), "kasmrt-first") || !strings.Contains(strings.Join(titles, ","), "kasmrt-second") {
		t.Errorf("windows %q, want kasmrt-first and kasmrt-second", titles)
	}
	hit, ok, err := c.WindowAt(first.Center())
	if err != nil || !ok || hit.ID != first.ID {
		t.Errorf("WindowAt(first's centre) = %q %v %v, want the focused first window", hit.Title, ok, err)
	}
}

// TestWaitSettledWaitsForTheResponse types into zenity's entry and waits
// for the screen to settle with a response window: the capture returned
// shows the typed text drawn (it differs from the one before typing), and
// an unchanging screen settles without any drawing, however often asked.
func TestWaitSettledWaitsForTheResponse(t *testing.T) {
	s, c := newSession(t)
	launch(t, s, "zenity", "--entry", "--title", "kasmrt-settle")
	w := findWindow(t, c, desktop.WindowMatch{Title: "kasmrt-settle"})
	ctx := context.Background()
	if ok, err := c.WaitPainted(ctx, w, desktop.SettleOptions{Cap: 10 * time.Second}); !ok || err != nil {
		t.Fatalf("WaitPainted: %v %v", ok, err)
	}
	before, settled, err := c.WaitSettled(ctx, desktop.SettleOptions{Cap: 30 * time.Second, Quiet: 200 * time.Millisecond})
	if err != nil || !settled {
		t.Fatalf("the idle screen did not settle: %v %v", settled, err)
	}
	since := time.Now()
	if err := c.TypeText(ctx, "W"); err != nil {
		t.Fatal(err)
	}
	after, settled, err := c.WaitSettled(ctx, desktop.SettleOptions{Cap: 30 * time.Second, Response: 20 * time.Second, Since: since})
	if err != nil || !settled {
		t.Fatalf("the screen did not settle after typing: %v %v", settled, err)
	}
	if bytes.Equal(before.Pix, after.Pix) {
		t.Error("the settled capture after typing is the one before: the response was not waited for")
	}
	// Nothing is drawn now: a wait must end with the quiet, not wait for
	// drawing that never comes.
	idle, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, settled, err := c.WaitSettled(idle, desktop.SettleOptions{Cap: 20 * time.Second, Quiet: 200 * time.Millisecond}); err != nil || !settled {
		t.Errorf("an unchanging screen did not settle: %v %v", settled, err)
	}
}

// TestShiftedChordReachesGTKAccelerators presses ctrl+shift+s in Mousepad
// (GTK 3), whose Save As is on that accelerator: a toolkit matches Shift
// with a letter only when the keyboard has the letter's capital on the
// same key, as a person's has.
func TestShiftedChordReachesGTKAccelerators(t *testing.T) {
	s, c := newSession(t)
	dir := t.TempDir()
	launch(t, s, "mousepad", "--disable-server", filepath.Join(dir, "note.txt"))
	w := findWindow(t, c, desktop.WindowMatch{Class: "mousepad"})
	ctx := context.Background()
	if ok, err := c.WaitPainted(ctx, w, desktop.SettleOptions{Cap: 10 * time.Second}); !ok || err != nil {
		t.Fatalf("WaitPainted: %v %v", ok, err)
	}
	if err := c.PressKey(ctx, "ctrl+shift+s"); err != nil {
		t.Fatal(err)
	}
	findWindow(t, c, desktop.WindowMatch{Title: "Save As"})
}

// TestReturnAfterANameSaves types a file name into Mousepad's Save As and
// presses Return at once, as a script does: the dialog saves, since the
// key waits for the pause a person makes after typing, counted from when
// the application drew the name. The application may read the keys well
// after the compositor had them (a loaded machine); stopping it while the
// name is typed makes it that late every time, and a pause counted from
// the typing then ended before the toolkit had taken the name.
func TestReturnAfterANameSaves(t *testing.T) {
	for _, tt := range []struct {
		name string
		// late is how long the application is stopped from just before
		// the name is typed.
		late time.Duration
	}{
		{"at once", 0},
		{"the application reads the keys late", 600 * time.Millisecond},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, c := newSession(t)
			dir := t.TempDir()
			p, _ := launch(t, s, "mousepad", "--disable-server", filepath.Join(dir, "note.txt"))
			w := findWindow(t, c, desktop.WindowMatch{Class: "mousepad"})
			ctx := context.Background()
			if ok, err := c.WaitPainted(ctx, w, desktop.SettleOptions{Cap: 10 * time.Second}); !ok || err != nil {
				t.Fatalf("WaitPainted: %v %v", ok, err)
			}
			if err := c.TypeText(ctx, "hello"); err != nil {
				t.Fatal(err)
			}
			if err := c.PressKey(ctx, "ctrl+shift+s"); err != nil {
				t.Fatal(err)
			}
			d := findWindow(t, c, desktop.WindowMatch{Title: "Save As"})
			if ok, err := c.WaitPainted(ctx, d, desktop.SettleOptions{Cap: 10 * time.Second}); !ok || err != nil {
				t.Fatalf("WaitPainted: %v %v", ok, err)
			}
			if err := c.PressKey(ctx, "ctrl+a"); err != nil {
				t.Fatal(err)
			}
			if tt.late > 0 {
				if err := syscall.Kill(p.PID(), syscall.SIGSTOP); err != nil {
					t.Fatal(err)
				}
				// What the dialog drew before it stopped is on the screen
				// before the name is typed (the stopped dialog draws
				// nothing more), so the first drawing after is the name.
				if _, ok, err := c.WaitSettled(ctx, desktop.SettleOptions{Quiet: 300 * time.Millisecond, Cap: 10 * time.Second}); !ok || err != nil {
					t.Fatalf("the screen did not settle with the dialog stopped: %v %v", ok, err)
				}
				resume := time.AfterFunc(tt.late, func() { _ = syscall.Kill(p.PID(), syscall.SIGCONT) })
				t.Cleanup(func() { resume.Stop(); _ = syscall.Kill(p.PID(), syscall.SIGCONT) })
			}
			if err := c.TypeText(ctx, "greeting.txt"); err != nil {
				t.Fatal(err)
			}
			if err := c.PressKey(ctx, "Return"); err != nil {
				t.Fatal(err)
			}
			findWindow(t, c, desktop.WindowMatch{Title: "greeting.txt"})
			if _, err := os.Stat(filepath.Join(dir, "greeting.txt")); err != nil {
				t.Errorf("the file was not saved: %v", err)
			}
		})
	}
}

// TestCapturesLeaveOutThePointer clicks a still part of a window and
// moves the pointer a little within it: the captures after each are
// identical, as an X server's are, because the pointer's image is in
// neither, over the application's window or over the desktop.
func TestCapturesLeaveOutThePointer(t *testing.T) {
	s, c := newSession(t)
	launch(t, s, "zenity", "--info", "--title", "kasmrt-still", "--text", "Still")
	w := findWindow(t, c, desktop.WindowMatch{Title: "kasmrt-still"})
	ctx := context.Background()
	if ok, err := c.WaitPainted(ctx, w, desktop.SettleOptions{Cap: 10 * time.Second}); !ok || err != nil {
		t.Fatalf("WaitPainted: %v %v", ok, err)
	}
	settled := func() *image.RGBA {
		t.Helper()
		img, _, err := c.WaitSettled(ctx, desktop.SettleOptions{Quiet: 200 * time.Millisecond, Cap: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return img
	}
	sw, sh := c.ScreenSize()
	for _, tt := range []struct {
		name         string
		from, to     image.Point
		clickAtFirst bool
	}{
		// The window's padding, left of its icon: nothing there changes
		// under the pointer.
		{"window", image.Pt(w.X+4, w.Y+4), image.Pt(w.X+12, w.Y+10), true},
		{"desktop", image.Pt(sw/8, sh/8), image.Pt(sw/8+40, sh/8+30), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			if tt.clickAtFirst {
				err = c.Click(ctx, tt.from.X, tt.from.Y)
			} else {
				err = c.MovePointer(ctx, tt.from.X, tt.from.Y)
			}
			if err != nil {
				t.Fatal(err)
			}
			before := settled()
			if err := c.MovePointer(ctx, tt.to.X, tt.to.Y); err != nil {
				t.Fatal(err)
			}
			after := settled()
			if d := diffBounds(before, after); !d.Empty() {
				t.Errorf("the captures before and after the pointer moved from %v to %v differ in %v: the pointer's image is in them", tt.from, tt.to, d)
			}
		})
	}
}

// diffBounds is the smallest rectangle holding every pixel in which two
// captures of one size differ.
func diffBounds(a, b *image.RGBA) image.Rectangle {
	var d image.Rectangle
	r := a.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			i := a.PixOffset(x, y)
			if !bytes.Equal(a.Pix[i:i+4], b.Pix[i:i+4]) {
				d = d.Union(image.Rect(x, y, x+1, y+1))
			}
		}
	}
	return d
}

// TestMainLoopBusy reads a process's main thread: asleep (waiting, as an
// idle main loop does) is not busy, stopped is, and a process that cannot
// be read is taken for idle so the pause does not wait for nothing.
func TestMainLoopBusy(t *testing.T) {
	sleeper := exec.Command("sleep", "60")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() })
	pid := sleeper.Process.Pid
	// waitState waits until the kernel shows the main thread in state.
	waitState := func(state byte) {
		t.Helper()
		for {
			stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
			if err != nil {
				t.Fatal(err)
			}
			if i := bytes.LastIndexByte(stat, ')'); i > 0 && stat[i+2] == state {
				return
			}
			time.Sleep(time.Millisecond)
		}
	}
	waitState('S')
	if mainLoopBusy(pid) {
		t.Error("a sleeping process is busy")
	}
	if err := sleeper.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitState('T')
	if !mainLoopBusy(pid) {
		t.Error("a stopped process is not busy")
	}
	if mainLoopBusy(0) || mainLoopBusy(1<<22+1) {
		t.Error("a process that cannot be read is busy")
	}
}
