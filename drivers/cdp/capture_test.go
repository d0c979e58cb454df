package cdp

import (
	"context"
	"fmt"
	"image"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/drivers/x11"
	"github.com/kasmrt/kasmrt/internal/testkit"
)

// colourPages serves two pages that fill the viewport with a colour each
// and link to each other: /red and /blue, each with a button that counts
// its clicks and one that goes to the other page right after its click
// handler returned, as a script that saves first and then moves on does.
func colourPages(t testing.TB) *httptest.Server {
	t.Helper()
	other := map[string]string{"/red": "/blue", "/blue": "/red"}
	colours := map[string]string{"/red": "#e01b24", "/blue": "#1c71d8"}
	mux := http.NewServeMux()
	for path, colour := range colours {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `<!doctype html><html><head><title>%s</title>
<style>html,body{margin:0;height:100%%;background:%s} a{display:block;width:200px;height:60px;background:#fff}
button{font:40px sans-serif;width:200px;height:60px}</style></head>
<body><a id="next" href="%s">next</a>
<button id="add" onclick="this.textContent = String(Number(this.textContent) + 1)">0</button>
<button id="later" onclick="setTimeout(() => location.href = '%s')">later</button></body></html>`, path, colour, other[path], other[path])
		})
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// pageColour names the colour of the capture's middle: "/red", "/blue" or
// what it is.
func pageColour(img image.Image) string {
	b := img.Bounds()
	r, g, bl, _ := img.At(b.Dx()/2, b.Dy()/2).RGBA()
	switch r, g, bl := r>>8, g>>8, bl>>8; {
	case r > 180 && g < 80 && bl < 80:
		return "/red"
	case r < 80 && g > 80 && bl > 180:
		return "/blue"
	default:
		return fmt.Sprintf("rgb(%d,%d,%d)", r, g, bl)
	}
}

// navigateAndCapture goes from one colour page to the other n times, half
// the time by Navigate and half by clicking the page's link (a navigation
// the page starts, which Navigate does not wait for), and captures the
// screen with capture right after each. It returns how long each capture
// took, and fails when a capture errs or shows the page it left.
func navigateAndCapture(t testing.TB, tab *Tab, base string, n int, capture func(context.Context, action) (image.Image, error)) []time.Duration {
	t.Helper()
	durations := make([]time.Duration, 0, n)
	at := "/red"
	for i := range n {
		want := map[string]string{"/red": "/blue", "/blue": "/red"}[at]
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		acted := action{at: time.Now(), loads: tab.LoadsBegun()}
		var err error
		if i%2 == 0 {
			err = tab.Navigate(ctx, base+want)
		} else {
			err = tab.Click(ctx, "#next")
		}
		if err != nil {
			cancel()
			t.Fatalf("navigation %d to %s: %v", i, want, err)
		}
		start := time.Now()
		// A capture that stalls on the document being replaced waits
		// seconds; this bound turns that into a failure.
		shotCtx, cancelShot := context.WithTimeout(ctx, 5*time.Second)
		img, err := capture(shotCtx, acted)
		cancelShot()
		took := time.Since(start)
		cancel()
		if err != nil {
			t.Fatalf("capture after navigation %d to %s (%s): %v", i, want, took, err)
		}
		if got := pageColour(img); got != want {
			t.Fatalf("capture after navigation %d shows %s, want %s", i, got, want)
		}
		durations = append(durations, took)
		at = want
	}
	return durations
}

// colourTab is a browser on the colour pages and the way the engine
// captures it: through the browser when headless, and from the X screen
// once the page rendered and the screen settled when headful on an Xvfb.
type colourTab struct {
	tab  *Tab
	base string
	// conn is the X connection of a headful browser's display; nil when
	// headless.
	conn *x11.Conn
}

// openColourTab launches a browser on /red, headful on an Xvfb of its own
// when headful is set.
func openColourTab(t testing.TB, headful bool) *colourTab {
	t.Helper()
	testkit.SkipIntegration(t)
	if _, err := os.Stat(DefaultExecPath); err != nil {
		t.Skipf("Debian chromium is not installed at %s: %v", DefaultExecPath, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv := colourPages(t)
	opts := LaunchOptions{Headless: !headful, StartURL: srv.URL + "/red"}
	var conn *x11.Conn
	if headful {
		if _, err := exec.LookPath("Xvfb"); err != nil {
			t.Skip("Xvfb is not installed")
		}
		sess, err := x11.StartServer(ctx, x11.DisplayOptions{})
		if err != nil {
			t.Fatalf("StartSession: %v", err)
		}
		t.Cleanup(func() { sess.Close() })
		conn, err = x11.Dial(sess.Display())
		if err != nil {
			t.Fatalf("Dial: %v", err)
		}
		t.Cleanup(func() { conn.Close() })
		opts.Display = sess.Display()
	}
	b, err := Launch(ctx, opts)
	if err != nil {
		t.Fatalf("Launch: %v", err)
	}
	t.Cleanup(func() { b.Close() })
	tab := b.Tab()
	if err := tab.Wait(ctx, WaitSpec{Selector: "#add"}); err != nil {
		t.Fatal(err)
	}
	return &colourTab{tab: tab, base: srv.URL, conn: conn}
}

// action is when an action began and how many loads the tab had begun
// by then.
type action struct {
	at    time.Time
	loads uint64
}

// mark marks the start of an action.
func (c *colourTab) mark() action { return action{at: time.Now(), loads: c.tab.LoadsBegun()} }

// capture takes the screen as the engine does after an action marked by
// since.
func (c *colourTab) capture(ctx context.Context, since action) (image.Image, error) {
	if c.conn == nil {
		return c.tab.Screenshot(ctx)
	}
	for attempt := 1; ; attempt++ {
		frames, err := c.tab.Drawn(ctx)
		if err != nil {
			return nil, err
		}
		// Still for a while after the last drawing (but the browser's own
		// tab strip and toolbar) too, as the engine settles it: the frame
		// may be on its way to the screen. A navigation announced
		// meanwhile means the page left may be what is still.
		begun := c.tab.LoadsBegun()
		var chrome image.Rectangle
		if p, err := c.tab.Placement(ctx); err == nil {
			chrome = p.Chrome()
		}
		// Drawing since the action counts only on the document it began
		// on: after a navigation the new document's frame must be seen.
		var drawnSince time.Time
		if begun == since.loads {
			drawnSince = since.at
		}
		const quiet = 30 * time.Millisecond
		img, _, err := c.conn.WaitSettled(ctx, x11.SettleOptions{Quiet: quiet,
			Response: max(quiet, min(frames/2, 300*time.Millisecond)), Since: drawnSince, Ignore: chrome})
		if err != nil || c.tab.LoadsBegun() == begun || attempt == 3 {
			return img, err
		}
	}
}

// origin is where the page's viewport is on the capture.
func (c *colourTab) origin(t testing.TB) image.Point {
	t.Helper()
	if c.conn == nil {
		return image.Point{}
	}
	o, err := c.tab.ViewportOrigin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// screenSources are the two ways to see a page. A test runs them one
// after the other, so that the package's tests keep few browsers at once
// on the shared cores.
var screenSources = []struct {
	name    string
	headful bool
}{{"headless", false}, {"headful", true}}

// TestCapturesAfterNavigations navigates a hundred times between two pages,
// headless and headful, and checks that every capture shows the page
// navigated to and that none stalls. How long they take is
// BenchmarkCaptureAfterNavigation's business.
func TestCapturesAfterNavigations(t *testing.T) {
	t.Parallel()
	for _, src := range screenSources {
		t.Run(src.name, func(t *testing.T) {
			c := openColourTab(t, src.headful)
			d := navigateAndCapture(t, c.tab, c.base, 100, c.capture)
			slices.Sort(d)
			t.Logf("100 captures after a navigation: median %s, worst %s", d[len(d)/2], d[len(d)-1])
		})
	}
}

// TestCaptureAfterClickShowsTheChange clicks a button that counts its
// clicks in its label: every capture right after a click must differ from
// the one before it where the label is, headless and headful.
func TestCaptureAfterClickShowsTheChange(t *testing.T) {
	t.Parallel()
	for _, src := range screenSources {
		t.Run(src.name, func(t *testing.T) {
			c := openColourTab(t, src.headful)
			origin := c.origin(t)
			var before image.Image
			for i := range 20 {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				acted := c.mark()
				at, err := c.tab.ClickPoint(ctx, "#add")
				if err != nil {
					cancel()
					t.Fatalf("click %d: %v", i, err)
				}
				img, err := c.capture(ctx, acted)
				cancel()
				if err != nil {
					t.Fatalf("capture after click %d: %v", i, err)
				}
				label := image.Rect(-60, -20, 60, 20).Add(at.Add(origin))
				if before != nil && sameRegion(before, img, label) {
					t.Fatalf("capture after click %d shows the label of the one before (region %v)", i, label)
				}
				before = img
			}
		})
	}
}

// TestCaptureWhileANavigationBegins clicks a button whose page goes to the
// other page once the click is handled, so that the browser announces the
// navigation only after the click returned, while the capture is under
// way: each capture must show the page gone to, and none may wait on the
// document being replaced (such a capture waited past the 2 s bound in
// three runs of five when nothing ended it).
func TestCaptureWhileANavigationBegins(t *testing.T) {
	t.Parallel()
	for _, src := range screenSources {
		t.Run(src.name, func(t *testing.T) {
			c := openColourTab(t, src.headful)
			const clicks = 40
			at := "/red"
			var worst time.Duration
			late := 0
			for i := range clicks {
				want := map[string]string{"/red": "/blue", "/blue": "/red"}[at]
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				acted := c.mark()
				if err := c.tab.Click(ctx, "#later"); err != nil {
					cancel()
					t.Fatalf("click %d: %v", i, err)
				}
				start := time.Now()
				shotCtx, cancelShot := context.WithTimeout(ctx, 2*time.Second)
				img, err := c.capture(shotCtx, acted)
				cancelShot()
				begun := c.tab.LoadsBegun() != acted.loads
				if err != nil {
					cancel()
					t.Fatalf("capture after click %d (%s): %v", i, time.Since(start), err)
				}
				if d := time.Since(start); d > worst {
					worst = d
				}
				if got := pageColour(img); got != want {
					if begun {
						cancel()
						t.Fatalf("capture after click %d shows %s, want %s", i, got, want)
					}
					// The page moved on only after the capture was taken
					// (a loaded machine ran the click's timer late): the
					// capture rightly shows the page before it. Let the
					// navigation happen before the next click.
					late++
					if err := waitLoadBegun(ctx, c.tab, acted.loads); err != nil {
						cancel()
						t.Fatalf("click %d: %v", i, err)
					}
					if err := c.tab.Rendered(ctx); err != nil {
						cancel()
						t.Fatalf("click %d: %v", i, err)
					}
				}
				cancel()
				at = want
			}
			t.Logf("worst %v; %d of %d navigations began after the capture", worst, late, clicks)
			if late > clicks/2 {
				t.Fatalf("%d of %d navigations began after the capture: too few captures ran during one", late, clicks)
			}
		})
	}
}

// waitLoadBegun waits until the tab has begun a load since it had begun
// since of them.
func waitLoadBegun(ctx context.Context, tab *Tab, since uint64) error {
	for tab.LoadsBegun() == since {
		select {
		case <-ctx.Done():
			return fmt.Errorf("no navigation began: %w", ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}

// sameRegion reports whether two images have the same pixels in r.
func sameRegion(a, b image.Image, r image.Rectangle) bool {
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if a.At(x, y) != b.At(x, y) {
				return false
			}
		}
	}
	return true
}

// median returns the middle of durations, sorting them.
func median(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}

// BenchmarkCaptureAfterNavigation measures a capture right after a
// navigation (half by Navigate, half by a click on a link), headless and
// headful: the median and the worst of b.N.
func BenchmarkCaptureAfterNavigation(b *testing.B) {
	for _, src := range screenSources {
		b.Run(src.name, func(b *testing.B) {
			c := openColourTab(b, src.headful)
			b.ResetTimer()
			d := navigateAndCapture(b, c.tab, c.base, b.N, c.capture)
			b.StopTimer()
			b.ReportMetric(float64(median(d).Microseconds())/1000, "ms/median-capture")
			b.ReportMetric(float64(d[len(d)-1].Microseconds())/1000, "ms/worst-capture")
		})
	}
}

// BenchmarkClickToSettled measures a click on a button that changes its
// label through the capture that shows the change, as cdp_click does it,
// headless and headful: the median of b.N.
func BenchmarkClickToSettled(b *testing.B) {
	for _, src := range screenSources {
		b.Run(src.name, func(b *testing.B) {
			c := openColourTab(b, src.headful)
			ctx := context.Background()
			d := make([]time.Duration, 0, b.N)
			for b.Loop() {
				start, acted := time.Now(), c.mark()
				if err := c.tab.Click(ctx, "#add"); err != nil {
					b.Fatal(err)
				}
				if _, err := c.capture(ctx, acted); err != nil {
					b.Fatal(err)
				}
				d = append(d, time.Since(start))
			}
			b.ReportMetric(float64(median(d).Microseconds())/1000, "ms/median")
		})
	}
}
