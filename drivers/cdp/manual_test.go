package cdp

import (
	"context"
	"image"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"testing"
	"time"
)

// manualRoot is the HTML manual of Debian's aptitude-doc-en package: a
// real site of linked pages that kasmrt did not write.
const manualRoot = "/usr/share/doc/aptitude/html/en"

// TestCapturesOfARealManual follows the manual's "next" link page after
// page, headless and headful, and captures each page right after the
// click as the engine does. Each capture must be the page as it stands a
// moment later, when it has long finished loading and drawing: neither
// the page left, nor one half drawn.
func TestCapturesOfARealManual(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat(manualRoot + "/index.html"); err != nil {
		t.Skipf("the aptitude-doc-en package is not installed (scripts/setup.sh installs it): %v", err)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(manualRoot)))
	t.Cleanup(srv.Close)
	for _, src := range screenSources {
		t.Run(src.name, func(t *testing.T) {
			c := openColourTab(t, src.headful)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if err := c.tab.Navigate(ctx, srv.URL+"/index.html"); err != nil {
				t.Fatal(err)
			}
			if _, err := c.capture(ctx, c.mark()); err != nil {
				t.Fatal(err)
			}
			origin := c.origin(t)
			var took []time.Duration
			for i := range 10 {
				before, _ := c.tab.URL(ctx)
				acted := c.mark()
				if err := c.tab.Click(ctx, "a[accesskey=n]"); err != nil {
					t.Fatalf("page %d: click next: %v", i, err)
				}
				start := time.Now()
				img, err := c.capture(ctx, acted)
				if err != nil {
					t.Fatalf("page %d: capture: %v", i, err)
				}
				took = append(took, time.Since(start))
				time.Sleep(700 * time.Millisecond)
				later, err := c.capture(ctx, c.mark())
				if err != nil {
					t.Fatalf("page %d: capture again: %v", i, err)
				}
				after, _ := c.tab.URL(ctx)
				if after == before {
					t.Fatalf("page %d: the next link left the page at %s", i, before)
				}
				page := image.Rectangle{Min: origin, Max: later.Bounds().Max}
				if !sameRegion(img, later, page) {
					t.Fatalf("page %d (%s): the capture right after the click differs from the page a moment later", i, after)
				}
			}
			slices.Sort(took)
			t.Logf("10 pages of the manual: capture after the click median %s, worst %s", took[len(took)/2], took[len(took)-1])
		})
	}
}
