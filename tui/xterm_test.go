package tui

import (
	"context"
	"image"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/drivers/proc"
	"github.com/kasmrt/kasmrt/drivers/x11"
	"github.com/kasmrt/kasmrt/internal/testkit"
)

// sixelXterm is kasmrt replay --graphics sixel of a sample report in a
// real xterm with sixel graphics (VT340 emulation) on its own Xvfb, and
// the runtime's X11 connection that captures what it shows.
type sixelXterm struct {
	ctx     context.Context
	display string
	conn    *x11.Conn
	// out is what xterm printed and replayErr the replay's stderr, for a
	// failure to show why nothing was drawn.
	out       *proc.Tail
	replayErr string
}

// startSixelXterm starts the replay in an xterm of geometry (cols×rows,
// in cells of the 6×13 "fixed" font) and class; everything it starts
// ends with the test.
func startSixelXterm(t *testing.T, geometry, class string) *sixelXterm {
	t.Helper()
	testkit.Need(t, "Xvfb", "xterm")
	bin := kasmrt.Path(t)
	dir := t.TempDir()
	writeReport(t, dir, sampleEvents(), true)

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	sess, err := x11.StartServer(ctx, x11.DisplayOptions{Width: 1024, Height: 768})
	if err != nil {
		t.Fatalf("start Xvfb: %v", err)
	}
	t.Cleanup(func() { sess.Close() })
	conn, err := x11.Dial(sess.Display())
	if err != nil {
		t.Fatalf("dial X: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	// The replay's stderr goes to a file (its screen is the terminal), so
	// a failure can say why it drew nothing.
	replayErr := filepath.Join(t.TempDir(), "replay.stderr")
	xt := exec.CommandContext(ctx, "xterm", "-display", sess.Display(), "-ti", "vt340",
		"-xrm", "XTerm*decTerminalID: vt340", "-xrm", "XTerm*numColorRegisters: 256",
		"-xrm", "XTerm*sixelScrolling: true", "-class", class,
		"-geometry", geometry, "-fn", "fixed",
		"-e", "sh", "-c", `"$0" "$@" 2>"$KASM_REPLAY_STDERR"; echo "replay exited $?" >>"$KASM_REPLAY_STDERR"`, bin, "replay", dir, "--graphics", "sixel")
	xt.Env = append(os.Environ(), "TERM=xterm", "NO_COLOR=", "KASM_REPLAY_STDERR="+replayErr)
	out := proc.NewTail(8 << 10)
	xt.Stdout, xt.Stderr = out, out
	if err := xt.Start(); err != nil {
		t.Fatalf("start xterm: %v", err)
	}
	t.Cleanup(func() { _ = xt.Process.Kill(); _ = xt.Wait() })
	return &sixelXterm{ctx: ctx, display: sess.Display(), conn: conn, out: out, replayErr: replayErr}
}

// waitImage waits until the screen region r shows at least want distinct
// colours: a line of text shows two or three (the "fixed" font is not
// antialiased), an image far more.
func (x *sixelXterm) waitImage(t *testing.T, what string, r image.Rectangle, want int) {
	t.Helper()
	var colours int
	deadline := time.Now().Add(testkit.ScreenWait)
	for time.Now().Before(deadline) {
		img, err := x.conn.Capture(x.ctx)
		if err != nil {
			t.Fatalf("capture: %v", err)
		}
		if colours = distinctColours(img, r); colours >= want {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	replayErr, _ := os.ReadFile(x.replayErr)
	t.Fatalf("%s: %v shows %d distinct colours, want an image (≥ %d)\nxterm printed:\n%s\nthe replay's stderr:\n%s",
		what, r, colours, want, x.out, replayErr)
}

func distinctColours(img *image.RGBA, r image.Rectangle) int {
	seen := map[[3]uint8]bool{}
	r = r.Intersect(img.Bounds())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			i := img.PixOffset(x, y)
			seen[[3]uint8{img.Pix[i], img.Pix[i+1], img.Pix[i+2]}] = true
		}
	}
	return len(seen)
}
