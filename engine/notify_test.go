package engine

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/engine/events"
	mt "github.com/kasmrt/kasmrt/engine/model/modeltest"
	"github.com/kasmrt/kasmrt/inbox"
	"github.com/kasmrt/kasmrt/scenarios"
)

const (
	hookSecret = "hook-Secr3t-4a7c"
	// hookPath is a chat service's secret webhook path.
	hookPath = "services/T0-pathSecr3t-88"
)

// TestWebhookNotice: a live receiver gets a JSON notice of the question
// with the secret header and answers it; a dead receiver and one that
// never replies each give a concern and the run goes on to its verdict.
// The header's secret value is in no file of the report.
func TestWebhookNotice(t *testing.T) {
	t.Parallel()
	ask := mt.Call("ask_human", `{"question": "Which greeting should I type?"}`)
	op := func(url, timeout, answerTimeout string) string {
		return loopOp("", "") + "inbox:\n  session_token: s3cret-console-token\n  answer_timeout_s: " + answerTimeout +
			"\n  notify:\n    webhook:\n      url: " + url + "\n      timeout_s: " + timeout +
			"\n      headers:\n        Authorization: Bearer ${HOOK_TOKEN}\n"
	}
	env := map[string]string{"HOOK_TOKEN": hookSecret}
	wantSecretNowhere := func(t *testing.T, dir string) {
		t.Helper()
		_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if b, _ := os.ReadFile(path); strings.Contains(string(b), hookSecret) || strings.Contains(string(b), hookPath) {
				t.Errorf("%s holds the webhook's secret header value or URL", path)
			}
			return nil
		})
	}

	t.Run("a live receiver answers", func(t *testing.T) {
		t.Parallel()
		var run *Runner
		notices := make(chan QuestionNotice, 1)
		auth := make(chan string, 1)
		hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var n QuestionNotice
			b, _ := io.ReadAll(r.Body)
			if err := json.Unmarshal(b, &n); err != nil || r.Header.Get("Content-Type") != "application/json" {
				t.Errorf("the notice is not JSON: %v %s", err, b)
			}
			auth <- r.Header.Get("Authorization")
			notices <- n
			// Which greeting to type is a choice the model must read, so the
			// answer is shareable.
			go func() {
				_ = run.Inbox().AnswerMarked(n.Question.ID, "the provided one", "webhook", inbox.MarkShareable)
			}()
		}))
		defer hook.Close()
		r := loopRun(t, loopCase{machine: &fakeMachine{}, operator: op(hook.URL+"/hook", "2", "10"), env: env,
			script: []mt.Exchange{ask, loopGoalMet}, before: func(r *Runner) { run = r }})
		loopWant(t, r, loopUnverified, OutcomeCompleted, 2, 0)
		n := <-notices
		if n.Kind != "kasmrt.question" || n.Question.ID != "q1" || n.Question.Text != "Which greeting should I type?" || n.Report != r.dir {
			t.Errorf("notice %+v", n)
		}
		if got := <-auth; got != "Bearer "+hookSecret {
			t.Errorf("the receiver got Authorization %q", got)
		}
		loopWantSteps(t, r.rep, loopStep{"ask_human", "ok", "the operator answered: the provided one"}, loopStep{"record_verdict", "ok", ""})
		wantSecretNowhere(t, r.dir)
	})
	for name, c := range map[string]struct {
		url  func(t *testing.T) string
		want string
	}{
		"a dead receiver": {func(*testing.T) string { return "http://127.0.0.1:1/" + hookPath }, "connection refused"},
		// The HTTP client names the URL as it re-encodes it, which is not
		// the operator file's text the redaction knows.
		"a dead receiver at a URL the client re-encodes": {func(*testing.T) string { return "HTTP://127.0.0.1:1/" + hookPath + "/é" }, "connection refused"},
		"a receiver that never replies": {func(t *testing.T) string {
			release := make(chan struct{})
			hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
			t.Cleanup(func() { close(release); hook.Close() })
			return hook.URL
		}, "no reply within 0.5 s"},
		// A redirect is not followed: the notice and its credential header
		// would go to a host the operator never named.
		"a receiver that redirects": {func(t *testing.T) string {
			elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				t.Errorf("the redirect was followed: the other host got Authorization %q", r.Header.Get("Authorization"))
			}))
			t.Cleanup(elsewhere.Close)
			hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, elsewhere.URL+"/collect", http.StatusTemporaryRedirect)
			}))
			t.Cleanup(hook.Close)
			return hook.URL
		}, "307 Temporary Redirect"},
		"a receiver that refuses": {func(t *testing.T) string {
			hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusForbidden) }))
			t.Cleanup(hook.Close)
			return hook.URL
		}, "403 Forbidden"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := loopRun(t, loopCase{machine: &fakeMachine{}, operator: op(c.url(t), "0.5", "0.3"), env: env, script: []mt.Exchange{ask, loopGoalMet}})
			loopWant(t, r, events.VerdictPassConcerns, OutcomeCompleted, 2, 0)
			// The goal declares no success criteria: that is the second concern.
			if len(r.rep.Concerns) != 2 || r.rep.Concerns[1] != nothingVerified || !strings.Contains(r.rep.Concerns[0], "the webhook was not told of question q1") || !strings.Contains(r.rep.Concerns[0], c.want) {
				t.Errorf("concerns %q, want one naming q1 and %q", r.rep.Concerns, c.want)
			}
			wantSecretNowhere(t, r.dir)
		})
	}
}

// TestWebhookNoticeNeverHoldsTheRun: a question answered while its notice
// is still on its way goes on at once; the receiver here replies only
// after the run has moved past the question, and the notice's fate is
// still told before the run ends.
func TestWebhookNoticeNeverHoldsTheRun(t *testing.T) {
	t.Parallel()
	ask := mt.Call("ask_human", `{"question": "Which greeting should I type?"}`)
	var run *Runner
	movedOn := make(chan struct{})
	var once sync.Once
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n QuestionNotice
		_ = json.NewDecoder(r.Body).Decode(&n)
		if err := run.Inbox().Answer(n.Question.ID, "the provided one", "console"); err != nil {
			t.Errorf("answer: %v", err)
		}
		select {
		case <-movedOn:
		case <-r.Context().Done():
		}
	}))
	defer hook.Close()
	op := loopOp("", "") + "inbox:\n  session_token: s3cret-console-token\n  answer_timeout_s: 20\n  notify:\n    webhook:\n      url: " + hook.URL + "\n      timeout_s: 3\n"
	r := loopRun(t, loopCase{machine: &fakeMachine{}, operator: op, script: []mt.Exchange{ask, loopGoalMet},
		before: func(r *Runner) { run = r },
		sink: func(_ *Runner, e events.Event) {
			if e.Kind == events.KindStepEnded && e.Tool == "ask_human" {
				once.Do(func() { close(movedOn) })
			}
		}})
	loopWant(t, r, loopUnverified, OutcomeCompleted, 2, 0)
	told := false
	for _, e := range r.events {
		told = told || e.Kind == events.KindLog && e.Message == "the webhook was told of question q1"
	}
	if !told {
		t.Errorf("the run never said the webhook was told of q1; concerns %q", r.rep.Concerns)
	}
}

// TestWebhookNoticeAnswerURL: the notice says where to answer: under the
// published address when the run is served behind one, else at the run's
// own listener, with the question's ID escaped; nowhere without either.
func TestWebhookNoticeAnswerURL(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, c := range []struct {
		name string
		r    *Runner
		want string
	}{
		{"published", &Runner{opts: Options{Published: "https://runs.example/r1"}, inboxListener: ln}, "https://runs.example/r1/questions/q%2F1/answer"},
		{"listening", &Runner{inboxListener: ln}, "http://" + ln.Addr().String() + "/questions/q%2F1/answer"},
		{"neither", &Runner{}, ""},
	} {
		if got := (&notifier{r: c.r}).answerURL("q/1"); got != c.want {
			t.Errorf("%s: answer URL %q, want %q", c.name, got, c.want)
		}
	}
}

// TestWebhookNoticeFreesItsPlace: a notice the run has heard back from is
// no longer in flight, so the next question gets a notice even when only
// one may be in flight at once.
func TestWebhookNoticeFreesItsPlace(t *testing.T) {
	t.Parallel()
	hook := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer hook.Close()
	n := &notifier{
		r:    &Runner{files: &scenarios.Files{Scenario: &scenarios.Scenario{Name: "rules"}}},
		hook: &scenarios.WebhookConfig{URL: hook.URL}, client: hook.Client(), timeout: time.Second,
		inFlight: 1, results: make(chan noticeResult, 1),
	}
	for _, id := range []string{"q1", "q2"} {
		n.question(inbox.Question{ID: id, Text: "Go on?"})
		got := n.settle(context.Background())
		if len(got) != 1 || got[0].question != id || got[0].err != nil {
			t.Fatalf("settled %+v, want %s told", got, id)
		}
	}
	if unsent := n.takeUnsent(); unsent != 0 {
		t.Errorf("%d questions got no notice", unsent)
	}
}
