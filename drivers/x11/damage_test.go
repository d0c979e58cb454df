package x11

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/kasmrt/kasmrt/drivers/proc"
	"github.com/kasmrt/kasmrt/internal/lateapp"
)

// lateAppDelay is set in the environment of a test binary run as the late
// app: how long it waits after a key before drawing.
const lateAppDelay = "KASM_LATE_APP_DELAY"

// TestLateAppHelper is the late-drawing X client when the test binary runs
// as one (see startLateApp).
func TestLateAppHelper(t *testing.T) {
	delay := os.Getenv(lateAppDelay)
	if delay == "" {
		t.Skip("runs only as the late app's child process")
	}
	d, err := time.ParseDuration(delay)
	if err != nil {
		t.Fatal(err)
	}
	if err := lateapp.Run(os.Getenv("DISPLAY"), d); err != nil {
		t.Fatal(err)
	}
}

// startLateApp runs the late app on s and returns its window, focused
// and painted white.
func startLateApp(t *testing.T, s *Server, c *Conn, delay time.Duration) Window {
	t.Helper()
	p, err := proc.Start(context.Background(), proc.Spec{
		Argv: []string{os.Args[0], "-test.run=^TestLateAppHelper$"},
		Env:  []string{"DISPLAY=" + s.Display(), lateAppDelay + "=" + delay.String()},
	})
	if err != nil {
		t.Fatalf("launch the late app: %v", err)
	}
	t.Cleanup(func() { p.Stop(time.Second) })
	w := findWindow(t, c, WindowMatch{Class: lateapp.Class})
	if err := c.Focus(w); err != nil {
		t.Fatalf("Focus: %v", err)
	}
	eventually(t, "the late app's white window", func() bool {
		return pixelAt(t, c, w) == white
	})
	return w
}

var (
	white = color.RGBA{255, 255, 255, 255}
	black = color.RGBA{0, 0, 0, 255}
)

func pixelAt(t *testing.T, c *Conn, w Window) color.RGBA {
	t.Helper()
	img, err := c.Capture(context.Background())
	if err != nil {
		t.Fatalf("Capture: %v", err)
	}
	return img.RGBAAt(w.X+w.Width/2, w.Y+w.Height/2)
}

// TestServerOffersSHMAndDamage pins what the embedded Xvfb offers, so the
// fast paths are the ones the other tests exercise.
func TestServerOffersSHMAndDamage(t *testing.T) {
	t.Parallel()
	_, c := newDisplay(t)
	if got := c.CaptureMethod(); got != "MIT-SHM" {
		t.Errorf("CaptureMethod = %q, want MIT-SHM", got)
	}
	if got := c.SettleMethod(); got != "DAMAGE" {
		t.Errorf("SettleMethod = %q, want DAMAGE", got)
	}
}

// TestCaptureSHMMatchesGetImage checks that both ways of reading the
// screen give the same pixels.
func TestCaptureSHMMatchesGetImage(t *testing.T) {
	t.Parallel()
	s, c := newDisplay(t)
	launch(t, s.Display(), "xterm", "-geometry", "80x24+10+10", "-class", "KasmShm", "-e", "sh", "-c", "ls -l /usr/bin | head -20; exec sleep 100")
	findWindow(t, c, WindowMatch{Class: "KasmShm"})
	if _, settled, err := c.WaitSettled(context.Background(), SettleOptions{Interval: 100 * time.Millisecond, Cap: 5 * time.Second, Compare: true}); err != nil || !settled {
		t.Fatalf("settle: %v %v", settled, err)
	}
	viaSHM, err := c.Capture(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	viaCore := image.NewRGBA(viaSHM.Rect)
	if err := c.captureGetImage(viaCore); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(viaSHM.Pix, viaCore.Pix) {
		t.Fatal("MIT-SHM and GetImage captures differ")
	}
	if blank(viaSHM.Pix) {
		t.Fatal("the capture is blank")
	}
}

// TestSettleWaitsForLateDrawing presses a key in an app that draws 200 ms
// later: settling after an action must capture the new drawing, not the
// screen before it.
func TestSettleWaitsForLateDrawing(t *testing.T) {
	t.Parallel()
	s, c := newDisplay(t)
	w := startLateApp(t, s, c, 200*time.Millisecond)
	if err := c.PressKey(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	img, settled, err := c.WaitSettled(context.Background(), SettleOptions{
		Cap: 2 * time.Second, Quiet: 30 * time.Millisecond, Response: 500 * time.Millisecond,
	})
	if err != nil || !settled {
		t.Fatalf("WaitSettled: settled %v, %v", settled, err)
	}
	if got := img.RGBAAt(w.X+w.Width/2, w.Y+w.Height/2); got != black {
		t.Fatalf("captured %v before the app drew, want black", got)
	}
}

// TestSettleByDamage covers the quiet-screen rule: a still screen settles
// without waiting for a change when none is asked for, an unchanged screen
// after an action settles once Response has passed, and a screen that
// keeps changing does not settle before the cap.
func TestSettleByDamage(t *testing.T) {
	t.Parallel()
	t.Run("still", func(t *testing.T) {
		t.Parallel()
		_, c := newDisplay(t)
		start := time.Now()
		_, settled, err := c.WaitSettled(context.Background(), SettleOptions{Cap: 2 * time.Second})
		if err != nil || !settled {
			t.Fatalf("settled %v, %v", settled, err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("a still screen took %v to settle", d)
		}
	})
	t.Run("no change after an action", func(t *testing.T) {
		t.Parallel()
		_, c := newDisplay(t)
		// A new server draws its root window once; let that pass.
		if _, _, err := c.WaitSettled(context.Background(), SettleOptions{Cap: 2 * time.Second}); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, settled, err := c.WaitSettled(context.Background(), SettleOptions{Cap: 2 * time.Second, Response: 300 * time.Millisecond})
		if err != nil || !settled {
			t.Fatalf("settled %v, %v", settled, err)
		}
		if d := time.Since(start); d < 300*time.Millisecond {
			t.Errorf("settled after %v, before the response window ended", d)
		}
	})
	t.Run("always changing", func(t *testing.T) {
		t.Parallel()
		s, c := newDisplay(t)
		log := drawEvery(t, s.Display(), 5*time.Millisecond)
		neverSettles(t, c, log, SettleOptions{Cap: time.Second, Quiet: 150 * time.Millisecond}, 150*time.Millisecond)
	})
}

// TestSettleByDamageIgnoring covers waits that ignore part of the
// screen's drawing, and waits whose action's drawing may already have
// been reported: a rectangle drawn inside the ignored part, however
// often, does not keep the screen from settling, one drawn partly outside
// it does; and drawing reported after Since is the response, so the wait
// is quiet for Quiet after it rather than for Response after the wait
// began.
func TestSettleByDamageIgnoring(t *testing.T) {
	t.Parallel()
	// drawEvery draws at (600,400)-(650,450).
	t.Run("drawing ignored", func(t *testing.T) {
		t.Parallel()
		s, c := newDisplay(t)
		drawEvery(t, s.Display(), 5*time.Millisecond)
		drawingBegun(t, c)
		// Settling before the cap is the claim: drawing outside the
		// ignored part would hold it off for the whole cap.
		_, settled, err := c.WaitSettled(context.Background(), SettleOptions{
			Cap: 5 * time.Second, Quiet: 150 * time.Millisecond, Ignore: image.Rect(550, 350, 700, 500)})
		if err != nil || !settled {
			t.Fatalf("settled %v, %v with the drawing inside the ignored part", settled, err)
		}
	})
	t.Run("drawing partly outside", func(t *testing.T) {
		t.Parallel()
		s, c := newDisplay(t)
		log := drawEvery(t, s.Display(), 5*time.Millisecond)
		drawingBegun(t, c)
		neverSettles(t, c, log, SettleOptions{Cap: time.Second, Quiet: 150 * time.Millisecond, Ignore: image.Rect(550, 350, 640, 500)}, 150*time.Millisecond)
	})
	t.Run("drawn since", func(t *testing.T) {
		t.Parallel()
		s, c := newDisplay(t)
		if _, _, err := c.WaitSettled(context.Background(), SettleOptions{Cap: 2 * time.Second}); err != nil {
			t.Fatal(err)
		}
		since := time.Now()
		drawOnce(t, s.Display(), xproto.Rectangle{X: 10, Y: 10, Width: 40, Height: 40})
		// The report arrives on the watching connection a moment after
		// the drawing; wait for it, then ask.
		eventually(t, "the drawing's report", func() bool {
			last, err := c.damage.lastOutside(image.Rectangle{})
			return err == nil && last.After(since)
		})
		start := time.Now()
		img, settled, err := c.WaitSettled(context.Background(), SettleOptions{
			Cap: 2 * time.Second, Quiet: 50 * time.Millisecond, Response: time.Second,
			Since: since, Ignore: image.Rect(500, 0, 600, 100)})
		if err != nil || !settled {
			t.Fatalf("settled %v, %v", settled, err)
		}
		if d := time.Since(start); d >= 500*time.Millisecond {
			t.Errorf("took %v: waited for a response already drawn", d)
		}
		if got := img.RGBAAt(20, 20); got != white {
			t.Errorf("captured %v, want the white rectangle drawn", got)
		}
	})
}

// drawingBegun waits for the first report of drawEvery's drawing, so a
// settle wait asked afterwards sees a screen already being drawn on, not
// one still quiet because the drawing has yet to start (a loaded machine
// starts it late).
func drawingBegun(t *testing.T, c *Conn) {
	t.Helper()
	since := time.Now()
	eventually(t, "the drawing's first report", func() bool {
		last, err := c.damage.lastOutside(image.Rectangle{})
		return err == nil && last.After(since)
	})
}

// drawOnce fills r of the root window in white from a connection of its
// own, and returns once the server has done it.
func drawOnce(t *testing.T, display string, r xproto.Rectangle) {
	t.Helper()
	x, err := xgb.NewConnDisplay(display)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	screen := xproto.Setup(x).DefaultScreen(x)
	gc, err := xproto.NewGcontextId(x)
	if err != nil {
		t.Fatal(err)
	}
	xproto.CreateGC(x, gc, xproto.Drawable(screen.Root), xproto.GcForeground, []uint32{0xffffff})
	xproto.PolyFillRectangle(x, xproto.Drawable(screen.Root), gc, []xproto.Rectangle{r})
	if _, err := xproto.GetInputFocus(x).Reply(); err != nil {
		t.Fatal(err)
	}
}

// drawEvery fills a rectangle of the root window in alternating colours
// every period from a connection of its own, until the test ends.
func drawEvery(t *testing.T, display string, period time.Duration) *drawLog {
	t.Helper()
	x, err := xgb.NewConnDisplay(display)
	if err != nil {
		t.Fatal(err)
	}
	screen := xproto.Setup(x).DefaultScreen(x)
	gc, err := xproto.NewGcontextId(x)
	if err != nil {
		t.Fatal(err)
	}
	xproto.CreateGC(x, gc, xproto.Drawable(screen.Root), 0, nil)
	log := &drawLog{}
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(period)
		defer tick.Stop()
		for i := uint32(0); ; i++ {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			sent := time.Now()
			xproto.ChangeGC(x, gc, xproto.GcForeground, []uint32{i * 0x010203 & 0xffffff})
			xproto.PolyFillRectangle(x, xproto.Drawable(screen.Root), gc, []xproto.Rectangle{{X: 600, Y: 400, Width: 50, Height: 50}})
			xproto.GetInputFocus(x).Reply()
			log.drew(sent, time.Now())
		}
	}()
	t.Cleanup(func() { close(done); <-stopped; x.Close() })
	return log
}

// drawLog records when each of drawEvery's drawings was sent and when the
// server had done it, so a test can tell a settle the drawing never
// allowed from one a loaded machine allowed by stalling the drawer. The
// server drew each somewhere between the two times.
type drawLog struct {
	mu    sync.Mutex
	draws []drawing
}

type drawing struct{ sent, done time.Time }

func (l *drawLog) drew(sent, done time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.draws = append(l.draws, drawing{sent, done})
}

// stalled reports whether the server may have drawn nothing for quiet or
// longer between from and to: it counts a gap from a drawing's sending to
// the next one's completion, the longest the server's own gap can be.
func (l *drawLog) stalled(from, to time.Time, quiet time.Duration) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	last := from
	for _, d := range l.draws {
		if d.done.Before(from) {
			continue
		}
		if d.sent.After(to) {
			break
		}
		if d.done.Sub(last) >= quiet {
			return true
		}
		last = d.sent
	}
	return to.Sub(last) >= quiet
}

// neverSettles checks that WaitSettled gives up on a screen the drawer
// keeps changing. A wait that settled while the machine stalled the
// drawer for a quiet period saw a truly quiet screen, so it is tried
// again; the test skips, saying so, when every try was stalled. quiet is
// the pause that lets the wait settle (Quiet, or Interval when it compares
// captures).
func neverSettles(t *testing.T, c *Conn, log *drawLog, opts SettleOptions, quiet time.Duration) {
	t.Helper()
	for range 5 {
		start := time.Now()
		_, settled, err := c.WaitSettled(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		end := time.Now()
		if !settled {
			if d := end.Sub(start); d < opts.Cap {
				t.Errorf("gave up after %v, before the cap", d)
			}
			return
		}
		if !log.stalled(start, end, quiet) {
			t.Fatalf("settled on a screen drawn at least every %v", quiet)
		}
	}
	t.Skip("the machine stalled the drawer for a quiet period in every try: nothing shows whether the wait would have settled")
}

// TestSettleShowsXtermEcho presses keys in xterm (a terminal echoes them)
// and checks each settled capture shows the key's effect: DAMAGE settling
// waits for a real application's drawing, not just for a quiet moment.
func TestSettleShowsXtermEcho(t *testing.T) {
	t.Parallel()
	s, c := newDisplay(t)
	launch(t, s.Display(), "xterm", "-class", "KasmEcho", "-geometry", "80x24+0+0", "-e", "cat")
	w := findWindow(t, c, WindowMatch{Class: "KasmEcho"})
	if err := c.Focus(w); err != nil {
		t.Fatal(err)
	}
	opts := SettleOptions{Cap: 2 * time.Second, Quiet: 30 * time.Millisecond, Response: 500 * time.Millisecond}
	before, settled, err := c.WaitSettled(context.Background(), SettleOptions{Cap: 3 * time.Second, Quiet: 200 * time.Millisecond})
	if err != nil || !settled {
		t.Fatalf("the terminal did not settle: %v %v", settled, err)
	}
	for i, key := range []string{"k", "a", "s", "m"} {
		if err := c.PressKey(context.Background(), key); err != nil {
			t.Fatal(err)
		}
		after, settled, err := c.WaitSettled(context.Background(), opts)
		if err != nil || !settled {
			t.Fatalf("key %d: settled %v, %v", i, settled, err)
		}
		if bytes.Equal(before.Pix, after.Pix) {
			t.Fatalf("key %d (%s): the settled capture does not show the echo", i, key)
		}
		before = after
	}
}

// TestLastOutsideKeptReports checks how a wait that ignores part of the
// screen reads the reports kept: the newest drawn outside it, none before
// any was, and once reports inside it have pushed out the older ones, the
// oldest kept, since one of those pushed out may have been outside.
func TestLastOutsideKeptReports(t *testing.T) {
	t.Parallel()
	w := &damageWatch{}
	ignore := image.Rect(40, 40, 70, 70)
	base := time.Now()
	report := func(i int, area image.Rectangle) {
		w.last = base.Add(time.Duration(i) * time.Millisecond)
		w.recent[w.reports%recentReports] = damageReport{at: w.last, area: area}
		w.reports++
	}
	if last, _ := w.lastOutside(ignore); !last.IsZero() {
		t.Fatalf("lastOutside before any report = %v, want zero", last)
	}
	report(0, image.Rect(5, 5, 50, 50)) // partly outside
	report(1, image.Rect(50, 50, 60, 60))
	if last, _ := w.lastOutside(ignore); !last.Equal(base) {
		t.Fatalf("lastOutside = %v, want the report partly outside (%v)", last, base)
	}
	if last, _ := w.lastOutside(image.Rectangle{}); !last.Equal(base.Add(time.Millisecond)) {
		t.Fatalf("lastOutside ignoring nothing = %v, want the newest report", last)
	}
	for i := 2; i < 2+recentReports; i++ {
		report(i, image.Rect(50, 50, 60, 60))
	}
	want := base.Add(2 * time.Millisecond) // the oldest kept
	if last, _ := w.lastOutside(ignore); !last.Equal(want) {
		t.Fatalf("lastOutside after the report outside was pushed out = %v, want the oldest kept (%v)", last.Sub(base), want.Sub(base))
	}
}

// TestSettleWaitsForAMappedWindowToPaint: a window mapped with no
// background, as GTK maps a dialog, shows what was under it until the app
// paints it, and nothing is reported drawn until then. Mousepad's
// preferences dialog, opened from its Edit menu, was captured missing:
// the menu closing was the drawing the settle waited out, the dialog
// mapped after it and painted after the quiet time. A settle must wait
// for a window mapped and not yet painted.
func TestSettleWaitsForAMappedWindowToPaint(t *testing.T) {
	t.Parallel()
	s, c := newDisplay(t)
	if _, _, err := c.WaitSettled(context.Background(), SettleOptions{Cap: 2 * time.Second}); err != nil {
		t.Fatal(err)
	}
	x, err := xgb.NewConnDisplay(s.Display())
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	screen := xproto.Setup(x).DefaultScreen(x)
	win, err := xproto.NewWindowId(x)
	if err != nil {
		t.Fatal(err)
	}
	// No background attribute: the server leaves the screen under the
	// window as it was when the window maps.
	if err := xproto.CreateWindowChecked(x, screen.RootDepth, win, screen.Root, 100, 100, 200, 150, 0,
		xproto.WindowClassInputOutput, screen.RootVisual, 0, nil).Check(); err != nil {
		t.Fatal(err)
	}
	gc, err := xproto.NewGcontextId(x)
	if err != nil {
		t.Fatal(err)
	}
	xproto.CreateGC(x, gc, xproto.Drawable(win), xproto.GcForeground, []uint32{0xffffff})
	since := time.Now()
	// The menu closes (drawing elsewhere), then the dialog maps.
	drawOnce(t, s.Display(), xproto.Rectangle{X: 10, Y: 10, Width: 40, Height: 40})
	xproto.MapWindow(x, win)
	if _, err := xproto.GetInputFocus(x).Reply(); err != nil {
		t.Fatal(err)
	}
	// The dialog paints once the settle has seen the screen quiet: the
	// settle's capture is what is being tested, so the paint waits for
	// the watch to have seen the map and the drawing before it.
	img := settleBeforeLatePaint(t, c, since, "the map and the drawing before it", func() {
		xproto.PolyFillRectangle(x, xproto.Drawable(win), gc, []xproto.Rectangle{{Width: 200, Height: 150}})
		xproto.GetInputFocus(x).Reply()
	})
	if got := img.RGBAAt(200, 175); got != white {
		t.Errorf("captured %v inside the mapped window, want the white it painted", got)
	}
}

// TestSettleWaitsForAnUnmappedWindowsExposure: a menu that unmaps over a
// window with no background leaves its pixels on the screen until that
// window's app repaints what it uncovered, and nothing is reported drawn
// until then. Mousepad's Edit menu was captured still open after its
// "Preferences..." item was clicked, the app busy building the dialog. A
// settle must wait for what an unmapped window uncovered to be drawn.
func TestSettleWaitsForAnUnmappedWindowsExposure(t *testing.T) {
	t.Parallel()
	s, c := newDisplay(t)
	x, err := xgb.NewConnDisplay(s.Display())
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	screen := xproto.Setup(x).DefaultScreen(x)
	window := func(x0, y0 int16, w, h uint16, mask uint32, values []uint32) xproto.Window {
		t.Helper()
		id, err := xproto.NewWindowId(x)
		if err != nil {
			t.Fatal(err)
		}
		if err := xproto.CreateWindowChecked(x, screen.RootDepth, id, screen.Root, x0, y0, w, h, 0,
			xproto.WindowClassInputOutput, screen.RootVisual, mask, values).Check(); err != nil {
			t.Fatal(err)
		}
		return id
	}
	// The app's window paints white itself; the menu over it has a red
	// background the server paints, as a popup's is drawn at once.
	app := window(100, 100, 200, 150, 0, nil)
	menu := window(150, 120, 80, 100, xproto.CwBackPixel|xproto.CwOverrideRedirect, []uint32{0xff0000, 1})
	gc, err := xproto.NewGcontextId(x)
	if err != nil {
		t.Fatal(err)
	}
	xproto.CreateGC(x, gc, xproto.Drawable(app), xproto.GcForeground, []uint32{0xffffff})
	paint := func() {
		xproto.PolyFillRectangle(x, xproto.Drawable(app), gc, []xproto.Rectangle{{Width: 200, Height: 150}})
		xproto.GetInputFocus(x).Reply()
	}
	xproto.MapWindow(x, app)
	before := time.Now()
	paint()
	// The menu maps once the app's painting has been reported: drawn
	// before that report was taken back, the menu's background would be
	// inside the box reported already, and nothing would say it was drawn.
	eventually(t, "the app's painting reported", func() bool {
		last, err := c.damage.lastOutside(image.Rectangle{})
		return err == nil && last.After(before)
	})
	xproto.MapWindow(x, menu)
	if _, err := xproto.GetInputFocus(x).Reply(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.WaitSettled(context.Background(), SettleOptions{Cap: 2 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if got := pixelAt(t, c, Window{X: 150, Y: 120, Width: 80, Height: 100}); got != (color.RGBA{255, 0, 0, 255}) {
		t.Fatalf("the menu is %v before it closes, want red", got)
	}
	since := time.Now()
	// The click's first answer is drawn elsewhere, then the menu closes.
	drawOnce(t, s.Display(), xproto.Rectangle{X: 10, Y: 10, Width: 40, Height: 40})
	xproto.UnmapWindow(x, menu)
	if _, err := xproto.GetInputFocus(x).Reply(); err != nil {
		t.Fatal(err)
	}
	img := settleBeforeLatePaint(t, c, since, "the unmap and the drawing before it", paint)
	if got := img.RGBAAt(190, 170); got != white {
		t.Errorf("captured %v where the menu was, want the white the app repainted", got)
	}
}

// settleBeforeLatePaint waits until the watch has reported what happened
// since and then seen the screen quiet with a window still to paint, and
// returns the screen a settle captures while paint runs a moment later:
// the paint comes after the quiet time a settle would otherwise trust.
func settleBeforeLatePaint(t *testing.T, c *Conn, since time.Time, what string, paint func()) *image.RGBA {
	t.Helper()
	eventually(t, what+" reported", func() bool {
		last, err := c.damage.lastOutside(image.Rectangle{})
		return err == nil && last.After(since) && time.Since(last) > 100*time.Millisecond &&
			!c.damage.unpaintedUntil(time.Now(), image.Rectangle{}).IsZero()
	})
	painted := make(chan struct{})
	go func() {
		defer close(painted)
		time.Sleep(50 * time.Millisecond)
		paint()
	}()
	img, settled, err := c.WaitSettled(context.Background(), SettleOptions{
		Cap: 5 * time.Second, Quiet: 30 * time.Millisecond, Response: 300 * time.Millisecond, Since: since})
	<-painted
	if err != nil || !settled {
		t.Fatalf("settled %v, %v", settled, err)
	}
	return img
}
