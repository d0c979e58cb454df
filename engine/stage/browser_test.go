package stage

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/drivers/proc"
)

func TestVersionURL(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ ws, want string }{
		{"ws://127.0.0.1:9222/devtools/browser/abc", "http://127.0.0.1:9222/json/version"},
		{"wss://remote.test/devtools/browser/abc", "https://remote.test/json/version"},
		{"https://remote.test:8443/x", "https://remote.test:8443/json/version"},
		{"::not a url", ""},
	} {
		if got := versionURL(c.ws); got != c.want {
			t.Errorf("versionURL(%q) = %q, want %q", c.ws, got, c.want)
		}
	}
}

// attachedBrowser is an attached browser as the stage sees it: only its
// DevTools address matters to the watch.
type attachedBrowser struct{ url string }

func (b attachedBrowser) Tab() BrowserTab         { return nil }
func (b attachedBrowser) PID() int                { return 0 }
func (b attachedBrowser) Done() <-chan struct{}   { return nil }
func (b attachedBrowser) ExitStatus() proc.Status { return proc.Status{Running: true} }
func (b attachedBrowser) DebuggerURL() string     { return b.url }
func (b attachedBrowser) Close() error            { return nil }

// TestWatchAttachedFollowsTheEndpoint checks that an attached browser
// counts as alive while its DevTools endpoint answers and as gone once it
// stops, against a real HTTP server.
func TestWatchAttachedFollowsTheEndpoint(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/json/version" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(`{"Browser": "Chrome/1"}`))
	}))
	w := &Web{b: attachedBrowser{url: "ws://" + strings.TrimPrefix(srv.URL, "http://") + "/devtools/browser/x"}, Attached: true}
	st := &Stage{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w.done = st.watchAttached(ctx, w)
	// Several pings answer while the server runs.
	select {
	case <-w.done:
		t.Fatal("the watch gave up on an endpoint that answers")
	case <-time.After(3 * attachPingInterval):
	}
	srv.Close()
	select {
	case <-w.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the watch did not notice the endpoint had gone")
	}
	if w.Alive() {
		t.Error("the browser is alive after its endpoint went away")
	}
}

// flakyEndpoint is a DevTools endpoint that can fail its next answers:
// fail is how many requests get a 503 from now on (negative: all), and
// failed counts the 503s it gave.
type flakyEndpoint struct {
	mu           sync.Mutex
	fail, failed int
}

func (e *flakyEndpoint) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.fail != 0 {
		e.fail--
		e.failed++
		http.Error(w, "busy", http.StatusServiceUnavailable)
		return
	}
	_, _ = w.Write([]byte(`{"Browser": "Chrome/1"}`))
}

func (e *flakyEndpoint) set(fail int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.fail, e.failed = fail, 0
}

// TestWatchAttachedGivesUpAfterTwoFailures checks that one failed ping
// does not lose the browser, and that two in a row do, no more.
func TestWatchAttachedGivesUpAfterTwoFailures(t *testing.T) {
	t.Parallel()
	e := &flakyEndpoint{}
	srv := httptest.NewServer(e)
	defer srv.Close()
	w := &Web{b: attachedBrowser{url: "ws://" + strings.TrimPrefix(srv.URL, "http://") + "/devtools/browser/x"}, Attached: true}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e.set(1)
	w.done = (&Stage{}).watchAttached(ctx, w)
	select {
	case <-w.done:
		t.Fatal("one failed ping lost the browser")
	case <-time.After(4 * attachPingInterval):
	}
	e.set(-1)
	select {
	case <-w.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the watch never gave up")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.failed != attachPingsToGiveUp {
		t.Errorf("the watch gave up after %d failed pings, want %d", e.failed, attachPingsToGiveUp)
	}
}
