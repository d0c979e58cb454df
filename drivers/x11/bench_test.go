package x11

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/drivers/proc"
)

// benchDisplay starts a 1280x800 Xvfb showing a full xterm of text, so PNG
// encoding has realistic work, and returns the xterm's window.
func benchDisplay(b *testing.B) (*Server, *Conn, Window) {
	b.Helper()
	s, err := StartServer(context.Background(), DisplayOptions{})
	if err != nil {
		b.Fatalf("StartServer: %v", err)
	}
	b.Cleanup(func() { s.Close() })
	c, err := Dial(s.Display())
	if err != nil {
		b.Fatalf("Dial: %v", err)
	}
	b.Cleanup(func() { c.Close() })
	p, err := proc.Start(context.Background(), proc.Spec{
		Argv: []string{"xterm", "-class", "KasmBench", "-geometry", "200x60+0+0",
			"-e", "sh", "-c", "ls -l /usr/bin | head -58; exec sleep 1000"},
		Env: []string{"DISPLAY=" + s.Display()},
	})
	if err != nil {
		b.Fatalf("launch xterm: %v", err)
	}
	b.Cleanup(func() { p.Stop(time.Second) })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	w, err := c.FindWindow(ctx, WindowMatch{Class: "KasmBench"})
	if err != nil {
		b.Fatalf("FindWindow: %v", err)
	}
	if _, _, err := c.WaitSettled(ctx, SettleOptions{Interval: 100 * time.Millisecond, Cap: 3 * time.Second}); err != nil {
		b.Fatal(err)
	}
	return s, c, w
}

// timed runs op b.N times and reports the median as ms/median alongside
// Go's mean.
func timed(b *testing.B, op func(i int) error) {
	b.Helper()
	durs := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if err := op(i); err != nil {
			b.Fatal(err)
		}
		durs = append(durs, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(durs)
	b.ReportMetric(float64(durs[len(durs)/2].Microseconds())/1000, "ms/median")
}

func needTool(b *testing.B, name string) {
	b.Helper()
	if _, err := exec.LookPath(name); err != nil {
		b.Skipf("%s is not installed (scripts/bench-x11.sh installs it)", name)
	}
}

// BenchmarkCapturePNG measures a screen capture written to disk as PNG:
// kasmrt's in-process path against a scrot process per capture.
func BenchmarkCapturePNG(b *testing.B) {
	s, c, _ := benchDisplay(b)
	dir := b.TempDir()
	b.Run("xgb", func(b *testing.B) {
		timed(b, func(i int) error {
			img, err := c.Capture(context.Background())
			if err != nil {
				return err
			}
			f, err := os.Create(filepath.Join(dir, fmt.Sprintf("xgb-%04d.png", i%100)))
			if err != nil {
				return err
			}
			if err := EncodePNG(f, img); err != nil {
				f.Close()
				return err
			}
			return f.Close()
		})
	})
	b.Run("scrot", func(b *testing.B) {
		needTool(b, "scrot")
		timed(b, func(i int) error {
			return scrot(s.Display(), filepath.Join(dir, fmt.Sprintf("scrot-%04d.png", i%100)))
		})
	})
}

// BenchmarkCaptureRaw isolates the capture from the encoding: through
// MIT-SHM and through core GetImage, each into a fresh RGBA image as
// Capture returns it.
func BenchmarkCaptureRaw(b *testing.B) {
	_, c, _ := benchDisplay(b)
	if c.CaptureMethod() != "MIT-SHM" {
		b.Fatalf("the server did not attach the MIT-SHM segment")
	}
	b.Run("shm", func(b *testing.B) {
		timed(b, func(int) error {
			_, err := c.Capture(context.Background())
			return err
		})
	})
	b.Run("getimage", func(b *testing.B) {
		timed(b, func(int) error {
			return c.captureGetImage(image.NewRGBA(image.Rect(0, 0, c.width, c.height)))
		})
	})
}

// BenchmarkKeySettled measures a key press in xterm (the terminal echoes
// it) until the screen has settled, with the engine's default settle
// options: from DAMAGE reports, and by comparing captures 60 ms apart.
func BenchmarkKeySettled(b *testing.B) {
	_, c, w := benchDisplay(b)
	if err := c.Focus(w); err != nil {
		b.Fatal(err)
	}
	for _, m := range []struct {
		name string
		opts SettleOptions
	}{
		{"damage", SettleOptions{Quiet: 30 * time.Millisecond, Response: 300 * time.Millisecond, Cap: 2 * time.Second}},
		{"compare", SettleOptions{Interval: 60 * time.Millisecond, Cap: 2 * time.Second, Compare: true}},
	} {
		b.Run(m.name, func(b *testing.B) {
			timed(b, func(i int) error {
				key := "a"
				if i%40 == 39 {
					key = "Return"
				}
				if err := c.PressKey(context.Background(), key); err != nil {
					return err
				}
				_, settled, err := c.WaitSettled(context.Background(), m.opts)
				if err == nil && !settled {
					err = fmt.Errorf("screen did not settle")
				}
				return err
			})
		})
	}
}

func scrot(display, path string) error {
	cmd := exec.Command("scrot", "--overwrite", "--silent", path)
	cmd.Env = append(os.Environ(), "DISPLAY="+display)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("scrot: %w: %s", err, out)
	}
	return nil
}

func xdotool(display string, args ...string) error {
	cmd := exec.Command("xdotool", args...)
	cmd.Env = append(os.Environ(), "DISPLAY="+display)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("xdotool: %w: %s", err, out)
	}
	return nil
}

// BenchmarkClick measures one click on the xterm: XTEST on the open
// connection against an xdotool process.
func BenchmarkClick(b *testing.B) {
	s, c, w := benchDisplay(b)
	x, y := w.Center()
	b.Run("xtest", func(b *testing.B) {
		timed(b, func(int) error { return c.Click(context.Background(), x, y) })
	})
	b.Run("xdotool", func(b *testing.B) {
		needTool(b, "xdotool")
		timed(b, func(int) error {
			return xdotool(s.Display(), "mousemove", fmt.Sprint(x), fmt.Sprint(y), "click", "1")
		})
	})
}

// settleInterval is the pause between the captures compared for settling,
// the same for both methods.
const settleInterval = 50 * time.Millisecond

// BenchmarkClickSettled measures a click until the screen has settled (two
// identical captures settleInterval apart): XTEST + WaitSettled against
// xdotool + a scrot per capture, compared as files.
func BenchmarkClickSettled(b *testing.B) {
	s, c, w := benchDisplay(b)
	x, y := w.Center()
	b.Run("xtest+xgb", func(b *testing.B) {
		timed(b, func(int) error {
			if err := c.Click(context.Background(), x, y); err != nil {
				return err
			}
			_, settled, err := c.WaitSettled(context.Background(), SettleOptions{Interval: settleInterval, Cap: 5 * time.Second})
			if err == nil && !settled {
				err = fmt.Errorf("screen did not settle")
			}
			return err
		})
	})
	b.Run("xdotool+scrot", func(b *testing.B) {
		needTool(b, "xdotool")
		needTool(b, "scrot")
		dir := b.TempDir()
		timed(b, func(int) error {
			if err := xdotool(s.Display(), "mousemove", fmt.Sprint(x), fmt.Sprint(y), "click", "1"); err != nil {
				return err
			}
			var prev []byte
			deadline := time.Now().Add(5 * time.Second)
			for n := 0; time.Now().Before(deadline); n++ {
				if n > 0 {
					time.Sleep(settleInterval)
				}
				path := filepath.Join(dir, fmt.Sprintf("s%d.png", n%2))
				if err := scrot(s.Display(), path); err != nil {
					return err
				}
				cur, err := os.ReadFile(path)
				if err != nil {
					return err
				}
				if prev != nil && bytes.Equal(prev, cur) {
					return nil
				}
				prev = cur
			}
			return fmt.Errorf("screen did not settle")
		})
	})
}

// BenchmarkStartSession measures an embedded session's start and stop,
// bare and with the window manager (until it manages windows).
func BenchmarkStartSession(b *testing.B) {
	for _, wm := range []string{WindowManagerNone, WindowManagerOpenbox} {
		b.Run(wm, func(b *testing.B) {
			needTool(b, "Xvfb")
			if wm == WindowManagerOpenbox {
				needTool(b, "openbox")
			}
			timed(b, func(int) error {
				s, err := StartServer(context.Background(), DisplayOptions{WindowManager: wm})
				if err != nil {
					return err
				}
				return s.Close()
			})
		})
	}
}

// BenchmarkCaptureAlloc isolates what Capture's fresh image costs: the
// same MIT-SHM capture into a new RGBA image each time (Capture) and into
// one image kept between captures.
func BenchmarkCaptureAlloc(b *testing.B) {
	_, c, _ := benchDisplay(b)
	if c.CaptureMethod() != "MIT-SHM" {
		b.Fatalf("the server did not attach the MIT-SHM segment")
	}
	b.Run("fresh", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.Capture(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("kept", func(b *testing.B) {
		img := image.NewRGBA(image.Rect(0, 0, c.width, c.height))
		b.ReportAllocs()
		for b.Loop() {
			if err := c.captureInto(img); err != nil {
				b.Fatal(err)
			}
		}
	})
}
