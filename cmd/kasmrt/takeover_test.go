package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	kcdp "github.com/kasmrt/kasmrt/drivers/cdp"
	"github.com/kasmrt/kasmrt/drivers/vnc/vnctest"
	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/model/modeltest"
	"github.com/kasmrt/kasmrt/inbox"
	"github.com/kasmrt/kasmrt/internal/testkit"
	"github.com/kasmrt/kasmrt/serve"
)

// TestRunTakeoverRefusals: a takeover address other machines reach, one
// that is no address, and --takeover-pauses-deadline alone are bad input,
// and nothing launches.
func TestRunTakeoverRefusals(t *testing.T) {
	t.Setenv("KASM_RUNTIME_VISION_ENDPOINT", "http://127.0.0.1:9/v1")
	dir := t.TempDir()
	scenario := filepath.Join(dir, "takeover.yaml")
	if err := os.WriteFile(scenario, []byte(listenScenario), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"every interface", []string{"--takeover", "0.0.0.0:5900"}, "--takeover 0.0.0.0:5900 is not a loopback address: VNC authentication carries at most 8 password characters"},
		{"another machine's address", []string{"--takeover", "192.0.2.7:0"}, "short of the 128 bits an address other machines reach needs"},
		{"no port", []string{"--takeover", "127.0.0.1"}, `--takeover "127.0.0.1": want host:port`},
		{"a port out of range", []string{"--takeover", "127.0.0.1:70000"}, "the port must be a number from 0 to 65535"},
		{"IPv6 loopback", []string{"--takeover", "[::1]:5900"}, "the VNC server listens on IPv4 only; use 127.0.0.1"},
		{"pausing the deadline without a takeover", []string{"--takeover-pauses-deadline"}, "--takeover-pauses-deadline needs --takeover"},
	} {
		t.Run(c.name, func(t *testing.T) {
			report := filepath.Join(t.TempDir(), "report")
			code, _, stderr := kasmrt(t, append([]string{"run", scenario, "--headless", "--report", report}, c.args...)...)
			if code != exitBadInput || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, "nothing was launched") {
				t.Errorf("exit %d, stderr %q; want 3 with %q", code, stderr, c.want)
			}
			if _, err := os.Stat(report); !os.IsNotExist(err) {
				t.Errorf("a refused run left its report directory: %v", err)
			}
		})
	}
}

func TestTakeoverAddrIsLoopbackByDefault(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{":5900": "127.0.0.1:5900", "localhost:0": "localhost:0", "127.0.0.2:5901": "127.0.0.2:5901"} {
		if got, err := takeoverAddr(in); err != nil || got != want {
			t.Errorf("takeoverAddr(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// takenOver is a real run, started with --listen and --takeover, whose
// desktop the test has taken over through the API.
type takenOver struct {
	root, run string
	// typed is the file the xterm under test writes the line it reads to.
	typed  string
	model  *modeltest.Server
	exit   <-chan int
	report string
	// access is the takeover API's answer.
	access struct{ Addr, URL, Password, View string }
}

// takeOverRun starts a goal run around an xterm whose shell reads a line
// and writes it to a file, pauses it before its first turn over the API
// and takes its desktop over, which a paused loop grants at once.
func takeOverRun(t *testing.T) *takenOver {
	t.Helper()
	need(t, "Xvfb", "xterm", "x11vnc")
	r := startTakeoverRun(t, modeltest.Call("observe_screen", `{}`))
	if code, body := apiPost(t, r.root, listenToken, r.run+"/steer", `{"action":"pause"}`); code != http.StatusAccepted {
		t.Fatalf("pause: %d %s", code, body)
	}
	code, body := apiPost(t, r.root, listenToken, r.run+"/takeover", `{}`)
	if code != http.StatusOK || json.Unmarshal([]byte(body), &r.access) != nil || r.access.Password == "" {
		t.Fatalf("takeover: %d %s", code, body)
	}
	return r
}

// startTakeoverRun starts a goal run around an xterm whose shell reads a
// line and writes it to a file, with --listen and --takeover; the model
// makes the calls first and then records goal-met.
func startTakeoverRun(t *testing.T, first ...modeltest.Exchange) *takenOver {
	t.Helper()
	r := &takenOver{typed: filepath.Join(t.TempDir(), "typed")}
	scenario := `name: takeover
goal: Say whether the operator typed a line.
app:
  command: [xterm, -class, KasmTakeover, -geometry, 60x10+20+20, -e, sh, -c, 'IFS= read -r l; printf %s "$l" > ` + r.typed + `; exec sleep 3600']
  window: {class: KasmTakeover}
  startup_timeout_s: 10
`
	r.model = modeltest.New(t, append(first,
		modeltest.Call("record_verdict", `{"verdict": "goal-met", "reason": "the operator typed"}`))...)
	var addr string
	addr, r.exit, r.report = startListening(t, scenario,
		[]string{"KASM_RUNTIME_VISION_ENDPOINT=" + r.model.URL(), envToken + "=" + listenToken}, "--takeover", "127.0.0.1:0")
	r.root = "http://" + addr
	var runs struct{ Runs []struct{ Run string } }
	if code, body := apiGet(t, r.root, "/v1/runs"); code != http.StatusOK || json.Unmarshal([]byte(body), &runs) != nil || len(runs.Runs) != 1 {
		t.Fatalf("GET /v1/runs: %d %s", code, body)
	}
	r.run = "/v1/runs/" + runs.Runs[0].Run
	return r
}

// awaitTyped waits until the app has written the line want.
func (r *takenOver) awaitTyped(t *testing.T, want string) {
	t.Helper()
	for deadline := time.Now().Add(testkit.ScreenWait); ; time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile(r.typed)
		if err == nil && string(b) == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the app received %q, not the line the operator typed", b)
		}
	}
}

// typeByHand types line and Return into the app with a VNC client, waits
// until the app has it, and closes the client.
func (r *takenOver) typeByHand(t *testing.T, line string) {
	t.Helper()
	c, err := vnctest.Dial(r.access.Addr, r.access.Password)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Type(line); err != nil {
		t.Fatal(err)
	}
	if err := c.Key(vnctest.KeyReturn); err != nil {
		t.Fatal(err)
	}
	r.awaitTyped(t, line)
	c.Close()
}

// wantNoPassword fails when the VNC password is in a report file.
func (r *takenOver) wantNoPassword(t *testing.T) {
	t.Helper()
	_ = filepath.Walk(r.report, func(path string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			if b, _ := os.ReadFile(path); strings.Contains(string(b), r.access.Password) {
				t.Errorf("the VNC password is in %s", path)
			}
		}
		return nil
	})
}

// resume lets the run go on once the desktop is back, and checks that it
// ended passing, that the model's first turn heard of the takeover and
// that the viewer's leaving handed it back.
func (r *takenOver) resume(t *testing.T) {
	t.Helper()
	if code, body := apiPost(t, r.root, listenToken, r.run+"/steer", `{"action":"resume"}`); code != http.StatusAccepted {
		t.Fatalf("resume: %d %s", code, body)
	}
	if code := <-r.exit; code != 0 {
		t.Errorf("exit %d, want 0 (pass with the takeover's concern)", code)
	}
	reqs := r.model.Requests()
	if len(reqs) == 0 || !strings.Contains(string(reqs[0].Raw), "The operator took over the desktop") {
		t.Errorf("the model's first turn was not told of the takeover")
	}
	evs, err := os.ReadFile(filepath.Join(r.report, "events.jsonl"))
	if err != nil || !strings.Contains(string(evs), `"kind":"takeover.ended"`) || !strings.Contains(string(evs), `"ended":"client-left"`) {
		t.Errorf("events.jsonl has no takeover.ended for the viewer's leaving (%v)", err)
	}
	r.wantNoPassword(t)
}

// TestRunTakeoverOverTheAPI takes a real run over through run --listen's
// API: the operator pauses it, takes the desktop (the API answers the VNC
// address and the one-time password), types a line into the xterm under
// test with a VNC client and closes it, resumes, and the model's next
// turn is told of the takeover. The password is in no report file.
func TestRunTakeoverOverTheAPI(t *testing.T) {
	t.Parallel()
	r := takeOverRun(t)
	r.typeByHand(t, "by hand") // closing the client hands the desktop back
	r.resume(t)
}

// TestRunTakeoverWhileAQuestionWaits takes a real run over through the
// API while the model's ask_human question waits: the API answers the
// access at once, a line typed with a VNC client reaches the xterm under
// test, and closing the client hands the desktop back with the question
// still waiting. Answered then, the run goes on: the ask_human result the
// model gets carries the answer and the takeover's Environment Update, and
// the run passes with the takeover's concern.
func TestRunTakeoverWhileAQuestionWaits(t *testing.T) {
	t.Parallel()
	need(t, "Xvfb", "xterm", "x11vnc")
	r := startTakeoverRun(t, modeltest.Call("ask_human", `{"question": "Which file?"}`))
	f := follow(t, r.root)
	f.await(t, "the model's question", func(e events.Event) bool { return e.Kind == events.KindQuestion })
	code, body := apiPost(t, r.root, listenToken, r.run+"/takeover", `{}`)
	if code != http.StatusOK || json.Unmarshal([]byte(body), &r.access) != nil || r.access.Password == "" {
		t.Fatalf("takeover while the question waits: %d %s", code, body)
	}
	r.typeByHand(t, "by hand") // closing the client hands the desktop back
	f.await(t, "the hand-back", func(e events.Event) bool { return e.Kind == events.KindTakeoverEnded })
	if err := f.c.AnswerMarked("q1", "notes.txt", inbox.MarkPrivate); err != nil {
		t.Fatalf("answer q1 after the hand-back: %v", err)
	}
	if code := <-r.exit; code != 0 {
		t.Errorf("exit %d, want 0 (pass with the takeover's concern)", code)
	}
	reqs := r.model.Requests()
	if len(reqs) != 2 || !strings.Contains(string(reqs[1].Raw), `ref \"answer_q1\"\n\nEnvironment Update\nThe operator took over the desktop`) {
		t.Errorf("the ask_human result the model got does not carry the answer and then the takeover's Environment Update (%d requests)", len(reqs))
	}
	r.wantNoPassword(t)
}

// TestRunTakeoverInTheBrowser takes a real run over in a browser: the
// takeover's answer names its noVNC view, which headless Chromium opens
// with no token; keys typed on the page reach the xterm under test, and
// closing the browser hands the desktop back.
func TestRunTakeoverInTheBrowser(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat(kcdp.DefaultExecPath); err != nil {
		t.Skipf("Debian chromium is not installed at %s: %v", kcdp.DefaultExecPath, err)
	}
	if _, err := os.Stat(filepath.Join(serve.NoVNCDir, "core", "rfb.js")); err != nil {
		t.Skip("noVNC is not installed (bash scripts/setup.sh)")
	}
	r := takeOverRun(t)
	if r.access.View == "" {
		t.Fatal("the takeover's answer names no browser view")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(kcdp.DefaultExecPath), chromedp.NoSandbox, chromedp.Headless,
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1024, 768))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
	defer cancelTimeout()
	if err := chromedp.Do(ctx, chromedp.Navigate(r.root+r.access.View),
		chromedp.WaitReady(chromedp.CSS(`body[data-state="connected"]`)),
		chromedp.Evaluate[chromedp.Void](`document.querySelector("canvas").focus()`),
		chromedp.KeyEvent("in a browser\r")); err != nil {
		t.Fatalf("the browser view: %v", err)
	}
	r.awaitTyped(t, "in a browser")
	cancelCtx() // closing the browser closes the viewer: the desktop is handed back
	r.resume(t)
}

// apiGet gets path from the API at root with listenToken.
func apiGet(t *testing.T, root, path string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, root+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+listenToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
