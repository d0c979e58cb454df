package engine

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
	mt "github.com/kasmrt/kasmrt/engine/model/modeltest"
	"github.com/kasmrt/kasmrt/engine/report"
	"github.com/kasmrt/kasmrt/engine/stage"
)

// TestBrowserConsoleInReport serves a page that logs, leaks a secret to its
// console, fails a request and throws, and checks that each message is an
// event and in report.json with its counts, with the secret redacted.
func TestBrowserConsoleInReport(t *testing.T) {
	t.Parallel()
	browserNeed(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintf(w, `<!doctype html><html><head><title>Noisy</title></head><body>
<button id="go" onclick="console.error('clicked, token %s'); null.property">Go</button>
<img src="/missing.png">
<script>console.log("page loaded"); console.warn("deprecated call")</script>
</body></html>`, browserSecret)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	o := scriptRun(t, scriptRunSpec{
		scenario: `name: noisy page
browser:
  start_url: ` + srv.URL + `/
  headless: true
provides:
  token: {secret: {env: TOKEN}}
cdp_targets:
  go: "#go"
steps:
  - cdp_click: go
  - wait: 0.3
`,
		env: map[string]string{"TOKEN": browserSecret},
	})
	if o.res.Verdict != events.VerdictPass {
		t.Fatalf("verdict %s/%s, want pass: %v", o.res.Verdict, o.res.Outcome, o.res.Reasons)
	}
	var texts []string
	for _, e := range o.events {
		if d, ok := e.Data.(events.ConsoleMessage); ok {
			texts = append(texts, fmt.Sprintf("%s %s: %s", d.Level, d.Source, d.Text))
		}
	}
	joined := strings.Join(texts, "\n")
	for _, w := range []string{"log console: page loaded", "warning console: deprecated call",
		"error console: clicked, token [REDACTED]", "exception exception: Uncaught TypeError: Cannot read properties of null",
		"error network: Failed to load resource"} {
		if !strings.Contains(joined, w) {
			t.Errorf("browser.console events lack %q:\n%s", w, joined)
		}
	}
	b := o.rep.Browser
	if b == nil {
		t.Fatal("report.json has no browser section")
	}
	if b.Total != len(texts) || b.Recorded != len(texts) || len(b.Console) != len(texts) {
		t.Errorf("browser total %d, recorded %d, listed %d; want %d each", b.Total, b.Recorded, len(b.Console), len(texts))
	}
	// Two errors at least: the console.error and the missing image (the
	// browser may also ask for a favicon the server lacks).
	if b.Counts["exception"] != 1 || b.Counts["error"] < 2 || b.Counts["warning"] != 1 || b.Counts["log"] != 1 {
		t.Errorf("browser.counts = %v", b.Counts)
	}
	for _, c := range b.Console {
		if c.Level == "exception" && (c.URL != srv.URL+"/" || c.Line != 2) {
			t.Errorf("the exception is placed at %s:%d, want the page's line 2", c.URL, c.Line)
		}
	}
	browserNoSecret(t, o.info.reportDir)
}

// TestBrowserErrorsWordedForTheAuthor drives real Chromium into the
// failures an author meets (an element that is not rendered, a selector
// that matches nothing) and checks each step says what was attempted, why
// it failed and what to try, with the protocol's own words in parentheses.
func TestBrowserErrorsWordedForTheAuthor(t *testing.T) {
	t.Parallel()
	browserNeed(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><html><head><title>Hidden</title></head><body>
<button id="later" style="display:none">Appears later</button><p>nothing to click</p></body></html>`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	r := loopRun(t, loopCase{
		scenario: `name: browser errors
browser:
  start_url: ` + srv.URL + `/
  headless: true
goal: Click the button.
cdp_targets:
  later: "#later"
  missing: "#no-such-element"
`,
		script: []mt.Exchange{
			mt.Call("cdp_click", `{"target": "later"}`),
			mt.Call("cdp_click", `{"target": "missing"}`),
			mt.Call("record_verdict", `{"verdict": "goal-not-met", "reason": "nothing to click"}`),
		},
	})
	loopWantSteps(t, r.rep,
		loopStep{"cdp_click", events.StatusError, "click #later failed: the element is not rendered"},
		loopStep{"cdp_click", events.StatusError, "click #no-such-element failed: no element on the page matches the cdp target's selector"},
		loopStep{"record_verdict", events.StatusOK, "goal-not-met"},
	)
	for _, c := range []struct {
		step     int
		try, raw string
	}{
		{0, "try waiting until it is visible with a cdp_wait (state: visible)", "(click #later: "},
		{1, "try checking the selector in cdp_targets", "(click #no-such-element: no element matches #no-such-element)"},
	} {
		msg := r.rep.Steps[c.step].Message
		if !strings.Contains(msg, c.try) || !strings.Contains(msg, c.raw) {
			t.Errorf("step %d says %q, want %q and the raw error %q", c.step+1, msg, c.try, c.raw)
		}
	}
}

// TestBrowserConsoleIsCapped serves a page that logs in a loop: the first
// messages become events, the rest are counted, and report.json lists
// fewer still with the true totals.
func TestBrowserConsoleIsCapped(t *testing.T) {
	t.Parallel()
	browserNeed(t)
	const logged = stage.MaxConsoleEvents + 100
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><html><head><link rel="icon" href="data:,"></head><body>
<script>for (let i = 0; i < %d; i++) console.log("line " + i)</script></body></html>`, logged)
	}))
	t.Cleanup(srv.Close)
	o := scriptRun(t, scriptRunSpec{scenario: `name: chatty page
browser:
  start_url: ` + srv.URL + `/
  headless: true
steps:
  - wait: 0.5
`})
	if o.res.Verdict != events.VerdictPass {
		t.Fatalf("verdict %s/%s, want pass: %v", o.res.Verdict, o.res.Outcome, o.res.Reasons)
	}
	n := 0
	for _, e := range o.events {
		if e.Kind == events.KindConsole {
			n++
		}
	}
	b := o.rep.Browser
	if n != stage.MaxConsoleEvents || b == nil || b.Total != logged || b.Recorded != stage.MaxConsoleEvents ||
		b.Counts["log"] != logged || len(b.Console) != report.MaxConsoleEntries {
		t.Fatalf("%d console events; browser section %+v", n, b)
	}
	if b.Console[0].Text != "line 0" {
		t.Errorf("the first listed message is %q, want the page's first", b.Console[0].Text)
	}
}

// TestBrowserStartPageFailureHasScreen: a start page that never loads (no
// server listens) ends the run at startup with a screen of what the browser
// showed and a reason that says what to check.
func TestBrowserStartPageFailureHasScreen(t *testing.T) {
	t.Parallel()
	browserNeed(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	o := scriptRun(t, scriptRunSpec{scenario: `name: no server
app:
  command: [sleep, "30"]
  startup_timeout_s: 1
browser:
  start_url: http://` + addr + `/
  headless: true
steps:
  - observe_screen: {}
`})
	if o.res.Verdict != events.VerdictAppFailed || o.res.Outcome != OutcomeStartup {
		t.Fatalf("verdict %s/%s, want app-failed/startup-timeout: %v", o.res.Verdict, o.res.Outcome, o.res.Reasons)
	}
	if r := strings.Join(o.res.Reasons, "\n"); !strings.Contains(r, "check browser.start_url") {
		t.Errorf("reasons %q do not say what to check", r)
	}
	if o.rep.Screens == 0 {
		t.Error("no screen at the start page's failure")
	}
}

// TestBrowserAttachFailureWorded attaches to an address where nothing
// listens: test-error, with what was attempted and what to check.
func TestBrowserAttachFailureWorded(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there now
	o := scriptRun(t, scriptRunSpec{scenario: `name: attach nowhere
browser:
  mode: attach
  attach: ` + addr + `
steps:
  - cdp_url: {}
`})
	if o.res.Verdict != events.VerdictTestError || o.res.Outcome != OutcomeLaunchFailed {
		t.Fatalf("verdict %s/%s, want test-error/launch-failed: %v", o.res.Verdict, o.res.Outcome, o.res.Reasons)
	}
	r := strings.Join(o.res.Reasons, "\n")
	for _, w := range []string{"attach to the browser at " + addr + " failed: nothing answered there", "try checking browser.attach", "(attach to chromium: "} {
		if !strings.Contains(r, w) {
			t.Errorf("reasons lack %q:\n%s", w, r)
		}
	}
}
