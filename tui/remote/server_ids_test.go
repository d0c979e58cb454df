package remote

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/inbox"
	"github.com/kasmrt/kasmrt/tui"
)

// eventRecorder keeps the runs a source describes and the messages of the
// events it delivers for each.
type eventRecorder struct {
	fleetRecorder
	messages map[string][]string
}

func (r *eventRecorder) Event(id string, e events.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.messages[id] = append(r.messages[id], e.Message)
}

// TestServerTellsARunFromASessionOfTheSameID attaches to a server whose
// run and session are both numbered 7: each is a row of its own, gets its
// own events, and answers and steering reach the one they were meant for.
func TestServerTellsARunFromASessionOfTheSameID(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var posted []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch p := r.URL.Path; {
		case p == "/v1/runs":
			_, _ = w.Write([]byte(`{"runs":[{"run":"7","scenario":"a run"}]}`))
		case p == "/v1/sessions":
			_, _ = w.Write([]byte(`{"sessions":[{"session":"7","scenario":"a session"}]}`))
		case strings.HasSuffix(p, "/events"):
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "id: 1\ndata: {\"seq\":1,\"kind\":\"log\",\"message\":\"from %s\"}\n\n", strings.TrimSuffix(p, "/events"))
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		case r.Method == http.MethodPost:
			mu.Lock()
			posted = append(posted, p)
			mu.Unlock()
			w.WriteHeader(http.StatusNoContent)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	s, err := DialServer(ctx, srv.URL, "", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rec := &eventRecorder{fleetRecorder: fleetRecorder{runs: map[string]tui.FleetRun{}}, messages: map[string][]string{}}
	watchCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Watch(watchCtx, rec) }()
	defer func() { stop(); <-done }()
	for {
		rec.mu.Lock()
		n := len(rec.messages)
		rec.mu.Unlock()
		if n >= 2 || ctx.Err() != nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	rec.mu.Lock()
	var runID, sessionID string
	for id, d := range rec.runs {
		switch d.Mode {
		case "session":
			sessionID = id
		case "":
			runID = id
		}
	}
	runMessages, sessionMessages := rec.messages[runID], rec.messages[sessionID]
	rec.mu.Unlock()
	if runID == "" || sessionID == "" || runID == sessionID {
		t.Fatalf("rows %+v, want the run and the session apart", rec.runs)
	}
	if !slices.Equal(runMessages, []string{"from /v1/runs/7"}) || !slices.Equal(sessionMessages, []string{"from /v1/sessions/7"}) {
		t.Errorf("the run got %q and the session %q, want each its own stream's event", runMessages, sessionMessages)
	}
	if err := s.AnswerMarked(sessionID, "q1", "yes", inbox.MarkShareable); err != nil {
		t.Fatal(err)
	}
	if err := s.Steer(runID, events.Steer{Action: "pause"}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"/v1/sessions/7/questions/q1/answer", "/v1/runs/7/steer"}; !slices.Equal(posted, want) {
		t.Errorf("posted to %q, want %q", posted, want)
	}
}
