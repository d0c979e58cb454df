package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/model/modeltest"
	"github.com/kasmrt/kasmrt/inbox"
	"github.com/kasmrt/kasmrt/internal/testkit"
	"github.com/kasmrt/kasmrt/tui/remote"
)

const listenToken = "listen-t0ken-5f1e"

// listenScenario is a goal run against xterm whose model asks the
// operator a question and then waits until it is aborted.
const listenScenario = `name: listen xterm
goal: Ask the operator which greeting to type, then wait.
app:
  command: [xterm, -class, KasmListen, -geometry, 60x10+20+20, -e, sleep, '3600']
  window: {class: KasmListen}
  startup_timeout_s: 10
`

// listenModel observes, asks a question and then waits, a turn at a time,
// for as long as the run goes on.
func listenModel(t *testing.T) *modeltest.Server {
	script := []modeltest.Exchange{
		modeltest.Call("observe_screen", `{}`),
		modeltest.Call("ask_human", `{"question": "Which greeting should I type?"}`),
	}
	for range 40 {
		script = append(script, modeltest.Call("wait", `{"seconds": 1}`))
	}
	return modeltest.New(t, script...)
}

// startListeningRun runs listenScenario with --listen as its own process,
// with env added to the test's environment, and returns the server's
// address once the run announces it, the exit code when the run ends and
// the report directory. The run is killed if the test ends first.
func startListeningRun(t *testing.T, env []string, extra ...string) (addr string, exit <-chan int, report string) {
	t.Helper()
	return startListening(t, listenScenario, env, extra...)
}

// startListening is startListeningRun with a scenario of the test's own.
func startListening(t *testing.T, scenarioText string, env []string, extra ...string) (addr string, exit <-chan int, report string) {
	t.Helper()
	dir := t.TempDir()
	scenario := testkit.WriteFile(t, dir, "listen.yaml", scenarioText)
	report = filepath.Join(dir, "report")
	cmd := exec.Command(kasmrtBinary(t), append([]string{"run", scenario, "--headless", "--display", "-", "--listen", "127.0.0.1:0", "--report", report}, extra...)...)
	cmd.Env = append(os.Environ(), append([]string{"DISPLAY="}, env...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start kasmrt run --listen: %v", err)
	}
	code := make(chan int, 1)
	found := make(chan string, 1)
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if _, rest, ok := strings.Cut(sc.Text(), "kasmrt attach http://"); ok {
				select {
				case found <- strings.TrimSuffix(rest, ")"):
				default:
				}
			}
		}
		_ = cmd.Wait()
		code <- cmd.ProcessState.ExitCode()
	}()
	t.Cleanup(func() {
		select {
		case <-ended:
		default:
			_ = cmd.Process.Kill()
			<-ended
		}
	})
	select {
	case addr = <-found:
	case c := <-code:
		t.Fatalf("the run ended (exit %d) before it served", c)
	case <-time.After(testkit.ScreenWait):
		t.Fatal("the run never said where it serves")
	}
	return addr, code, report
}

// dropFirstStream proxies to target and cuts the first event stream after
// n events, as a network drop would.
func dropFirstStream(t *testing.T, target string, n int) *httptest.Server {
	u, _ := url.Parse("http://" + target)
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.FlushInterval = -1
	var streams atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/events") && streams.Add(1) == 1 {
			proxy.ServeHTTP(&cutAfter{ResponseWriter: w, left: n}, r)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// cutAfter aborts the response after `left` Server-Sent Events.
type cutAfter struct {
	http.ResponseWriter
	left int
}

func (c *cutAfter) Write(b []byte) (int, error) {
	if c.left <= 0 {
		panic(http.ErrAbortHandler)
	}
	c.left -= strings.Count(string(b), "\n\n")
	return c.ResponseWriter.Write(b)
}

func (c *cutAfter) Flush() { c.ResponseWriter.(http.Flusher).Flush() }

// follower collects what one attached client sees.
type follower struct {
	c    *remote.Client
	mu   sync.Mutex
	evs  []events.Event
	done chan error
}

func follow(t *testing.T, base string) *follower {
	t.Helper()
	c, err := remote.Dial(t.Context(), base, listenToken, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &follower{c: c, done: make(chan error, 1)}
	go func() {
		f.done <- c.Follow(t.Context(), func(e events.Event) {
			f.mu.Lock()
			f.evs = append(f.evs, e)
			f.mu.Unlock()
		}, nil)
	}()
	return f
}

// await waits until one of the follower's events satisfies ok.
func (f *follower) await(t *testing.T, what string, ok func(events.Event) bool) events.Event {
	t.Helper()
	deadline := time.Now().Add(testkit.ScreenWait)
	for time.Now().Before(deadline) {
		f.mu.Lock()
		for _, e := range f.evs {
			if ok(e) {
				f.mu.Unlock()
				return e
			}
		}
		f.mu.Unlock()
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no %s reached the attached client", what)
	return events.Event{}
}

// TestRunListenServesEventsAnswersAndSteering runs a goal run against
// xterm with --listen and two attached clients, one of them behind a
// connection that drops: both see every event once, in order; an answer
// from one reaches the model and leaves the other nothing to answer; an
// abort from the other ends the run as aborted.
func TestRunListenServesEventsAnswersAndSteering(t *testing.T) {
	t.Parallel()
	need(t, "Xvfb", "xterm")
	model := listenModel(t)
	addr, exit, report := startListeningRun(t, []string{"KASM_RUNTIME_VISION_ENDPOINT=" + model.URL(), envToken + "=" + listenToken})

	resp, err := http.Get("http://" + addr + "/v1/runs")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no token: %d, want 401", resp.StatusCode)
	}

	direct := follow(t, "http://"+addr)
	dropped := follow(t, dropFirstStream(t, addr, 3).URL)
	isQuestion := func(e events.Event) bool { return e.Kind == events.KindQuestion }
	q := direct.await(t, "question", isQuestion)
	dropped.await(t, "question", isQuestion)
	// Which greeting to type is a choice the model must read: the
	// operator marks the answer shareable.
	if err := direct.c.AnswerMarked(q.Question.ID, "the friendly one", inbox.MarkShareable); err != nil {
		t.Fatalf("answer: %v", err)
	}
	isAnswer := func(e events.Event) bool {
		return e.Kind == events.KindAnswer && e.Question.Answer == "the friendly one"
	}
	a := dropped.await(t, "answer", isAnswer)
	if a.Question.By != "attach" {
		t.Errorf("answered by %q, want attach", a.Question.By)
	}
	if err := dropped.c.AnswerMarked(q.Question.ID, "too late", ""); err == nil || !strings.Contains(err.Error(), "409") {
		t.Errorf("a second answer: %v, want a 409 conflict", err)
	}
	dropped.await(t, "wait step after the answer", func(e events.Event) bool { return e.Kind == events.KindStepEnded && e.Tool == "wait" })
	if err := dropped.c.Steer(events.Steer{Action: events.SteerAbort, Reason: "seen enough"}); err != nil {
		t.Fatalf("abort: %v", err)
	}
	select {
	case c := <-exit:
		if c != exitTestError {
			t.Errorf("exit %d, want %d (aborted)", c, exitTestError)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the run did not end after the abort")
	}
	for _, f := range []*follower{direct, dropped} {
		if err := <-f.done; err != nil {
			t.Errorf("follow: %v", err)
		}
		for i, e := range f.evs {
			if e.Seq != int64(i+1) {
				t.Fatalf("event %d has seq %d: lost or repeated", i+1, e.Seq)
			}
		}
		if last := f.evs[len(f.evs)-1]; last.Kind != events.KindRunEnded {
			t.Errorf("the stream ends with %s, want run.ended", last.Kind)
		}
		if _, err := os.Stat(filepath.Join(f.c.Dir(), "screens", "0001.png")); err != nil {
			t.Errorf("the first screen was not mirrored: %v", err)
		}
	}
	rep, _ := readReport(t, report)
	if rep.Verdict != "test-error" || rep.Outcome != "aborted" {
		t.Errorf("verdict %s (%s), want test-error (aborted)", rep.Verdict, rep.Outcome)
	}
	answered := false
	for _, r := range model.Requests() {
		answered = answered || strings.Contains(r.Text(), "the friendly one")
	}
	if !answered {
		t.Error("the answer never reached the model")
	}
	b, _ := json.Marshal(rep)
	if strings.Contains(string(b), listenToken) {
		t.Error("the token is in the report")
	}
}

// TestRunListenRefusals: a public address without a token or with one
// too short to resist guessing there, a token file other users can read,
// a token file without --listen and a busy port are bad input, and
// nothing launches.
func TestRunListenRefusals(t *testing.T) {
	t.Setenv(envToken, "")
	dir := t.TempDir()
	scenario := filepath.Join(dir, "listen.yaml")
	if err := os.WriteFile(scenario, []byte(listenScenario), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KASM_RUNTIME_VISION_ENDPOINT", "http://127.0.0.1:9/v1")
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(listenToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	shortToken := filepath.Join(dir, "short-token")
	if err := os.WriteFile(shortToken, []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sharedToken := filepath.Join(dir, "shared-token")
	if err := os.WriteFile(sharedToken, []byte(strings.Repeat("5f1e", 8)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(sharedToken, 0o644); err != nil {
		t.Fatal(err)
	}
	publicInbox := filepath.Join(dir, "public-inbox.yaml")
	if err := os.WriteFile(publicInbox, []byte("inbox:\n  listen: 0.0.0.0:0\n  session_token: abc123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"public without a token", []string{"--listen", "0.0.0.0:0"}, "is not a loopback address: set a token"},
		{"public with a 1-character token", []string{"--listen", "0.0.0.0:0", "--token-file", shortToken}, "too short to guard an address other machines can reach: about 5 bits, at least 128"},
		{"inbox.listen public with a short token", []string{"-o", publicInbox}, "the token of inbox.listen 0.0.0.0:0 (inbox.session_token) is too short"},
		{"a token file others can read", []string{"--listen", "127.0.0.1:0", "--token-file", sharedToken}, "is open to other users (mode 0644)"},
		{"token file without --listen", []string{"--token-file", tokenFile}, "--token-file is the token of --listen"},
		{"busy port", []string{"--listen", busy.Addr().String(), "--token-file", tokenFile}, "address already in use"},
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

// TestRunListenWebhookAnswers: the webhook's receiver gets the question
// with the URL to answer it at, answers there with the bearer token, and
// the answer reaches the model.
func TestRunListenWebhookAnswers(t *testing.T) {
	t.Parallel()
	need(t, "Xvfb", "xterm")
	model := listenModel(t)
	env := []string{"KASM_RUNTIME_VISION_ENDPOINT=" + model.URL(), envToken + "=" + listenToken, "LISTEN_HOOK_TOKEN=hook-t0ken-77"}
	answered := make(chan error, 1)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n struct {
			Question  struct{ ID, Text string }
			AnswerURL string `json:"answer_url"`
		}
		if err := json.NewDecoder(r.Body).Decode(&n); err != nil || r.Header.Get("Authorization") != "Bearer hook-t0ken-77" {
			answered <- fmt.Errorf("notice: %v, Authorization %q", err, r.Header.Get("Authorization"))
			return
		}
		go func() {
			req, _ := http.NewRequest("POST", n.AnswerURL, strings.NewReader(`{"answer": "from the webhook", "by": "chat"}`))
			req.Header.Set("Authorization", "Bearer "+listenToken)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					err = fmt.Errorf("answer at %s: %s", n.AnswerURL, resp.Status)
				}
			}
			answered <- err
		}()
	}))
	defer hook.Close()
	op := testkit.WriteFile(t, t.TempDir(), "operator.yaml", "inbox:\n  notify:\n    webhook:\n      url: "+hook.URL+"\n      headers: {Authorization: 'Bearer ${LISTEN_HOOK_TOKEN}'}\n")
	addr, exit, report := startListeningRun(t, env, "-o", op)
	select {
	case err := <-answered:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(testkit.ScreenWait):
		t.Fatal("the webhook never answered")
	}
	f := follow(t, "http://"+addr)
	f.await(t, "the webhook's answer", func(e events.Event) bool {
		return e.Kind == events.KindAnswer && e.Question.Answer == "from the webhook" && e.Question.By == "chat"
	})
	f.await(t, "a step after the answer", func(e events.Event) bool { return e.Kind == events.KindStepEnded && e.Tool == "wait" })
	if err := f.c.Steer(events.Steer{Action: events.SteerAbort}); err != nil {
		t.Fatal(err)
	}
	<-exit
	rep, raw := readReport(t, report)
	if len(rep.Questions) != 1 || rep.Questions[0].Answer != "from the webhook" || len(rep.Concerns) != 0 {
		t.Errorf("questions %+v, concerns %q", rep.Questions, rep.Concerns)
	}
	if strings.Contains(raw, "hook-t0ken-77") {
		t.Error("the webhook's token is in report.json")
	}
}

// TestAttachFollowsAServedSession attaches a client to kasmrt serve's one
// open session by the server's URL: the agent's calls appear as steps, and
// an abort from the attached operator ends the session as aborted.
func TestAttachFollowsAServedSession(t *testing.T) {
	t.Parallel()
	need(t, "Xvfb", "xterm")
	dir := t.TempDir()
	scen := filepath.Join(dir, "scenarios")
	testkit.WriteFile(t, scen, "xterm.yaml", mcpScenario)
	_, endpoint := startServe(t, scen, filepath.Join(dir, "reports"), listenToken)
	root := strings.TrimSuffix(endpoint, "/mcp")
	post := func(path, body string) (int, string) { return apiPost(t, root, listenToken, path, body) }
	if _, err := remote.Dial(t.Context(), root, listenToken, t.TempDir()); err == nil || !strings.Contains(err.Error(), "no run or open session") {
		t.Errorf("attach to an empty server: %v", err)
	}
	code, body := post("/v1/sessions", `{"scenario":"xterm.yaml"}`)
	var opened struct{ Session string }
	if code != http.StatusCreated || json.Unmarshal([]byte(body), &opened) != nil {
		t.Fatalf("open: %d %s", code, body)
	}
	f := follow(t, root)
	if f.c.Info.Run != opened.Session {
		t.Errorf("attached to %+v, want session %s", f.c.Info, opened.Session)
	}
	if code, body := post("/v1/sessions/"+opened.Session+"/calls", `{"tool":"observe_screen"}`); code != http.StatusOK {
		t.Fatalf("call: %d %s", code, body)
	}
	f.await(t, "the agent's step", func(e events.Event) bool {
		return e.Kind == events.KindStepEnded && e.Tool == "observe_screen" && e.Source == events.SourceAgent
	})
	if err := f.c.Steer(events.Steer{Action: events.SteerPause}); err == nil {
		t.Error("a session took pause")
	}
	if err := f.c.Steer(events.Steer{Action: events.SteerAbort, Reason: "from the console"}); err != nil {
		t.Fatal(err)
	}
	code, body = post("/v1/sessions/"+opened.Session+"/close", "")
	if code != http.StatusOK || !strings.Contains(body, `"outcome":"aborted"`) {
		t.Errorf("close: %d %s", code, body)
	}
	f.await(t, "run.ended", func(e events.Event) bool { return e.Kind == events.KindRunEnded })
}

// TestRunListenRedactsTheRunsDescription: a goal that names a secret is
// served, in the list of runs and in the run's own description, with the
// secret redacted, as the run's events have it.
func TestRunListenRedactsTheRunsDescription(t *testing.T) {
	t.Parallel()
	need(t, "Xvfb", "xterm")
	const secret = "hunter2-Secr3t-9d1"
	model := listenModel(t)
	env := []string{"KASM_RUNTIME_VISION_ENDPOINT=" + model.URL(), envToken + "=" + listenToken, "APP_PASSWORD=" + secret}
	scenario := strings.Replace(listenScenario, "then wait.", "then wait; the password is ${APP_PASSWORD}.", 1) +
		"provides:\n  password: {secret: {env: APP_PASSWORD}}\n"
	addr, exit, _ := startListening(t, scenario, env)
	c := follow(t, "http://"+addr)
	c.await(t, "question", func(e events.Event) bool { return e.Kind == events.KindQuestion })
	for _, route := range []string{"/v1/runs", strings.TrimPrefix(c.c.URL(), "http://"+addr)} {
		req, err := http.NewRequest(http.MethodGet, "http://"+addr+route, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+listenToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "the password is") {
			t.Errorf("GET %s: %d %s, want the run's description", route, resp.StatusCode, body)
		}
		if strings.Contains(string(body), secret) {
			t.Errorf("GET %s serves the secret: %s", route, body)
		}
	}
	if err := c.c.Steer(events.Steer{Action: events.SteerAbort, Reason: "seen enough"}); err != nil {
		t.Fatalf("abort: %v", err)
	}
	select {
	case <-exit:
	case <-time.After(60 * time.Second):
		t.Fatal("the run did not end after the abort")
	}
	<-c.done
}
