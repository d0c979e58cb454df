package engine

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/model/modeltest"
)

// checksExample returns an example scenario's text.
func checksExample(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../scenarios/examples/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checksAllOK fails the test unless every step ran ok and those with an
// expect: say what they checked.
func checksAllOK(t *testing.T, o scriptOutcome, steps int) {
	t.Helper()
	if len(o.rep.Steps) != steps {
		t.Fatalf("%d steps, want %d: %+v", len(o.rep.Steps), steps, o.rep.Steps)
	}
	for i, st := range o.rep.Steps {
		if st.Status != events.StatusOK {
			t.Errorf("step %d (%s) %s: %s", i+1, st.Tool, st.Status, st.Message)
		}
	}
}

// The docs site is the HTML manual of Debian's aptitude-doc-en, served
// locally; the example walks it by link, by declared URL and by checks.
const checksDocsRoot = "/usr/share/doc/aptitude/html/en"

// checksDocsServer serves the manual on 127.0.0.1 with the standard
// library's file server, as a documentation site would be.
func checksDocsServer(t *testing.T) *httptest.Server {
	t.Helper()
	if _, err := os.Stat(checksDocsRoot + "/index.html"); err != nil {
		t.Skipf("the aptitude-doc-en package is not installed (scripts/setup.sh installs it): %v", err)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(checksDocsRoot)))
	t.Cleanup(srv.Close)
	return srv
}

// TestExpectDocsExample runs the multi-page browser example against the
// real manual: every step holds and the run passes. `go test -count=10
// -run TestExpectDocsExample ./engine/` repeats it, as docs/dev/measurements.md
// ("Test time") describes for the real-session tests.
func TestExpectDocsExample(t *testing.T) {
	t.Parallel()
	browserNeed(t)
	srv := checksDocsServer(t)
	o := scriptRun(t, scriptRunSpec{scenario: checksExample(t, "browser-docs.yaml"), env: map[string]string{"DOCS_URL": srv.URL}})
	o.want(t, events.VerdictPass, OutcomeCompleted)
	checksAllOK(t, o, 5)
	for n, want := range map[int]string{
		1: `the window title contains "aptitude user's manual"`,
		2: `the window title equals "Introduction - Chromium"`,
		3: fmt.Sprintf("opened reference (%s/ch02.html)", srv.URL),
		4: `the window title contains "frequently asked questions"`,
	} {
		if msg := o.step(t, n).Message; !strings.Contains(msg, want) {
			t.Errorf("step %d message %q lacks %q", n, msg, want)
		}
	}
}

// checksFormPage is a page whose elements each check reads: a heading, an
// input with a value, three items, a banner that appears late and one that
// never shows.
const checksFormPage = `<!doctype html><html><head><title>Orders</title></head><body>
<h1>Open   orders</h1>
<input id="qty" value="3">
<ul><li>a</li><li>b</li><li>c</li></ul>
<div id="late" style="display:none">Saved</div>
<div id="never" style="display:none">Never</div>
<script>setTimeout(() => { document.getElementById('late').style.display = 'block' }, 400)</script>
</body></html>`

// TestExpectPageElements checks the cdp checks on a real Chromium: they
// pass when the page agrees, a banner that appears late included, and fail
// the step, app-failed, when it does not within its bound. How each kind
// of disagreement is worded is TestRulesExpectPage's (on the double).
func TestExpectPageElements(t *testing.T) {
	t.Parallel()
	browserNeed(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, checksFormPage)
	}))
	t.Cleanup(srv.Close)
	const head = `name: page checks
browser: {start_url: URL/, headless: true}
cdp_targets: {heading: h1, qty: "#qty", items: li, late: "#late", never: "#never", nothing: ".nothing"}
steps:
`
	cases := []struct {
		name    string
		step    string
		verdict events.Verdict
		outcome events.Outcome
		message string // in the last step's message
	}{
		{"all hold", `  - expect:
      cdp:
        heading: {text: Open orders, visible: true}
        qty: {value: "3"}
        items: {count: 3, text_contains: a}
        late: {visible: true, text: Saved, within_s: 3}
        never: {visible: false}
        nothing: {present: false, count: 0}
`, events.VerdictPass, OutcomeCompleted, `cdp target late: visible, text "Saved"`},
		{"text differs", "  - expect: {within_s: 1, cdp: {heading: {text: Closed orders}}}\n",
			events.VerdictAppFailed, OutcomeStepFailed, `expected cdp target heading: text "Closed orders" (within 1s); found heading: found, visible, text "Open orders" (1 match)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := scriptRun(t, scriptRunSpec{scenario: strings.ReplaceAll(head, "URL", srv.URL) + tc.step})
			o.want(t, tc.verdict, tc.outcome)
			last := o.step(t, len(o.rep.Steps))
			if !strings.Contains(last.Message, tc.message) {
				t.Errorf("step message %q lacks %q", last.Message, tc.message)
			}
		})
	}
}

// TestExpectFormExample runs the scripted login example with its value,
// count, text and absence checks against the login app of the browser
// tests.
func TestExpectFormExample(t *testing.T) {
	t.Parallel()
	browserNeed(t)
	srv := browserLoginServer(t)
	o := scriptRun(t, scriptRunSpec{scenario: checksExample(t, "browser-form-steps.yaml"),
		env: map[string]string{"LOGIN_URL": srv.URL + "/login", "APP_PASSWORD": browserSecret}})
	o.want(t, events.VerdictPass, OutcomeCompleted)
	checksAllOK(t, o, 4)
	if msg := o.step(t, 1).Message; !strings.Contains(msg, `cdp target username: value "demo"`) {
		t.Errorf("step 1 message %q", msg)
	}
	browserNoSecret(t, o.info.reportDir)
}

// checksTitleApp is an xterm that renames its window to "Saved <line>"
// after reading a line.
const checksTitleApp = `
app:
  command: [xterm, -class, KasmChecks, -T, kasm checks, -geometry, 60x10+10+10, -e, sh, -c,
    'read -r name; printf "\033]2;Saved %s\007" "$name"; exec sleep 3600']
  window: {class: KasmChecks}
  startup_timeout_s: 10
provides:
  doc: report.txt
`

// checksExitApp is an xmessage whose default button exits with status 3
// (xterm would not do: it exits 0 whatever its child's status).
const checksExitApp = `
app:
  command: [xmessage, -title, kasm exit, -buttons, "done:3", -default, done, "Finished?"]
  window: {title: kasm exit}
  startup_timeout_s: 10
`

// TestExpectTitleAndExit checks the window title (equals and contains,
// including a change the app makes after input) and the app's exit code
// on a real xterm and xmessage; TestRulesExpectWindowTitle and
// TestRulesExpectExitCode (on the double) check how a disagreement is
// worded.
func TestExpectTitleAndExit(t *testing.T) {
	t.Parallel()
	scriptNeed(t, "xterm", "xmessage")
	cases := []struct {
		name, app, steps string
		verdict          events.Verdict
		outcome          events.Outcome
		message          string
	}{
		{"title holds", checksTitleApp, `  - expect: {window_title: {equals: kasm checks}}
  - type_text: doc
  - press_key: Return
    expect: {window_title: {contains: Saved report.txt}}
`, events.VerdictPass, OutcomeCompleted, `the window title contains "Saved report.txt"`},
		{"exit code holds", checksExitApp, "  - press_key: Return\n    expect: {exit_code: 3}\n",
			events.VerdictPass, OutcomeCompleted, "the application exited with code 3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := scriptRun(t, scriptRunSpec{scenario: "name: title and exit checks" + tc.app + "steps:\n" + tc.steps})
			o.want(t, tc.verdict, tc.outcome)
			last := o.step(t, len(o.rep.Steps))
			if !strings.Contains(last.Message, tc.message) {
				t.Errorf("step message %q lacks %q", last.Message, tc.message)
			}
		})
	}
}

// TestExpectControls runs the GTK widget factory example, a third-party
// app: accessible control states and the control under a click target
// hold over a real AT-SPI bus, and the app exits as the example expects.
// How a disagreeing control is worded is checked on the double
// (TestRulesClickElement, TestRulesExpectPoint).
func TestExpectControls(t *testing.T) {
	t.Parallel()
	scriptNeed(t, "gtk3-widget-factory", "dbus-daemon")
	o := scriptRun(t, scriptRunSpec{scenario: checksExample(t, "gtk3-widget-factory.yaml")})
	o.want(t, events.VerdictPass, OutcomeCompleted)
	if last := o.step(t, len(o.rep.Steps)); !strings.Contains(last.Message, "the application exited with code 0") {
		t.Errorf("step message %q lacks the exit", last.Message)
	}
}

// TestExpectControlsWithoutAccessibility: an app that publishes no
// controls cannot answer a control check; that is the scenario's mistake,
// a test error, not the app's failure.
func TestExpectControlsWithoutAccessibility(t *testing.T) {
	t.Parallel()
	scriptNeed(t, "xterm")
	o := scriptRun(t, scriptRunSpec{scenario: "name: no controls" + checksTitleApp +
		"steps:\n  - expect: {controls: {OK: {enabled: true}}}\n"})
	o.want(t, events.VerdictTestError, OutcomeStepError, `cannot check that the control "OK" is enabled`)
}

// TestNavigateGoalRun: the model opens pages by the names the scenario
// declares; a URL of its own is not one of them and is refused as a
// malformed call, so nothing is opened.
func TestNavigateGoalRun(t *testing.T) {
	t.Parallel()
	browserNeed(t)
	srv := checksDocsServer(t)
	r := loopRun(t, loopCase{
		scenario: `name: manual goal
browser:
  start_url: ` + srv.URL + `/index.html
  headless: true
cdp_urls:
  faq: ch03.html
  credits: ch04.html
goal: Open the FAQ.
`,
		script: []modeltest.Exchange{
			modeltest.Call("cdp_navigate", `{"target": "http://example.com/"}`),
			modeltest.Call("cdp_navigate", `{"target": "faq"}`),
			modeltest.Call("cdp_url", `{}`),
			modeltest.Call("record_verdict", `{"verdict": "goal-met", "reason": "the FAQ is open"}`),
		},
	})
	loopWant(t, r, loopUnverified, OutcomeCompleted, 4, 1)
	loopWantSteps(t, r.rep,
		loopStep{"cdp_navigate", events.StatusMalformed, `cdp_navigate.target: "http://example.com/" is not one of credits, faq`},
		loopStep{"cdp_navigate", events.StatusOK, "opened faq (" + srv.URL + "/ch03.html)"},
		loopStep{"cdp_url", events.StatusOK, srv.URL + "/ch03.html"},
		loopStep{"record_verdict", events.StatusOK, "recorded goal-met"},
	)
	if !strings.Contains(string(r.reqs[0].Raw), `"enum":["credits","faq"]`) || !slices.Contains(r.reqs[0].ToolNames(), "cdp_navigate") {
		t.Errorf("the model's tool list does not offer cdp_navigate with the declared names only: %s", r.reqs[0])
	}
	if slices.Contains(r.reqs[0].ToolNames(), "expect") {
		t.Error("the model was offered the scripted-only expect tool")
	}
}

// TestExpectScreenText reads the text on screen with tesseract: the xterm
// example's greeting is found after Return, and a text that never shows
// fails the step with what was read.
func TestExpectScreenText(t *testing.T) {
	t.Parallel()
	scriptNeed(t, "xterm", "tesseract")
	example := checksExample(t, "xterm-greeting.yaml")
	cases := []struct {
		name, scenario string
		verdict        events.Verdict
		outcome        events.Outcome
		message        string
	}{
		{"example", example, events.VerdictPass, OutcomeCompleted, `the screen shows "Hello, Ada Lovelace!"`},
		{"text never shows", strings.Replace(example, `screen_text: {contains: "Hello, Ada Lovelace!"}`,
			`screen_text: {contains: "Goodbye, Ada", within_s: 2}`, 1),
			events.VerdictAppFailed, OutcomeStepFailed, `expected the screen shows "Goodbye, Ada" (within 2s); found the text read "`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := scriptRun(t, scriptRunSpec{scenario: tc.scenario, env: map[string]string{"KASM_DEMO_DIR": t.TempDir()}})
			o.want(t, tc.verdict, tc.outcome)
			found := false
			for _, st := range o.rep.Steps {
				found = found || strings.Contains(st.Message, tc.message)
			}
			if !found {
				t.Errorf("no step message has %q: %+v", tc.message, o.rep.Steps)
			}
		})
	}
}
