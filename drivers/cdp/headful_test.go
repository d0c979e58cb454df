package cdp

import (
	"context"
	"image"
	"os/exec"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/drivers/x11"
)

// TestHeadfulOnXvfb runs the browser with a window on an Xvfb the test
// starts: the tab must take input (it is brought to the front), and
// ViewportOrigin must map an element's box onto the X screen, where the
// red Sign in button is seen in a real capture.
func TestHeadfulOnXvfb(t *testing.T) {
	t.Parallel()
	requireChromium(t)
	if _, err := exec.LookPath("Xvfb"); err != nil {
		t.Skip("Xvfb is not installed")
	}
	ctx := callCtx(t)
	sess, err := x11.StartServer(ctx, x11.DisplayOptions{})
	if err != nil {
		t.Fatalf("StartServer: %v", err)
	}
	t.Cleanup(func() { sess.Close() })
	srv := loginServer(t)
	b := launch(t, LaunchOptions{Display: sess.Display(), StartURL: srv.URL + "/"})
	tab := b.Tab()

	if err := tab.Wait(ctx, WaitSpec{Selector: "#go"}); err != nil {
		t.Fatalf("Wait(#go): %v", err)
	}
	els, err := tab.ListInteractive(ctx, "sign in")
	if err != nil || len(els) != 1 {
		t.Fatalf("ListInteractive(sign in) = %v, %v; want the button", els, err)
	}
	origin, err := tab.ViewportOrigin(ctx)
	if err != nil {
		t.Fatalf("ViewportOrigin: %v", err)
	}
	// The toolbar and the --no-sandbox infobar sit above the page.
	if origin.Y < 40 || origin.Y > 250 || origin.X < 0 || origin.X > 20 {
		t.Errorf("viewport origin %v: want the page a toolbar's height below the window top", origin)
	}
	// The window holds the viewport and, above it, the browser's own
	// chrome, which a settling screen ignores.
	p, err := tab.Placement(ctx)
	if err != nil {
		t.Fatalf("Placement: %v", err)
	}
	if p.Viewport.Min != origin || !p.Viewport.In(p.Window) || p.Viewport.Max.Y != p.Window.Max.Y {
		t.Errorf("placement %+v: want the viewport at %v, at the bottom of the window", p, origin)
	}
	if c := p.Chrome(); c.Dy() != origin.Y-p.Window.Min.Y || c.Dx() != p.Window.Dx() || c.Overlaps(p.Viewport) {
		t.Errorf("chrome %v: want the width of the window %v above the viewport %v", c, p.Window, p.Viewport)
	}
	box := els[0].Box.Add(origin)
	// Just inside the corner: the inside is the label's white text.
	inside := box.Min.Add(image.Pt(8, 8))

	conn, err := x11.Dial(sess.Display())
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer conn.Close()
	var r, g, bl uint8
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		img, err := conn.Capture(ctx)
		if err != nil {
			t.Fatalf("Capture: %v", err)
		}
		c := img.RGBAAt(inside.X, inside.Y)
		r, g, bl = c.R, c.G, c.B
		if r > 180 && g < 80 && bl < 80 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("screen pixel at %v (button box %v on screen) is %d,%d,%d, want the button's red", inside, box, r, g, bl)
		}
	}

	if err := tab.Fill(ctx, "#user", "bob"); err != nil {
		t.Fatalf("Fill: %v", err)
	}
	if err := tab.Fill(ctx, "#pass", secretPassword); err != nil {
		t.Fatalf("Fill: %v", err)
	}
	if _, err := tab.ClickDescribed(ctx, els[0].Handle, ""); err != nil {
		t.Fatalf("ClickDescribed: %v", err)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := tab.Wait(wctx, WaitSpec{Selector: "#welcome", URLContains: "user=bob"}); err != nil {
		t.Fatalf("Wait for the dashboard: %v", err)
	}

	pid := b.PID()
	if err := b.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if left := groupRunning(pid); len(left) > 0 {
		t.Errorf("processes of chromium group %d left after Close: %v", pid, left)
	}
}
