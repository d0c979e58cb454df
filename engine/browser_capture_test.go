package engine

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestBrowserScreensFollowLinks clicks a link back and forth between a red
// and a blue page, in a headless browser (captured through the browser) and
// a headful one (its window captured from the X screen): the settled screen
// of every click must show the page the link led to, not the one it left.
func TestBrowserScreensFollowLinks(t *testing.T) {
	t.Parallel()
	for _, headless := range []bool{true, false} {
		t.Run(map[bool]string{true: "headless", false: "headful"}[headless], func(t *testing.T) {
			browserScreensFollowLinks(t, headless)
		})
	}
}

func browserScreensFollowLinks(t *testing.T, headless bool) {
	browserNeed(t)
	colours := map[string]string{"/red": "#e01b24", "/blue": "#1c71d8"}
	other := map[string]string{"/red": "blue", "/blue": "red"}
	mux := http.NewServeMux()
	for path, colour := range colours {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `<!doctype html><html><head><title>%s</title>
<style>html,body{margin:0;height:100%%;background:%s} a{display:block;width:200px;height:60px;background:#fff}</style></head>
<body><a href="/%s">to %s</a></body></html>`, path, colour, other[path], other[path])
		})
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	const clicks = 10
	steps := []string{"observe_screen: {}"}
	want := []string{"red"}
	at := "red"
	for range clicks {
		next := other["/"+at]
		steps = append(steps, "cdp_click_described: {text: to "+next+"}")
		want = append(want, next)
		at = next
	}
	o := scriptRun(t, scriptRunSpec{scenario: "name: links\nbrowser:\n  start_url: " + srv.URL + "/red\n  headless: " + strconv.FormatBool(headless) + "\n" +
		"steps:\n  - " + strings.Join(steps, "\n  - ") + "\n"})
	if o.res.Verdict != "pass" {
		t.Fatalf("verdict %s/%s, want pass; reasons %q", o.res.Verdict, o.res.Outcome, o.res.Reasons)
	}
	if len(o.rep.Steps) != len(want) {
		t.Fatalf("%d steps in the report, want %d", len(o.rep.Steps), len(want))
	}
	for i, st := range o.rep.Steps {
		if got := screenColour(t, filepath.Join(o.info.reportDir, st.Screen)); got != want[i] {
			t.Errorf("step %d (%s) screen %s shows %s, want %s", i+1, st.Tool, st.Screen, got, want[i])
		}
	}
}

// screenColour names the colour in the middle of a screen file.
func screenColour(t *testing.T, path string) string {
	t.Helper()
	img := readScreen(t, path)
	b := img.Bounds()
	r, g, bl, _ := img.At(b.Dx()/2, b.Dy()/2).RGBA()
	switch r, g, bl := r>>8, g>>8, bl>>8; {
	case r > 180 && g < 80 && bl < 80:
		return "red"
	case r < 80 && g > 80 && bl > 180:
		return "blue"
	default:
		return fmt.Sprintf("rgb(%d,%d,%d)", r, g, bl)
	}
}
