package cdp

import (
	"context"
	"fmt"
	"image"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"
)

// colourPages serves two pages that fill the viewport with a colour each
// and link to each other: /red and /blue.
func colourPages(t testing.TB) *httptest.Server {
	t.Helper()
	other := map[string]string{"/red": "/blue", "/blue": "/red"}
	colours := map[string]string{"/red": "#e01b24", "/blue": "#1c71d8"}
	mux := http.NewServeMux()
	for path, colour := range colours {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `<!doctype html><html><head><title>%s</title>
<style>html,body{margin:0;height:100%%;background:%s} a{display:block;width:200px;height:60px;background:#fff}</style></head>
<body><a id="next" href="%s">next</a>
<button id="add" onclick="this.textContent = String(Number(this.textContent) + 1)">0</button></body></html>`, path, colour, other[path])
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
// screen right after each. It returns how long each capture took, and
// fails when a capture errs or shows the page it left.
func navigateAndCapture(t testing.TB, tab *Tab, base string, n int, each func()) []time.Duration {
	t.Helper()
	durations := make([]time.Duration, 0, n)
	at := "/red"
	for i := range n {
		want := map[string]string{"/red": "/blue", "/blue": "/red"}[at]
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
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
		img, err := tab.Screenshot(shotCtx)
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
		if each != nil {
			each()
		}
	}
	return durations
}

// TestScreenshotAfterNavigations navigates a hundred times between two
// pages and checks that every capture shows the page navigated to and that
// none stalls. How long they take is BenchmarkScreenshotAfterNavigation's
// business.
func TestScreenshotAfterNavigations(t *testing.T) {
	t.Parallel()
	requireChromium(t)
	srv := colourPages(t)
	b := launch(t, LaunchOptions{Headless: true, StartURL: srv.URL + "/red"})
	tab := b.Tab()
	if err := tab.Wait(callCtx(t), WaitSpec{Selector: "#next"}); err != nil {
		t.Fatal(err)
	}
	d := navigateAndCapture(t, tab, srv.URL, 100, nil)
	slices.Sort(d)
	t.Logf("100 captures after a navigation: median %s, worst %s", d[len(d)/2], d[len(d)-1])
}

// median returns the middle of durations, sorting them.
func median(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}

// BenchmarkScreenshotAfterNavigation measures a capture right after a
// navigation (half by Navigate, half by a click on a link): the median and
// the worst of b.N.
func BenchmarkScreenshotAfterNavigation(b *testing.B) {
	srv := colourPages(b)
	br, err := Launch(context.Background(), LaunchOptions{Headless: true, StartURL: srv.URL + "/red"})
	if err != nil {
		b.Fatalf("Launch: %v", err)
	}
	defer br.Close()
	tab := br.Tab()
	if err := tab.Wait(context.Background(), WaitSpec{Selector: "#next"}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	d := navigateAndCapture(b, tab, srv.URL, b.N, nil)
	b.StopTimer()
	b.ReportMetric(float64(median(d).Microseconds())/1000, "ms/median-capture")
	b.ReportMetric(float64(d[len(d)-1].Microseconds())/1000, "ms/worst-capture")
}

// BenchmarkClickToSettled measures a click on a button that changes its
// label through the capture that shows the change, as cdp_click does it:
// the median of b.N.
func BenchmarkClickToSettled(b *testing.B) {
	srv := colourPages(b)
	ctx := context.Background()
	br, err := Launch(ctx, LaunchOptions{Headless: true, StartURL: srv.URL + "/red"})
	if err != nil {
		b.Fatalf("Launch: %v", err)
	}
	defer br.Close()
	tab := br.Tab()
	if err := tab.Wait(ctx, WaitSpec{Selector: "#add"}); err != nil {
		b.Fatal(err)
	}
	d := make([]time.Duration, 0, b.N)
	for b.Loop() {
		start := time.Now()
		if err := tab.Click(ctx, "#add"); err != nil {
			b.Fatal(err)
		}
		if _, err := tab.Screenshot(ctx); err != nil {
			b.Fatal(err)
		}
		d = append(d, time.Since(start))
	}
	b.ReportMetric(float64(median(d).Microseconds())/1000, "ms/median")
}
