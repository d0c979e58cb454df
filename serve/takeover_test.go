package serve

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine"
	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/inbox"
)

// takeoverRun is a published run that can be taken over.
type takeoverRun struct {
	dir   string
	taken bool
	// asked, when set, is the model's question waiting for an answer: as
	// the engine does, the run hands the desktop over all the same.
	asked string
}

func (r *takeoverRun) ReportDir() string        { return r.dir }
func (r *takeoverRun) Inbox() *inbox.Inbox      { return nil }
func (r *takeoverRun) Steer(events.Steer) error { return nil }
func (r *takeoverRun) TakeOver(context.Context, string) (engine.TakeoverAccess, error) {
	r.taken = true
	return engine.TakeoverAccess{Addr: "127.0.0.1:5901", URL: "vnc://127.0.0.1:5901", Password: "Pw3xK9mQ"}, nil
}

func (r *takeoverRun) TakenOver() (engine.TakeoverAccess, bool) {
	return engine.TakeoverAccess{Password: "Pw3xK9mQ"}, r.taken
}

func (r *takeoverRun) HandBack() error {
	if !r.taken {
		return engine.ErrNotTakenOver
	}
	r.taken = false
	return nil
}

// plainRun is a published run that cannot be taken over.
type plainRun struct{ dir string }

func (r plainRun) ReportDir() string        { return r.dir }
func (r plainRun) Inbox() *inbox.Inbox      { return nil }
func (r plainRun) Steer(events.Steer) error { return nil }

// TestTakeoverRoutes takes a published run's desktop over and hands it
// back over the API; a run without the takeover answers 409.
func TestTakeoverRoutes(t *testing.T) {
	t.Parallel()
	m, _ := testManager(t, t.Context())
	srv := httptest.NewServer(NewHandler(m, HTTPOptions{Token: apiToken}))
	defer srv.Close()
	run := &takeoverRun{dir: t.TempDir() + "/r-takeover"}
	defer m.Publish(RunInfo{Name: "t"}, run)()
	defer m.Publish(RunInfo{Name: "p"}, plainRun{dir: t.TempDir() + "/r-plain"})()

	resp, body := apiDo(t, srv, "POST", "/v1/runs/r-takeover/handback", "", nil)
	if resp.StatusCode != http.StatusConflict {
		t.Errorf("hand back before a takeover: %d %s", resp.StatusCode, body)
	}
	resp, body = apiDo(t, srv, "POST", "/v1/runs/r-takeover/takeover", "{}", nil)
	var acc engine.TakeoverAccess
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &acc) != nil || acc.Password != "Pw3xK9mQ" || acc.Addr != "127.0.0.1:5901" {
		t.Fatalf("takeover: %d %s", resp.StatusCode, body)
	}
	if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("the password's answer has Cache-Control %q, want no-store", cc)
	}
	resp, body = apiDo(t, srv, "POST", "/v1/runs/r-takeover/handback", "", nil)
	if resp.StatusCode != http.StatusAccepted || run.taken {
		t.Errorf("hand back: %d %s", resp.StatusCode, body)
	}
	resp, body = apiDo(t, srv, "POST", "/v1/runs/r-plain/takeover", "{}", nil)
	if resp.StatusCode != http.StatusConflict {
		t.Errorf("a run without --takeover: %d %s", resp.StatusCode, body)
	}
	// While the model's question waits, the run hands the desktop over
	// at once; the question goes on waiting, and the API says so.
	run.asked = "q1"
	resp, body = apiDo(t, srv, "POST", "/v1/runs/r-takeover/takeover", "{}", nil)
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &acc) != nil || acc.Password != "Pw3xK9mQ" {
		t.Errorf("a takeover while a question waits: %d %s", resp.StatusCode, body)
	}
	resp, body = apiDo(t, srv, "POST", "/v1/runs/r-takeover/handback", "", nil)
	if resp.StatusCode != http.StatusAccepted || run.taken {
		t.Errorf("hand back while a question waits: %d %s", resp.StatusCode, body)
	}
	op := OpenAPI()["paths"].(map[string]any)["/v1/runs/{id}/takeover"].(map[string]any)["post"].(map[string]any)
	if s, _ := op["summary"].(string); !strings.Contains(s, "at once while the model's question waits for an answer") ||
		!strings.Contains(s, "A question that waits goes on waiting") {
		t.Errorf("the takeover's documentation does not say a waiting question hands the desktop over at once: %q", s)
	}
}
