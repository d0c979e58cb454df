package x11

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/drivers/proc"
	"github.com/kasmrt/kasmrt/internal/testkit"
)

// newDisplay starts a private Xvfb for one test (they start in ~60 ms, and a
// private server keeps focus and pointer state out of other tests) and
// dials it.
func newDisplay(t *testing.T) (*Server, *Conn) {
	t.Helper()
	testkit.Need(t, "Xvfb")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	s, err := StartServer(ctx, DisplayOptions{})
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

// launch starts an X client on display and stops it when the test ends.
func launch(t *testing.T, display string, argv ...string) (*proc.Process, *lockedBuffer) {
	t.Helper()
	testkit.Need(t, argv[0])
	out := &lockedBuffer{}
	p, err := proc.Start(context.Background(), proc.Spec{
		Argv:   argv,
		Env:    []string{"DISPLAY=" + display, "LC_ALL=C.UTF-8"},
		Output: out,
	})
	if err != nil {
		t.Fatalf("launch: %v", err)
	}
	t.Cleanup(func() { p.Stop(time.Second) })
	return p, out
}

func findWindow(t *testing.T, c *Conn, m WindowMatch) Window {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	w, err := c.FindWindow(ctx, m)
	if err != nil {
		t.Fatalf("FindWindow: %v", err)
	}
	return w
}

// eventually polls cond for up to 10 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestServerStartClose(t *testing.T) {
	t.Parallel()
	s, c := newDisplay(t)
	if !s.Owned() || !strings.HasPrefix(s.Display(), ":") {
		t.Fatalf("Owned %v Display %q", s.Owned(), s.Display())
	}
	if w, h := c.ScreenSize(); w != 1280 || h != 800 {
		t.Errorf("screen %dx%d, want 1280x800", w, h)
	}
	pid := s.cmd.Process.Pid
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	select {
	case <-s.Done():
	default:
		t.Error("Done not closed after Close")
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("Xvfb pid %d still exists after Close (kill 0: %v)", pid, err)
	}
}

func TestServerSize(t *testing.T) {
	t.Parallel()
	testkit.Need(t, "Xvfb")
	s, err := StartServer(context.Background(), DisplayOptions{Width: 640, Height: 480, Depth: 24})
	if err != nil {
		t.Fatalf("StartServer: %v", err)
	}
	defer s.Close()
	c, err := Dial(s.Display())
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer c.Close()
	img, err := c.Capture(context.Background())
	if err != nil {
		t.Fatalf("Capture: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 640 || b.Dy() != 480 {
		t.Errorf("capture %v, want 640x480", b)
	}
}

func TestServerBorrow(t *testing.T) {
	t.Parallel()
	owner, _ := newDisplay(t)
	borrowed, err := StartServer(context.Background(), DisplayOptions{Display: owner.Display()})
	if err != nil {
		t.Fatalf("borrow: %v", err)
	}
	if borrowed.Owned() || borrowed.Display() != owner.Display() {
		t.Errorf("borrowed session Owned %v Display %q", borrowed.Owned(), borrowed.Display())
	}
	if err := borrowed.Close(); err != nil {
		t.Fatalf("Close borrowed: %v", err)
	}
	c, err := Dial(owner.Display())
	if err != nil {
		t.Fatalf("display gone after closing a borrowed session: %v", err)
	}
	c.Close()

	// A borrowed session notices the server dying.
	again, err := StartServer(context.Background(), DisplayOptions{Display: owner.Display()})
	if err != nil {
		t.Fatalf("borrow again: %v", err)
	}
	defer again.Close()
	owner.Close()
	select {
	case <-again.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("borrowed session did not notice its server dying")
	}
}

func TestServerBorrowMissingDisplay(t *testing.T) {
	t.Parallel()
	_, err := StartServer(context.Background(), DisplayOptions{Display: ":7311"})
	if err == nil || !strings.Contains(err.Error(), ":7311") {
		t.Fatalf("error %v, want one naming the display", err)
	}
}

func TestCaptureContent(t *testing.T) {
	t.Parallel()
	s, c := newDisplay(t)
	launch(t, s.Display(), "xterm", "-bg", "red", "-fg", "red", "-geometry", "40x10+100+50", "-class", "KasmRed")
	w := findWindow(t, c, WindowMatch{Class: "KasmRed"})
	red := color.RGBA{255, 0, 0, 255}
	inside := func() (color.RGBA, color.RGBA) {
		img, err := c.Capture(context.Background())
		if err != nil {
			t.Fatalf("Capture: %v", err)
		}
		if b := img.Bounds(); b.Dx() != 1280 || b.Dy() != 800 {
			t.Fatalf("capture %v, want 1280x800", b)
		}
		return img.RGBAAt(w.X+w.Width-3, w.Y+w.Height-3), img.RGBAAt(1279, 799)
	}
	eventually(t, "the red xterm to be drawn", func() bool { in, _ := inside(); return in == red })
	if _, out := inside(); out == red {
		t.Errorf("pixel outside the window is red too")
	}
}

func TestFindWindow(t *testing.T) {
	t.Parallel()
	s, c := newDisplay(t)
	p, _ := launch(t, s.Display(), "xterm", "-class", "KasmTest", "-T", "kasm title", "-geometry", "40x10+20+30")
	tests := []struct {
		name string
		m    WindowMatch
	}{
		{"pid", WindowMatch{PID: p.PID()}},
		{"class", WindowMatch{Class: "KasmTest"}},
		{"class any case", WindowMatch{Class: "kasmtest"}},
		{"title substring", WindowMatch{Title: "asm ti"}},
		{"all", WindowMatch{PID: p.PID(), Class: "KasmTest", Title: "kasm title"}},
	}
	for _, tt := range tests {
		w := findWindow(t, c, tt.m)
		if w.Class != "KasmTest" || w.Title != "kasm title" || w.PID != p.PID() || !w.Viewable {
			t.Errorf("%s: got %+v", tt.name, w)
		}
		// Geometry is the inside of the window, so xterm's 1-pixel border
		// puts it one pixel in from the requested position.
		if w.X != 21 || w.Y != 31 || w.Width < 100 || w.Height < 50 {
			t.Errorf("%s: geometry %d,%d %dx%d, want inside a border at 20,30", tt.name, w.X, w.Y, w.Width, w.Height)
		}
	}

	got, err := c.Window(findWindow(t, c, WindowMatch{Class: "KasmTest"}).ID)
	if err != nil || got.Title != "kasm title" {
		t.Fatalf("Window: %+v %v", got, err)
	}
	p.Stop(time.Second)
	eventually(t, "the window to be destroyed", func() bool {
		_, err := c.Window(got.ID)
		return errors.Is(err, ErrWindowGone)
	})
}

// A wrapper shell's PID finds the window of the program it started.
func TestFindWindowByAncestorPID(t *testing.T) {
	t.Parallel()
	s, c := newDisplay(t)
	p, _ := launch(t, s.Display(), "sh", "-c", "xterm -class KasmChild; true")
	w := findWindow(t, c, WindowMatch{PID: p.PID()})
	if w.Class != "KasmChild" || w.PID == p.PID() {
		t.Errorf("got %+v", w)
	}
}

func TestFindWindowTimeout(t *testing.T) {
	t.Parallel()
	_, c := newDisplay(t)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := c.FindWindow(ctx, WindowMatch{Class: "NeverThere"})
	if !errors.Is(err, ErrNoWindow) || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "NeverThere") {
		t.Fatalf("error %v, want ErrNoWindow naming the class", err)
	}
}

func TestTypeTextReachesApp(t *testing.T) {
	t.Parallel()
	s, c := newDisplay(t)
	file := filepath.Join(t.TempDir(), "typed")
	launch(t, s.Display(), "xterm", "-u8", "-class", "KasmType", "-e", "sh", "-c", `read line; printf %s "$line" > `+file)
	w := findWindow(t, c, WindowMatch{Class: "KasmType"})
	if err := c.Focus(w); err != nil {
		t.Fatalf("Focus: %v", err)
	}
	// xterm starts reading keys once its shell is running; a screen that
	// stopped changing is the observable sign.
	if _, _, err := c.WaitSettled(context.Background(), SettleOptions{Interval: 50 * time.Millisecond, Cap: 2 * time.Second}); err != nil {
		t.Fatal(err)
	}
	const text = "hello World!~ é€"
	if err := c.TypeText(context.Background(), text); err != nil {
		t.Fatalf("TypeText: %v", err)
	}
	if err := c.PressKey(context.Background(), "Return"); err != nil {
		t.Fatalf("PressKey: %v", err)
	}
	var got []byte
	eventually(t, "the typed line in the file", func() bool {
		got, _ = os.ReadFile(file)
		return len(got) > 0
	})
	if string(got) != text {
		t.Errorf("app received %q, want %q", got, text)
	}
}

// xev prints the events it receives, so it shows exactly what arrived.
func TestClickAndChordsReachApp(t *testing.T) {
	t.Parallel()
	s, c := newDisplay(t)
	_, out := launch(t, s.Display(), "xev", "-geometry", "200x200+40+60", "-name", "kasmxev", "-event", "button", "-event", "keyboard")
	// xev sets only WM_NAME: no WM_CLASS and no _NET_WM_PID.
	w := findWindow(t, c, WindowMatch{Title: "kasmxev"})
	if err := c.Focus(w); err != nil {
		t.Fatalf("Focus: %v", err)
	}
	x, y := w.Center()
	ctx := context.Background()
	if err := c.ClickButton(ctx, x, y, 3); err != nil {
		t.Fatalf("Click: %v", err)
	}
	eventually(t, "xev to report the click", func() bool { return strings.Contains(out.String(), "ButtonRelease") })
	if want := "button 3"; !strings.Contains(out.String(), want) {
		t.Errorf("xev output lacks %q:\n%s", want, out.String())
	}
	// The click lands in the middle of the window's inside.
	if want := fmt.Sprintf("(100,100), root:(%d,%d)", x, y); !strings.Contains(out.String(), want) {
		t.Errorf("xev output lacks %q:\n%s", want, out.String())
	}

	// state is the modifier mask at the key press: 0x4 Control, 0x1 Shift,
	// 0x8 Mod1 (Alt), 0x40 Mod4 (Super).
	chords := []struct{ chord, want string }{
		{"ctrl+l", "state 0x4, keycode 46 (keysym 0x6c, l)"},
		{"shift+Tab", "state 0x1, keycode 23 (keysym 0xfe20, ISO_Left_Tab)"},
		{"alt+F4", "state 0x8, keycode 70 (keysym 0xffc1, F4)"},
		{"super+a", "state 0x40, keycode 38 (keysym 0x61, a)"},
		{"A", "state 0x1, keycode 38 (keysym 0x41, A)"},
		{"ESCAPE", "keysym 0xff1b, Escape"},
	}
	for _, ch := range chords {
		if err := c.PressKey(ctx, ch.chord); err != nil {
			t.Fatalf("PressKey(%q): %v", ch.chord, err)
		}
		eventually(t, ch.chord+" to reach xev", func() bool { return strings.Contains(out.String(), ch.want) })
	}
}

func TestPressKeyUnknown(t *testing.T) {
	t.Parallel()
	_, c := newDisplay(t)
	for _, chord := range []string{"NoSuchKey", "ctrl+Nope", "hyper+a", ""} {
		err := c.PressKey(context.Background(), chord)
		var uk *UnknownKeyError
		if !errors.As(err, &uk) || !errors.Is(err, ErrUnknownKey) {
			t.Errorf("PressKey(%q) = %v, want *UnknownKeyError", chord, err)
		}
	}
}

// A key the layout does not map is refused, not bound to a spare keycode,
// even after TypeText bound the same character for typing.
func TestPressKeyNotOnLayout(t *testing.T) {
	t.Parallel()
	_, c := newDisplay(t)
	for _, chord := range []string{"€", "ctrl+EuroSign", "€", "eacute"} {
		err := c.PressKey(context.Background(), chord)
		var nl *KeyNotOnLayoutError
		if !errors.As(err, &nl) || !errors.Is(err, ErrKeyNotOnLayout) || !strings.Contains(err.Error(), nl.Key) {
			t.Errorf("PressKey(%q) = %v, want *KeyNotOnLayoutError naming the key", chord, err)
		}
		if chord == "€" {
			if err := c.TypeText(context.Background(), "€"); err != nil {
				t.Fatalf("TypeText: %v", err)
			}
		}
	}
	if err := c.PressKey(context.Background(), "ctrl+a"); err != nil {
		t.Errorf("PressKey(ctrl+a) = %v on a US layout", err)
	}
}

func TestWaitSettled(t *testing.T) {
	t.Parallel()
	// Compare: these cover the comparison DAMAGE falls back to.
	opts := SettleOptions{Interval: 50 * time.Millisecond, Cap: 1500 * time.Millisecond, Compare: true}
	t.Run("static", func(t *testing.T) {
		t.Parallel()
		_, c := newDisplay(t)
		img, settled, err := c.WaitSettled(context.Background(), opts)
		if err != nil || !settled || img == nil {
			t.Fatalf("settled %v err %v on an empty screen", settled, err)
		}
	})
	t.Run("changing", func(t *testing.T) {
		t.Parallel()
		s, c := newDisplay(t)
		// A screen drawn every 5 ms: a terminal printing as fast as it can
		// pauses for tens of milliseconds on a loaded machine.
		log := drawEvery(t, s.Display(), 5*time.Millisecond)
		neverSettles(t, c, log, opts, opts.Interval)
	})
}

func TestSessionDoneWhenServerDies(t *testing.T) {
	t.Parallel()
	s, _ := newDisplay(t)
	if err := syscall.Kill(s.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("Done not closed after Xvfb was killed")
	}
}

// Keycodes bound for characters the keymap lacks are given back on Close.
func TestScratchKeycodesRestored(t *testing.T) {
	t.Parallel()
	s, c := newDisplay(t)
	const euro = 0x010020ac
	if err := c.TypeText(context.Background(), "€"); err != nil {
		t.Fatalf("TypeText: %v", err)
	}
	km, err := c.readKeymap()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := km.lookup(euro); !ok {
		t.Fatal("€ not bound while the connection is open")
	}
	c.Close()
	other, err := Dial(s.Display())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	km, err = other.readKeymap()
	if err != nil {
		t.Fatal(err)
	}
	if code, _, ok := km.lookup(euro); ok {
		t.Errorf("€ still bound to keycode %d after Close", code)
	}
}
