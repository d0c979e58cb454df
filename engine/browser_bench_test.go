package engine

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/drivers/cdp"
	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/scenarios"
)

// BenchmarkCDPClickSettled measures cdp_click through a session, from the
// call to its settled screen in the report, on a button that counts its
// clicks in its label: headless (the page captured through the browser)
// and headful (the window captured from the session's X screen once the
// page is drawn and the screen is still). It reports the median and the
// slowest of b.N.
func BenchmarkCDPClickSettled(b *testing.B) {
	const page = `<!doctype html><html><head><title>Count</title>
<style>body{font:16px sans-serif;margin:20px}</style></head><body>
<button id="add" onclick="this.textContent = String(Number(this.textContent) + 1)">0</button>
</body></html>`
	for _, headless := range []bool{true, false} {
		b.Run(map[bool]string{true: "headless", false: "headful"}[headless], func(b *testing.B) {
			benchCDPClick(b, page, headless)
		})
	}
}

// BenchmarkCDPClickSettledText is BenchmarkCDPClickSettled's headless
// click on a page of text, as make bench-compare's is: Chromium's PNG of it
// is over ten times the counter's, and so is what decoding it would cost.
func BenchmarkCDPClickSettledText(b *testing.B) {
	page := `<!doctype html><html><head><title>Count</title>
<style>body{font:16px sans-serif;margin:20px}</style></head><body>
<button id="add" onclick="this.textContent = String(Number(this.textContent) + 1)">0</button>
<p>` + strings.Repeat("Some text to render. ", 200) + `</p></body></html>`
	benchCDPClick(b, page, true)
}

// benchCDPClick serves page and measures cdp_click on its #add through a
// session, reporting the median and the slowest of b.N.
func benchCDPClick(b *testing.B, page string, headless bool) {
	scriptNeed(b, "Xvfb", cdp.DefaultExecPath)
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, page)
	})
	srv := httptest.NewServer(mux)
	b.Cleanup(srv.Close)
	ctx := context.Background()
	dir := b.TempDir()
	path, _ := writeRunFiles(b, dir, "name: count\ngoal: Count the clicks.\nbrowser:\n  start_url: "+srv.URL+"/\n  headless: "+
		strconv.FormatBool(headless)+"\ncdp_targets:\n  add: \"#add\"\n", "session:\n  accessibility: false\n")
	files, err := scenarios.LoadSession(path, filepath.Join(dir, "operator.yaml"), lookupIn(nil))
	if err != nil {
		b.Fatalf("load: %v", err)
	}
	r, err := New(files, Options{ReportDir: filepath.Join(dir, "report"), Display: "-"})
	if err != nil {
		b.Fatalf("New: %v", err)
	}
	s, err := r.Open(ctx)
	if err != nil {
		b.Fatalf("Open: %v", err)
	}
	defer s.Close(ctx, "", "")
	d := make([]time.Duration, 0, b.N)
	for b.Loop() {
		start := time.Now()
		res, err := s.Call(ctx, "cdp_click", map[string]any{"target": "add"})
		if err != nil || res.Status != events.StatusOK || res.Screen == "" {
			b.Fatalf("cdp_click: %+v %v", res, err)
		}
		d = append(d, time.Since(start))
	}
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2].Microseconds())/1000, "ms/median")
	b.ReportMetric(float64(d[len(d)-1].Microseconds())/1000, "ms/worst")
}
