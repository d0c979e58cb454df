package engine

import (
	"context"
	"fmt"
	"image/color"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/drivers/cdp"
	"github.com/kasmrt/kasmrt/drivers/proc"
	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/model/modeltest"
	"github.com/kasmrt/kasmrt/scenarios"
)

// The browser tests run in parallel with the package's other tests: each
// runs one Chromium (the attach test two), and go test runs at most
// -parallel (GOMAXPROCS, two on the project's machine) tests at once.

const browserSecret = "hunter2-engine-secret"

// browserLoginMux serves a small login flow: the form at /login, a POST to
// /login that redirects to /dashboard, where a #welcome banner appears a
// moment later, as in a single-page app.
func browserLoginMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><html><head><title>Login</title>
<style>body{margin:0;font:16px sans-serif} button{width:200px;height:50px;background:#2050d0;color:#2050d0;border:0}</style></head>
<body><h1>Sign in</h1>
<form method="post" action="/login">
<label for="user">Username</label> <input id="user" name="username"><br>
<label for="pass">Password</label> <input id="pass" name="password" type="password"><br>
<button type="submit">Log in</button>
</form>
<a href="/help">Help</a>
</body></html>`)
	})
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		if r.FormValue("password") != browserSecret {
			http.Error(w, "bad login", http.StatusForbidden)
			return
		}
		http.Redirect(w, r, "/dashboard?user="+r.FormValue("username"), http.StatusSeeOther)
	})
	mux.HandleFunc("GET /dashboard", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><html><head><title>Dashboard</title></head><body>
<div id="welcome" style="display:none">Welcome, %s</div>
<button onclick="document.getElementById('count').textContent = String(Number(document.getElementById('count').textContent) + 1)">Add one</button>
<span id="count">0</span>
<script>setTimeout(() => { document.getElementById('welcome').style.display = 'block' }, 150)</script>
</body></html>`, r.URL.Query().Get("user"))
	})
	return mux
}

func browserLoginServer(t testing.TB) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(browserLoginMux())
	t.Cleanup(srv.Close)
	return srv
}

func browserNeed(t *testing.T) {
	t.Helper()
	scriptNeed(t, "Xvfb")
	if _, err := os.Stat(cdp.DefaultExecPath); err != nil {
		t.Skipf("Debian chromium is not installed at %s: %v", cdp.DefaultExecPath, err)
	}
}

// browserNoSecret fails the test if the secret is in any file of the report.
func browserNoSecret(t *testing.T, reportDir string) {
	t.Helper()
	for _, name := range []string{"report.json", "events.jsonl", "app.log"} {
		b, err := os.ReadFile(filepath.Join(reportDir, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if strings.Contains(string(b), browserSecret) {
			t.Errorf("the secret value is in %s", name)
		}
	}
}

// browserLoginScenario logs in through the targets the author named.
const browserLoginScenario = `name: browser login steps
browser:
  start_url: URL/login
provides:
  user: demo
  password: {secret: {env: LOGIN_PASSWORD}}
cdp_targets:
  username: "input[name=username]"
  password: "input[name=password]"
  submit: "button[type=submit]"
  banner: "#welcome"
cdp_waits:
  dashboard: {url: /dashboard, timeout_s: 10}
  banner_shown: {target: banner, state: visible}
steps:
  - cdp_fill: {target: username, ref: user}
  - cdp_fill: {target: password, ref: password}
  - cdp_query: password
  - cdp_click: submit
  - cdp_wait: dashboard
  - cdp_wait: banner_shown
  - cdp_query: banner
  - cdp_url: {}
`

func TestBrowserScriptedLogin(t *testing.T) {
	t.Parallel()
	browserNeed(t)
	srv := browserLoginServer(t)
	o := scriptRun(t, scriptRunSpec{
		scenario: strings.ReplaceAll(browserLoginScenario, "URL", srv.URL),
		env:      map[string]string{"LOGIN_PASSWORD": browserSecret},
	})
	if o.res.Verdict != events.VerdictPass {
		t.Fatalf("verdict %s/%s, want pass; reasons %q; steps %+v", o.res.Verdict, o.res.Outcome, o.res.Reasons, o.rep.Steps)
	}
	want := []struct{ tool, msg string }{
		{"cdp_fill", `filled username with the value "user" (4 characters)`},
		{"cdp_fill", fmt.Sprintf(`filled password with the secret value "password" (%d characters)`, len(browserSecret))},
		{"cdp_query", "password: found, visible"},
		{"cdp_click", "clicked submit"},
		{"cdp_wait", "dashboard held"},
		{"cdp_wait", "banner_shown held"},
		{"cdp_query", `banner: found, visible, text "Welcome, demo"`},
		{"cdp_url", srv.URL + "/dashboard?user=demo"},
	}
	if len(o.rep.Steps) != len(want) {
		t.Fatalf("%d steps, want %d: %+v", len(o.rep.Steps), len(want), o.rep.Steps)
	}
	for i, w := range want {
		st := o.rep.Steps[i]
		if st.Tool != w.tool || st.Status != events.StatusOK || !strings.Contains(st.Message, w.msg) {
			t.Errorf("step %d = %s %s %q, want %s ok containing %q", i+1, st.Tool, st.Status, st.Message, w.tool, w.msg)
		}
	}
	// The page-changing tools leave a screen each; the reads do not.
	for i, st := range o.rep.Steps {
		changes := st.Tool != "cdp_query" && st.Tool != "cdp_url"
		if (st.Screen != "") != changes {
			t.Errorf("step %d (%s) screen %q", i+1, st.Tool, st.Screen)
		}
	}
	if c := o.rep.Checks; c.ProcessAlive == nil || !*c.ProcessAlive || c.WindowPresent == nil || !*c.WindowPresent {
		t.Errorf("checks %+v, want process_alive and window_present true for the browser", c)
	}
	// cdp_click says where it clicked, for the report's mark: on the
	// button, all blue in the screen before.
	var clicked *events.Point
	for _, e := range o.events {
		if e.Kind == events.KindStepEnded && e.Tool == "cdp_click" {
			clicked = e.Point
		}
	}
	if clicked == nil {
		t.Error("the cdp_click step has no point")
	} else if c := color.RGBAModel.Convert(maskScreens(t, o.info.reportDir)[filepath.Base(o.rep.Steps[1].Screen)].At(clicked.X, clicked.Y)).(color.RGBA); c.B < 0xa0 || c.R > 0x60 {
		t.Errorf("cdp_click's point (%d, %d) is %v, not on the blue button", clicked.X, clicked.Y, c)
	}
	if !slices.Contains(o.rep.Tools, "cdp_click_described") || !slices.Contains(o.rep.Tools, "cdp_fill") {
		t.Errorf("report tools %v lack the cdp tools", o.rep.Tools)
	}
	browserNoSecret(t, o.info.reportDir)
}

// TestBrowserGoalRun has the model list the page's elements, click one by
// the handle it read, and record its verdict.
func TestBrowserGoalRun(t *testing.T) {
	t.Parallel()
	browserNeed(t)
	srv := browserLoginServer(t)
	handle := regexp.MustCompile(`(e\d+) button "Add one"`)
	r := loopRun(t, loopCase{
		scenario: `name: browser goal
browser:
  start_url: ` + srv.URL + `/dashboard?user=demo
goal: Add one to the counter.
`,
		script: []modeltest.Exchange{
			modeltest.Call("cdp_list_interactive", `{"filter": "add"}`),
			modeltest.Func(func(req modeltest.Request) modeltest.Exchange {
				m := handle.FindStringSubmatch(loopLastText(req))
				if m == nil {
					return modeltest.Call("escalate", `{"reason": "no Add one button listed"}`)
				}
				return modeltest.Call("cdp_click_described", `{"handle": "`+m[1]+`"}`)
			}),
			modeltest.Call("cdp_click_described", `{"text": "nothing like this"}`),
			modeltest.Call("record_verdict", `{"verdict": "goal-met", "reason": "the counter went up"}`),
		},
	})
	loopWant(t, r, loopUnverified, OutcomeCompleted, 4, 0)
	loopWantSteps(t, r.rep,
		loopStep{"cdp_list_interactive", events.StatusOK, `button "Add one"`},
		loopStep{"cdp_click_described", events.StatusOK, `clicked e`},
		loopStep{"cdp_click_described", events.StatusError, `candidates: e`},
		loopStep{"record_verdict", events.StatusOK, "recorded goal-met"},
	)
	if len(r.reqs) == 0 {
		t.Fatal("the model got no request")
	}
	names := r.reqs[0].ToolNames()
	for _, want := range []string{"cdp_url", "cdp_list_interactive", "cdp_click_described"} {
		if !slices.Contains(names, want) {
			t.Errorf("the tools sent to the model %v lack %s", names, want)
		}
	}
	for _, absent := range []string{"cdp_query", "cdp_fill", "cdp_wait"} {
		if slices.Contains(names, absent) {
			t.Errorf("the tools sent to the model include %s without cdp_targets/cdp_waits", absent)
		}
	}
	var published bool
	for _, e := range r.events {
		if e.Kind == events.KindTools {
			published = true
		}
	}
	if !published {
		t.Error("no tools event announced the cdp tools")
	}
	var point *events.Point
	for _, e := range r.events {
		if e.Kind == events.KindStepEnded && e.Tool == "cdp_click_described" && e.Status == events.StatusOK {
			point = e.Point
		}
	}
	if point == nil || point.X <= 0 || point.Y <= 0 {
		t.Errorf("the described click's screen point is %v, want one on the screen", point)
	}
}

// TestBrowserKilledMidRun kills the browser under test while a step waits:
// process_alive fails and the verdict is app-failed.
func TestBrowserKilledMidRun(t *testing.T) {
	t.Parallel()
	browserNeed(t)
	srv := browserLoginServer(t)
	o := scriptRun(t, scriptRunSpec{
		scenario: `name: browser killed
browser:
  start_url: ` + srv.URL + `/login
steps:
  - cdp_url: {}
  - wait: 20
  - cdp_url: {}
`,
		onEvent: func(info scriptRunInfo, e events.Event) {
			if e.Kind == events.KindStepStarted && e.Tool == "wait" && info.appPID > 0 {
				_ = syscall.Kill(-info.appPID, syscall.SIGKILL)
			}
		},
	})
	if o.res.Verdict != events.VerdictAppFailed || o.res.Outcome != OutcomeAppExited {
		t.Fatalf("verdict %s/%s, want app-failed/%s; reasons %q", o.res.Verdict, o.res.Outcome, OutcomeAppExited, o.res.Reasons)
	}
	if len(o.rep.Steps) != 2 {
		t.Errorf("%d steps ran, want 2 (the run stops after the browser died)", len(o.rep.Steps))
	}
	if o.rep.Checks.ProcessAlive == nil || *o.rep.Checks.ProcessAlive {
		t.Errorf("process_alive = %v, want false", o.rep.Checks.ProcessAlive)
	}
	if ev := o.rep.Checks.Evidence["process_alive"]; !strings.Contains(ev, "killed by signal KILL") {
		t.Errorf("process_alive evidence %q does not say how the browser ended", ev)
	}
}

// TestBrowserAttach attaches to a Chromium the test started: the steps work
// its tab, and the run leaves that browser running.
func TestBrowserAttach(t *testing.T) {
	t.Parallel()
	browserNeed(t)
	srv := browserLoginServer(t)
	profile := t.TempDir()
	chrome, err := proc.Start(context.Background(), proc.Spec{Argv: []string{cdp.DefaultExecPath,
		"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
		"--user-data-dir=" + profile, "about:blank"}})
	if err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	t.Cleanup(func() { chrome.Stop(2 * time.Second) })
	port := browserDevToolsPort(t, profile)

	o := scriptRun(t, scriptRunSpec{
		scenario: `name: browser attach
browser:
  mode: attach
  attach: http://127.0.0.1:` + port + `
  start_url: ` + srv.URL + `/login
steps:
  - cdp_click_described: {text: Help}
  - cdp_url: {}
`,
	})
	if o.res.Verdict != events.VerdictPass {
		t.Fatalf("verdict %s/%s, want pass; reasons %q; steps %+v", o.res.Verdict, o.res.Outcome, o.res.Reasons, o.rep.Steps)
	}
	if got := o.rep.Steps[1].Message; got != srv.URL+"/help" {
		t.Errorf("cdp_url after the click = %q, want the help page", got)
	}
	if o.rep.Checks.ProcessAlive == nil || !*o.rep.Checks.ProcessAlive {
		t.Errorf("process_alive = %v, want true (the connection held)", o.rep.Checks.ProcessAlive)
	}
	if o.rep.Checks.WindowPresent != nil {
		t.Errorf("window_present = %v for an attached browser, want it skipped", *o.rep.Checks.WindowPresent)
	}
	if !chrome.Alive() {
		t.Fatal("the run stopped the browser it attached to")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	b, err := cdp.Attach(ctx, "http://127.0.0.1:"+port)
	if err != nil {
		t.Fatalf("attach after the run: %v", err)
	}
	defer b.Close()
	if u, err := b.Tab().URL(ctx); err != nil || u != srv.URL+"/help" {
		t.Errorf("after the run the tab shows %q (%v), want the page the run left", u, err)
	}
}

func browserDevToolsPort(t *testing.T, profile string) string {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(filepath.Join(profile, "DevToolsActivePort")); err == nil {
			if lines := strings.Split(string(b), "\n"); len(lines) >= 2 && lines[0] != "" {
				return lines[0]
			}
		}
	}
	t.Fatal("chromium wrote no DevToolsActivePort")
	return ""
}

// TestBrowserLoginExample runs scenarios/examples/browser-login.yaml with its
// operator file against a login page on a free port, the model replaying
// the calls a capable model would make.
func TestBrowserLoginExample(t *testing.T) {
	t.Parallel()
	browserNeed(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(browserLoginMux())
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)

	model := modeltest.New(t,
		modeltest.Call("cdp_fill", `{"target": "username", "ref": "user"}`),
		modeltest.Call("cdp_fill", `{"target": "password", "ref": "password"}`),
		modeltest.Call("cdp_click", `{"target": "submit"}`),
		modeltest.Call("cdp_wait", `{"name": "dashboard"}`),
		modeltest.Call("cdp_query", `{"target": "banner"}`),
		modeltest.Call("record_verdict", `{"verdict": "goal-met", "reason": "the dashboard greets the user"}`),
	)
	env := map[string]string{
		scenarios.EnvVisionEndpoint: model.URL() + "/v1",
		"MODEL_API_KEY":             "sk-test-key",
		"APP_PASSWORD":              browserSecret,
		"LOGIN_URL":                 srv.URL + "/login",
	}
	lookup := func(name string) (string, bool) {
		v, ok := env[name]
		return v, ok
	}
	files, err := scenarios.Load("../scenarios/examples/browser-login.yaml", "../scenarios/examples/operator-browser.yaml", lookup)
	if err != nil {
		t.Fatalf("load the example: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "report")
	runner, err := New(files, Options{ReportDir: dir, Display: "-", ModelSleep: loopSleep,
		Getenv: func(name string) string { return env[name] }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	res, err := runner.Run(ctx)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if res.Verdict != events.VerdictPass {
		t.Fatalf("verdict %s/%s, want pass; reasons %q", res.Verdict, res.Outcome, res.Reasons)
	}
	rep, _ := scriptReadReport(t, dir)
	if len(rep.Steps) != 6 {
		t.Fatalf("%d steps, want 6: %+v", len(rep.Steps), rep.Steps)
	}
	if msg := rep.Steps[4].Message; !strings.Contains(msg, `"Welcome, demo"`) {
		t.Errorf("cdp_query banner = %q, want the welcome", msg)
	}
	for _, req := range model.Requests() {
		if strings.Contains(req.Text(), browserSecret) {
			t.Fatal("a request to the model carries the secret value")
		}
	}
	browserNoSecret(t, dir)
}

// browserHelperPort, in the environment of this test binary, makes
// TestBrowserHelperServe serve the login flow on that port: the app of
// TestBrowserWithApp, a web server with no window of its own.
const browserHelperPort = "KASM_BROWSER_HELPER_PORT"

func TestBrowserHelperServe(t *testing.T) {
	port := os.Getenv(browserHelperPort)
	if port == "" {
		t.Skip("not a test: the app TestBrowserWithApp runs (needs " + browserHelperPort + ")")
	}
	// Listening late, after Chromium is up (about half a second here), is
	// what a real server does, and what the start page's retry is for.
	time.Sleep(time.Second)
	fmt.Println("helper: serving on port", port)
	err := http.ListenAndServe("127.0.0.1:"+port, browserLoginMux())
	t.Fatalf("serve: %v", err)
}

// TestBrowserWithApp runs an app that serves the page and a browser that
// shows it: process_alive follows the app, window_present the browser's
// window (the app has none), and the start page waits for the server.
func TestBrowserWithApp(t *testing.T) {
	t.Parallel()
	browserNeed(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	o := scriptRun(t, scriptRunSpec{
		scenario: `name: app behind a browser
app:
  command: [` + os.Args[0] + `, -test.run=^TestBrowserHelperServe$]
  env: {` + browserHelperPort + `: "` + port + `"}
  fatal_patterns: ["panic:"]
browser:
  start_url: http://127.0.0.1:` + port + `/login
provides:
  user: demo
  password: {secret: {env: LOGIN_PASSWORD}}
cdp_targets:
  username: "input[name=username]"
  password: "input[name=password]"
  submit: "button[type=submit]"
cdp_waits:
  dashboard: {url: /dashboard}
steps:
  - cdp_fill: {target: username, ref: user}
  - cdp_fill: {target: password, ref: password}
  - cdp_click: submit
  - cdp_wait: dashboard
`,
		env: map[string]string{"LOGIN_PASSWORD": browserSecret},
	})
	if o.res.Verdict != events.VerdictPass {
		t.Fatalf("verdict %s/%s, want pass; reasons %q; steps %+v", o.res.Verdict, o.res.Outcome, o.res.Reasons, o.rep.Steps)
	}
	if c := o.rep.Checks; c.ProcessAlive == nil || !*c.ProcessAlive || c.WindowPresent == nil || !*c.WindowPresent {
		t.Errorf("checks %+v, want process_alive (the app) and window_present (the browser) true", c)
	}
	var class string
	for _, e := range o.events {
		if e.Kind == events.KindAppWindow {
			d, _ := e.Data.(events.AppWindow)
			class = d.Class
		}
	}
	if !strings.EqualFold(class, "chromium") {
		t.Errorf("the window checked has class %q, want the browser's", class)
	}
	if !strings.Contains(o.appLog, "helper: serving on port "+port) {
		t.Errorf("app.log lacks the app's output:\n%s", o.appLog)
	}
	browserNoSecret(t, o.info.reportDir)
}

// BenchmarkBrowserGoalRun measures a whole goal run in a headful Chromium
// on Xvfb with an instant model: launch, the login through cdp_fill,
// cdp_click, cdp_wait and cdp_query, the verdict and the report. It reports
// the median duration of each cdp tool's step (the settled capture
// included for the page-changing ones).
func BenchmarkBrowserGoalRun(b *testing.B) {
	if _, err := os.Stat(cdp.DefaultExecPath); err != nil {
		b.Skipf("Debian chromium is not installed at %s: %v", cdp.DefaultExecPath, err)
	}
	srv := browserLoginServer(b)
	sc := strings.ReplaceAll(browserLoginScenario, "URL", srv.URL)
	sc = sc[:strings.Index(sc, "steps:")] + "goal: Log in.\n"
	byTool := map[string][]int64{}
	for b.Loop() {
		r := loopRun(b, loopCase{
			scenario: sc,
			env:      map[string]string{"LOGIN_PASSWORD": browserSecret},
			script: []modeltest.Exchange{
				modeltest.Call("cdp_fill", `{"target": "username", "ref": "user"}`),
				modeltest.Call("cdp_fill", `{"target": "password", "ref": "password"}`),
				modeltest.Call("cdp_click", `{"target": "submit"}`),
				modeltest.Call("cdp_wait", `{"name": "banner_shown"}`),
				modeltest.Call("cdp_query", `{"target": "banner"}`),
				modeltest.Call("cdp_list_interactive", `{}`),
				modeltest.Call("cdp_click_described", `{"text": "Add one"}`),
				modeltest.Call("record_verdict", `{"verdict": "goal-met", "reason": "logged in"}`),
			},
		})
		if r.rep.Verdict != loopUnverified {
			b.Fatalf("verdict %s/%s: %q %+v", r.rep.Verdict, r.rep.Outcome, r.rep.Reasons, r.rep.Steps)
		}
		for _, st := range r.rep.Steps {
			byTool[st.Tool] = append(byTool[st.Tool], st.DurationMS)
		}
	}
	for tool, ds := range byTool {
		if !strings.HasPrefix(tool, "cdp_") {
			continue
		}
		slices.Sort(ds)
		b.ReportMetric(float64(ds[len(ds)/2]), "ms/"+tool)
	}
}

func TestListInteractiveIsCapped(t *testing.T) {
	t.Parallel()
	many := make([]cdp.Element, 100)
	for i := range many {
		many[i] = cdp.Element{Handle: fmt.Sprintf("e%d", i+1), Role: "button", Name: fmt.Sprintf("Button %d", i+1)}
	}
	tests := []struct {
		name, filter string
		els          []cdp.Element
		want         []string
		lines        int
	}{
		{"none", "", nil, []string{"the page has no interactive elements"}, 1},
		{"none match", "zz", nil, []string{`no interactive elements match "zz"`}, 1},
		{"two", "", many[:2], []string{"2 interactive elements", `e1 button "Button 1"`, `e2 button "Button 2"`}, 3},
		{"capped", "", many, []string{"100 interactive elements", `e60 button "Button 60"`, "40 more not shown; narrow the list with a filter"}, 62},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := listInteractive(tt.els, tt.filter, func(s string) string { return s })
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("list lacks %q:\n%s", w, got)
				}
			}
			if n := strings.Count(got, "\n") + 1; n != tt.lines {
				t.Errorf("%d lines, want %d:\n%s", n, tt.lines, got)
			}
		})
	}
}

func TestDescribeState(t *testing.T) {
	t.Parallel()
	tests := []struct {
		st   cdp.ElementState
		want string
	}{
		{cdp.ElementState{}, "banner: not found"},
		{cdp.ElementState{Found: true}, "banner: found, hidden"},
		{cdp.ElementState{Found: true, Visible: true, Text: " Welcome "}, `banner: found, visible, text "Welcome"`},
		{cdp.ElementState{Found: true, Visible: true, Value: "demo"}, `banner: found, visible, value "demo"`},
	}
	for _, tt := range tests {
		if got := describeState("banner", tt.st, func(s string) string { return s }); got != tt.want {
			t.Errorf("describeState(%+v) = %q, want %q", tt.st, got, tt.want)
		}
	}
}

// browserWantPageScreen checks that a saved screen is a page: as wide as
// the window, no taller (the viewport is the window less Chromium's own
// frame), and mostly white, where the empty X root would be black.
func browserWantPageScreen(t *testing.T, path string, w, h int) {
	t.Helper()
	img := readScreen(t, path)
	b := img.Bounds()
	if b.Dx() != w || b.Dy() > h || b.Dy() < h/2 {
		t.Errorf("screen %s is %dx%d, want the viewport of a %dx%d window", path, b.Dx(), b.Dy(), w, h)
	}
	white := 0
	for y := b.Min.Y; y < b.Max.Y; y += 10 {
		for x := b.Min.X; x < b.Max.X; x += 10 {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r > 0xf000 && g > 0xf000 && bl > 0xf000 {
				white++
			}
		}
	}
	if total := (b.Dx() / 10) * (b.Dy() / 10); white < total/2 {
		t.Errorf("screen %s is %d/%d white, want the page", path, white, total)
	}
}

// TestBrowserHeadless runs the browser under test headless: there is no
// window to check, and the screens come from the page at the session's
// size, also right after a click that follows a link (where a capture can
// stall and is asked again).
func TestBrowserHeadless(t *testing.T) {
	t.Parallel()
	browserNeed(t)
	srv := browserLoginServer(t)
	o := scriptRun(t, scriptRunSpec{
		scenario: `name: headless browser
browser:
  start_url: ` + srv.URL + `/login
  headless: true
steps:
  - observe_screen: {}
  - cdp_click_described: {text: Help}
`,
	})
	if o.res.Verdict != events.VerdictPass {
		t.Fatalf("verdict %s/%s, want pass; reasons %q; steps %+v", o.res.Verdict, o.res.Outcome, o.res.Reasons, o.rep.Steps)
	}
	if o.rep.Checks.WindowPresent != nil {
		t.Errorf("window_present = %v for a headless browser, want it skipped", *o.rep.Checks.WindowPresent)
	}
	for _, st := range o.rep.Steps {
		browserWantPageScreen(t, filepath.Join(o.info.reportDir, st.Screen), 1280, 800)
	}
}
