package cdp

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// consolePage logs at three levels, fails to load an image and throws an
// error nothing catches.
const consolePage = `<!doctype html><html><head><title>Noisy</title></head><body>
<p>noisy page</p>
<img src="/missing.png">
<script>
console.log("hello from the page", 42);
console.warn("careful");
console.error("it broke:", "badly");
setTimeout(() => { throw new TypeError("boom in a timer") }, 10);
</script>
</body></html>`

// TestWatchConsole serves a page that logs, fails a request and throws, and
// checks that every message arrives with its level, source and place.
func TestWatchConsole(t *testing.T) {
	requireChromium(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, consolePage)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	b := launch(t, LaunchOptions{Headless: true})

	var mu sync.Mutex
	var got []ConsoleMessage
	stop := b.Tab().WatchConsole(context.Background(), func(m ConsoleMessage) {
		mu.Lock()
		got = append(got, m)
		mu.Unlock()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := b.Tab().Navigate(ctx, srv.URL+"/"); err != nil {
		t.Fatal(err)
	}
	want := []ConsoleMessage{
		{Level: LevelLog, Source: SourceConsole, Text: "hello from the page 42", URL: srv.URL + "/", Line: 5},
		{Level: LevelWarning, Source: SourceConsole, Text: "careful", URL: srv.URL + "/", Line: 6},
		{Level: LevelError, Source: SourceConsole, Text: "it broke: badly", URL: srv.URL + "/", Line: 7},
		{Level: LevelException, Source: SourceException, Text: "Uncaught TypeError: boom in a timer", URL: srv.URL + "/", Line: 8},
		{Level: LevelError, Source: "network", URL: srv.URL + "/missing.png"},
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		missing := missingMessages(got, want)
		mu.Unlock()
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			mu.Lock()
			t.Fatalf("never saw %+v\ngot %+v", missing, got)
		}
		time.Sleep(50 * time.Millisecond)
	}
	stop()
	mu.Lock()
	n := len(got)
	mu.Unlock()
	// After stop returns, fn is never called again.
	if err := b.Tab().Navigate(ctx, srv.URL+"/"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if len(got) != n {
		t.Errorf("%d messages arrived after stop", len(got)-n)
	}
}

// missingMessages returns the wanted messages not in got. A wanted message
// with no Text matches any text; a network entry's line is not compared.
func missingMessages(got, want []ConsoleMessage) []ConsoleMessage {
	var missing []ConsoleMessage
	for _, w := range want {
		found := false
		for _, g := range got {
			if g.Level == w.Level && g.Source == w.Source && g.URL == w.URL &&
				(w.Text == "" || g.Text == w.Text) && (w.Source == "network" || g.Line == w.Line) &&
				(w.Source != "network" || strings.Contains(g.Text, "404")) {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, w)
		}
	}
	return missing
}
