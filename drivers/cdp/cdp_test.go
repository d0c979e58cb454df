package cdp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/drivers/proc"
	"github.com/kasmrt/kasmrt/internal/testkit"
)

const secretPassword = "hunter2-kasm-secret"

// loginServer serves a small login flow: a form at /, a POST to /login that
// redirects to /dashboard, where a #welcome banner greets the user.
func loginServer(t testing.TB) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, `<!doctype html><html><head><title>Login</title>
<style>body{margin:0;font:16px sans-serif} #go{background:#e01b24;color:#fff;border:0;width:200px;height:60px}</style></head>
<body><h1>Sign in</h1>
<form method="post" action="/login">
<label for="user">Username</label> <input id="user" name="username"><br>
<label for="pass">Password</label> <input id="pass" name="password" type="password"><br>
<button id="go" type="submit">Sign in</button>
</form>
<p id="note" style="display:none">hidden note</p>
<a href="/forgot-password">Forgot password</a> <a href="/forgot-username">Forgot username</a>
</body></html>`)
	})
	mux.HandleFunc("/login", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.FormValue("password") != secretPassword {
			http.Error(w, "bad login", http.StatusForbidden)
			return
		}
		http.Redirect(w, r, "/dashboard?user="+r.FormValue("username"), http.StatusSeeOther)
	})
	mux.HandleFunc("/dashboard", func(w http.ResponseWriter, r *http.Request) {
		// The banner appears a little later, as in a real single-page app,
		// so Wait has something to wait for.
		fmt.Fprintf(w, `<!doctype html><html><head><title>Dashboard</title></head><body>
<div id="welcome" style="display:none">Welcome, %s</div>
<button onclick="document.getElementById('count').textContent = String(Number(document.getElementById('count').textContent) + 1)">Add one</button>
<span id="count">0</span>
<script>setTimeout(() => { document.getElementById('welcome').style.display = 'block' }, 150)</script>
</body></html>`, r.URL.Query().Get("user"))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func requireChromium(t *testing.T) {
	t.Helper()
	testkit.SkipIntegration(t)
	if _, err := os.Stat(DefaultExecPath); err != nil {
		t.Skipf("Debian chromium is not installed at %s: %v", DefaultExecPath, err)
	}
}

func launch(t *testing.T, opts LaunchOptions) *Browser {
	t.Helper()
	testkit.SkipIntegration(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := Launch(ctx, opts)
	if err != nil {
		t.Fatalf("Launch: %v", err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func callCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// groupRunning lists the live (non-zombie) processes of process group pgid.
func groupRunning(pgid int) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		f := strings.Fields(s[i+1:])
		if len(f) < 3 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		if g, _ := strconv.Atoi(f[2]); g == pgid {
			pids = append(pids, pid)
		}
	}
	return pids
}

func handleOf(t testing.TB, els []Element, role, name string) Element {
	t.Helper()
	for _, e := range els {
		if e.Role == role && e.Name == name {
			return e
		}
	}
	t.Fatalf("no %s %q among %v", role, name, els)
	return Element{}
}

// TestHeadlessLoginFlow drives the whole login flow in one headless
// browser, step by step, and checks that Close leaves no process behind.
func TestHeadlessLoginFlow(t *testing.T) {
	t.Parallel()
	requireChromium(t)
	srv := loginServer(t)
	b := launch(t, LaunchOptions{Headless: true, StartURL: srv.URL + "/"})
	tab := b.Tab()
	ctx := callCtx(t)

	if err := tab.Wait(ctx, WaitSpec{Selector: "#go"}); err != nil {
		t.Fatalf("Wait for the form: %v", err)
	}
	if u, err := tab.URL(ctx); err != nil || u != srv.URL+"/" {
		t.Fatalf("URL = %q, %v; want %q", u, err, srv.URL+"/")
	}

	els, err := tab.ListInteractive(ctx, "")
	if err != nil {
		t.Fatalf("ListInteractive: %v", err)
	}
	user := handleOf(t, els, "textbox", "Username")
	handleOf(t, els, "textbox", "Password")
	submit := handleOf(t, els, "button", "Sign in")
	handleOf(t, els, "link", "Forgot password")
	if submit.Box.Dx() != 200 || submit.Box.Dy() != 60 {
		t.Errorf("Sign in box %v, want 200x60 as styled", submit.Box)
	}
	if !strings.HasPrefix(user.Handle, "e") {
		t.Errorf("handle %q, want e<number>", user.Handle)
	}

	t.Run("filter", func(t *testing.T) {
		got, err := tab.ListInteractive(ctx, "forgot")
		if err != nil {
			t.Fatalf("ListInteractive: %v", err)
		}
		if len(got) != 2 {
			t.Errorf("filter forgot: %v, want the two links", got)
		}
	})

	t.Run("query", func(t *testing.T) {
		tests := []struct {
			selector string
			want     ElementState
		}{
			{"#go", ElementState{Found: true, Visible: true, Text: "Sign in", Count: 1}},
			{"#note", ElementState{Found: true, Visible: false, Text: "hidden note", Count: 1}},
			{"#nothing", ElementState{}},
			{"h1", ElementState{Found: true, Visible: true, Text: "Sign in", Count: 1}},
			{"input", ElementState{Found: true, Visible: true, Count: 2}},
		}
		for _, tt := range tests {
			got, err := tab.Query(ctx, tt.selector)
			if err != nil {
				t.Errorf("Query(%s): %v", tt.selector, err)
				continue
			}
			if got != tt.want {
				t.Errorf("Query(%s) = %+v, want %+v", tt.selector, got, tt.want)
			}
		}
		var selErr *SelectorError
		if _, err := tab.Query(ctx, "##bad"); !errors.As(err, &selErr) {
			t.Errorf("Query(##bad) error %v, want *SelectorError", err)
		}
	})

	t.Run("errors", func(t *testing.T) {
		_, err := tab.ClickDescribed(ctx, "", "Forgot")
		var amb *AmbiguousError
		if !errors.As(err, &amb) || len(amb.Candidates) != 2 || !errors.Is(err, ErrAmbiguous) {
			t.Errorf("ClickDescribed(text Forgot) error %v, want *AmbiguousError with 2 candidates", err)
		}
		_, err = tab.ClickDescribed(ctx, "", "Launch rockets")
		var nf *DescribedNotFoundError
		if !errors.As(err, &nf) || !errors.Is(err, ErrNotFound) || len(nf.Candidates) != len(els) {
			t.Errorf("ClickDescribed(text Launch rockets) error %v, want *DescribedNotFoundError listing %d candidates", err, len(els))
		}
		if err != nil && !strings.Contains(err.Error(), `"Sign in"`) {
			t.Errorf("not-found error %q does not list the candidates", err)
		}
		if _, err = tab.ClickDescribed(ctx, "e999999", ""); !errors.As(err, &nf) {
			t.Errorf("ClickDescribed(handle e999999) error %v, want *DescribedNotFoundError", err)
		}
		if _, err = tab.ClickDescribed(ctx, "", ""); err == nil {
			t.Error("ClickDescribed with neither handle nor text: no error")
		}
		var snf *SelectorNotFoundError
		if err := tab.Click(ctx, "#missing"); !errors.As(err, &snf) || !errors.Is(err, ErrNotFound) {
			t.Errorf("Click(#missing) error %v, want *SelectorNotFoundError", err)
		}
		if err := tab.Fill(ctx, "#missing", secretPassword); err == nil || strings.Contains(err.Error(), secretPassword) {
			t.Errorf("Fill(#missing) error %v: want an error that does not hold the value", err)
		}
		short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		err = tab.Wait(short, WaitSpec{Selector: "#welcome"})
		var wt *WaitTimeoutError
		if !errors.As(err, &wt) || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(wt.Last, "#welcome absent") {
			t.Errorf("Wait(#welcome) on the login page: %v, want a *WaitTimeoutError that saw it absent", err)
		}
		if err := tab.Wait(ctx, WaitSpec{Selector: "#go", State: "shiny"}); err == nil {
			t.Error("Wait with state shiny: no error")
		}
	})

	t.Run("fill and submit", func(t *testing.T) {
		// Type over an existing value, to prove Fill clears first.
		if err := tab.Fill(ctx, "#user", "somebody else"); err != nil {
			t.Fatalf("Fill: %v", err)
		}
		if _, err := tab.ClickDescribed(ctx, user.Handle, ""); err != nil {
			t.Fatalf("ClickDescribed(handle %s): %v", user.Handle, err)
		}
		if err := tab.Fill(ctx, "#user", "alice"); err != nil {
			t.Fatalf("Fill user: %v", err)
		}
		if err := tab.Fill(ctx, "#pass", secretPassword); err != nil {
			t.Fatalf("Fill password: %v", err)
		}
		st, err := tab.Query(ctx, "#user")
		if err != nil || st.Value != "alice" {
			t.Fatalf("Query(#user) = %+v, %v; want value alice", st, err)
		}
		st, err = tab.Query(ctx, "#pass")
		if err != nil || st.Value != "" || !st.Found {
			t.Errorf("Query(#pass) = %+v, %v; want found with its value withheld", st, err)
		}
		after, err := tab.ListInteractive(ctx, "")
		if err != nil {
			t.Fatalf("ListInteractive: %v", err)
		}
		if s := fmt.Sprint(after); strings.Contains(s, secretPassword) {
			t.Errorf("ListInteractive shows the password: %s", s)
		}
		if got := handleOf(t, after, "textbox", "Username"); got.Handle != user.Handle || got.Text != "alice" {
			t.Errorf("username after fill: %v; want the same handle %s and text alice", got, user.Handle)
		}
		if _, err := tab.ClickDescribed(ctx, "", "sign in"); err != nil {
			t.Fatalf("ClickDescribed(text sign in): %v", err)
		}
		if err := tab.Wait(ctx, WaitSpec{URLContains: "/dashboard", Selector: "#welcome", State: StateVisible}); err != nil {
			t.Fatalf("Wait for the dashboard: %v", err)
		}
		st, err = tab.Query(ctx, "#welcome")
		if err != nil || st.Text != "Welcome, alice" {
			t.Errorf("Query(#welcome) = %+v, %v; want text Welcome, alice", st, err)
		}
		// The old page's handles are gone with it.
		var nf *DescribedNotFoundError
		if _, err := tab.ClickDescribed(ctx, submit.Handle, ""); !errors.As(err, &nf) {
			t.Errorf("ClickDescribed(stale handle %s) error %v, want *DescribedNotFoundError", submit.Handle, err)
		}
	})

	t.Run("click by selector", func(t *testing.T) {
		for range 2 {
			if err := tab.Click(ctx, "button"); err != nil {
				t.Fatalf("Click(button): %v", err)
			}
		}
		if st, err := tab.Query(ctx, "#count"); err != nil || st.Text != "2" {
			t.Errorf("Query(#count) = %+v, %v; want 2 after two clicks", st, err)
		}
		if err := tab.Navigate(ctx, srv.URL+"/"); err != nil {
			t.Fatalf("Navigate: %v", err)
		}
		if err := tab.Wait(ctx, WaitSpec{Selector: "#welcome", State: StateAbsent}); err != nil {
			t.Errorf("Wait(#welcome absent) after navigating back: %v", err)
		}
	})

	t.Run("screenshot", func(t *testing.T) {
		img, err := tab.Screenshot(ctx)
		if err != nil {
			t.Fatalf("Screenshot: %v", err)
		}
		if img.Bounds().Dx() != 1280 || img.Bounds().Dy() < 600 {
			t.Errorf("screenshot %v, want the 1280-wide viewport", img.Bounds())
		}
	})

	pid := b.PID()
	if len(groupRunning(pid)) < 2 {
		t.Errorf("chromium group %d has %v, want the browser and its helpers", pid, groupRunning(pid))
	}
	if err := b.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if left := groupRunning(pid); len(left) > 0 {
		t.Errorf("processes of chromium group %d left after Close: %v", pid, left)
	}
	if _, err := tab.URL(ctx); err == nil {
		t.Error("URL after Close: no error")
	}
}

// TestAttachLeavesBrowserRunning attaches to a Chromium the test started,
// works its tab, and checks that Close only disconnects.
func TestAttachLeavesBrowserRunning(t *testing.T) {
	requireChromium(t)
	srv := loginServer(t)
	profile := t.TempDir()
	// The test's own Chromium, in its own process group so that the check
	// below can see it survive and the cleanup can end all of it.
	chrome, err := proc.Start(context.Background(), proc.Spec{Argv: []string{DefaultExecPath,
		"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
		"--user-data-dir=" + profile, srv.URL + "/"}})
	if err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	t.Cleanup(func() { chrome.Stop(2 * time.Second) })
	var port string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(profile + "/DevToolsActivePort"); err == nil {
			if lines := strings.Split(string(b), "\n"); len(lines) >= 2 {
				port = lines[0]
				break
			}
		}
	}
	if port == "" {
		t.Fatal("chromium wrote no DevToolsActivePort")
	}

	ctx := callCtx(t)
	{
		url := "http://127.0.0.1:" + port
		b, err := Attach(ctx, url)
		if err != nil {
			t.Fatalf("Attach(%s): %v", url, err)
		}
		if b.PID() != 0 {
			t.Errorf("PID of an attached browser = %d, want 0", b.PID())
		}
		tab := b.Tab()
		if err := tab.Wait(ctx, WaitSpec{Selector: "#go"}); err != nil {
			t.Fatalf("Wait(#go) in the attached tab: %v", err)
		}
		if _, err := tab.ClickDescribed(ctx, "", "Forgot password"); err != nil {
			t.Fatalf("ClickDescribed: %v", err)
		}
		if err := tab.Wait(ctx, WaitSpec{URLContains: "/forgot-password"}); err != nil {
			t.Fatalf("Wait for the link's page: %v", err)
		}
		ws := b.DebuggerURL()
		if err := b.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if !chrome.Alive() || len(groupRunning(chrome.PID())) < 2 {
			t.Fatal("Close of an attached browser stopped it")
		}
		// The browser and its tab are still there for the next client,
		// which can come by websocket address too.
		b2, err := Attach(ctx, ws)
		if err != nil {
			t.Fatalf("Attach(%s) again: %v", ws, err)
		}
		if u, err := b2.Tab().URL(ctx); err != nil || !strings.HasSuffix(u, "/forgot-password") {
			t.Errorf("URL after re-attach = %q, %v; want the page the first client left", u, err)
		}
		b2.Close()
	}

	if _, err := Attach(ctx, "http://127.0.0.1:1"); err == nil {
		t.Error("Attach to a closed port: no error")
	}
}

// TestClickPoint clicks elements where a user would find them: one far
// below the fold is scrolled to first, one with padding on one side only
// is hit inside its box, and a hidden or missing one, or a selector that
// is not one, is an error naming what was wrong.
func TestClickPoint(t *testing.T) {
	t.Parallel()
	requireChromium(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><html><head><title>Click</title>
<style>body{font:16px sans-serif;margin:20px} button{width:160px;height:40px}</style></head><body>
<button id="near" onclick="this.textContent='clicked'">near</button>
<button id="padded" style="padding-left:120px;width:auto" onclick="this.textContent='clicked'">padded</button>
<button id="hidden" style="display:none">hidden</button>
<div style="height:4000px"></div>
<button id="far" onclick="this.textContent='clicked'">far</button>
</body></html>`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	b := launch(t, LaunchOptions{Headless: true, StartURL: srv.URL + "/"})
	tab := b.Tab()
	ctx := callCtx(t)
	if err := tab.Wait(ctx, WaitSpec{Selector: "#far"}); err != nil {
		t.Fatal(err)
	}
	for _, sel := range []string{"#near", "#padded", "#far"} {
		at, err := tab.ClickPoint(ctx, sel)
		if err != nil {
			t.Errorf("ClickPoint(%s): %v", sel, err)
			continue
		}
		if st, err := tab.Query(ctx, sel); err != nil || st.Text != "clicked" {
			t.Errorf("after ClickPoint(%s) at %v: %+v, %v; want it clicked", sel, at, st, err)
		}
		if at.Y < 0 || at.Y > 800 {
			t.Errorf("ClickPoint(%s) at %v: outside the viewport", sel, at)
		}
	}
	var notFound *SelectorNotFoundError
	if _, err := tab.ClickPoint(ctx, "#missing"); !errors.As(err, &notFound) {
		t.Errorf("ClickPoint(#missing): %v, want *SelectorNotFoundError", err)
	}
	var bad *SelectorError
	if _, err := tab.ClickPoint(ctx, "##bad"); !errors.As(err, &bad) {
		t.Errorf("ClickPoint(##bad): %v, want *SelectorError", err)
	}
	if _, err := tab.ClickPoint(ctx, "#hidden"); !errors.Is(err, errNotRendered) {
		t.Errorf("ClickPoint(#hidden): %v, want the element not rendered", err)
	}
}
