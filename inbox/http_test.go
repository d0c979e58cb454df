package inbox_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/inbox"
)

const token = "s3cret-token"

// serve starts a real HTTP server for in's handler.
func serve(t *testing.T, in *inbox.Inbox, token string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(in.Handler(token))
	t.Cleanup(srv.Close)
	return srv
}

func request(t *testing.T, ctx context.Context, method, url, auth, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s %s: %v", method, url, err)
	}
	return resp, b
}

func TestHandlerRequiresToken(t *testing.T) {
	t.Parallel()
	in := inbox.New(inbox.Options{})
	srv := serve(t, in, token)
	open := serve(t, in, "")

	tests := []struct {
		name string
		url  string
		auth string
		want int
	}{
		{"no header", srv.URL, "", http.StatusUnauthorized},
		{"wrong token", srv.URL, "Bearer nope", http.StatusUnauthorized},
		{"token prefix", srv.URL, "Bearer " + token[:4], http.StatusUnauthorized},
		{"wrong scheme", srv.URL, "Basic " + token, http.StatusUnauthorized},
		{"bare token", srv.URL, token, http.StatusUnauthorized},
		{"right token", srv.URL, "Bearer " + token, http.StatusOK},
		{"scheme in lower case", srv.URL, "bearer " + token, http.StatusOK},
		{"server without token, none sent", open.URL, "", http.StatusUnauthorized},
		{"server without token, empty bearer", open.URL, "Bearer ", http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for path, empty := range map[string]string{"/questions": `{"questions":[]}`, "/history": `{"entries":[]}`} {
				resp, body := request(t, t.Context(), "GET", tt.url+path, tt.auth, "")
				if resp.StatusCode != tt.want {
					t.Errorf("GET %s: %d %s, want %d", path, resp.StatusCode, body, tt.want)
				}
				if tt.want == http.StatusOK && strings.TrimSpace(string(body)) != empty {
					t.Errorf("GET %s on an empty inbox = %s, want %s", path, body, empty)
				}
				if tt.want == http.StatusUnauthorized {
					var e struct{ Error string }
					if json.Unmarshal(body, &e) != nil || e.Error == "" {
						t.Errorf("401 body %s, want a JSON error", body)
					}
				}
			}
			resp, body := request(t, t.Context(), "POST", tt.url+"/questions/q1/answer", tt.auth, `{"answer":"x"}`)
			if tt.want == http.StatusUnauthorized && resp.StatusCode != tt.want {
				t.Errorf("POST answer: %d %s, want 401", resp.StatusCode, body)
			}
		})
	}
}

func TestHandlerAnswerUnblocksAsk(t *testing.T) {
	t.Parallel()
	in := inbox.New(inbox.Options{})
	srv := serve(t, in, token)
	ids := askedIDs(t, in)
	auth := "Bearer " + token

	type result struct {
		a   inbox.Answer
		err error
	}
	results := make(chan result, 1)
	go func() {
		a, err := in.Ask(t.Context(), "Which environment?")
		results <- result{a, err}
	}()
	id := <-ids

	resp, body := request(t, t.Context(), "GET", srv.URL+"/questions", auth, "")
	var pending struct{ Questions []inbox.Question }
	if err := json.Unmarshal(body, &pending); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /questions: %d %s (%v)", resp.StatusCode, body, err)
	}
	if len(pending.Questions) != 1 || pending.Questions[0].ID != id || pending.Questions[0].Text != "Which environment?" {
		t.Fatalf("GET /questions = %+v, want the one pending question", pending)
	}

	resp, body = request(t, t.Context(), "POST", srv.URL+"/questions/"+id+"/answer", auth, `{"answer": "staging", "by": "alice"}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST answer: %d %s", resp.StatusCode, body)
	}
	r := <-results
	if r.err != nil || r.a.Text != "staging" || r.a.By != "alice" || r.a.QuestionID != id {
		t.Fatalf("Ask = %+v, %v; want staging by alice", r.a, r.err)
	}

	resp, body = request(t, t.Context(), "GET", srv.URL+"/history", auth, "")
	var history struct{ Entries []inbox.Entry }
	if err := json.Unmarshal(body, &history); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /history: %d %s (%v)", resp.StatusCode, body, err)
	}
	if len(history.Entries) != 2 || history.Entries[1].Kind != inbox.KindAnswered || history.Entries[1].By != "alice" {
		t.Errorf("GET /history = %+v, want asked then answered by alice", history.Entries)
	}
}

func TestHandlerAnswerErrors(t *testing.T) {
	t.Parallel()
	in := inbox.New(inbox.Options{})
	srv := serve(t, in, token)
	ids := askedIDs(t, in)
	go func() { _, _ = in.Ask(t.Context(), "First?") }()
	answered := <-ids
	if err := in.Answer(answered, "done", "console"); err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = in.Ask(t.Context(), "Second?") }()
	open := <-ids
	expiring, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := in.Ask(expiring, "Third?"); err == nil {
		t.Fatal("Ask with a cancelled context succeeded")
	}
	expired := "q3"

	tests := []struct {
		name string
		id   string
		body string
		want int
	}{
		{"unknown question", "q42", `{"answer": "yes"}`, http.StatusNotFound},
		{"already answered", answered, `{"answer": "again"}`, http.StatusConflict},
		{"expired", expired, `{"answer": "late"}`, http.StatusConflict},
		{"not JSON", open, `yes`, http.StatusBadRequest},
		{"unknown field", open, `{"answer": "yes", "extra": 1}`, http.StatusBadRequest},
		{"two values", open, `{"answer": "yes"} {"answer": "no"}`, http.StatusBadRequest},
		{"blank answer", open, `{"answer": "  "}`, http.StatusBadRequest},
		{"body too large", open, `{"answer": "` + strings.Repeat("a", 70<<10) + `"}`, http.StatusRequestEntityTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := request(t, t.Context(), "POST", srv.URL+"/questions/"+tt.id+"/answer", "Bearer "+token, tt.body)
			var e struct{ Error string }
			if resp.StatusCode != tt.want || json.Unmarshal(body, &e) != nil || e.Error == "" {
				t.Errorf("status %d body %.200s; want %d with a JSON error", resp.StatusCode, body, tt.want)
			}
		})
	}
	if p := in.Pending(); len(p) != 1 || p[0].ID != open {
		t.Errorf("Pending() = %v, want %s still open after refused answers", p, open)
	}
}

// sseEvent is one Server-Sent Event as read off the wire.
type sseEvent struct {
	id, event, data string
}

// readEvents parses the event stream from r into a channel, skipping
// comments, until the stream ends.
func readEvents(r io.Reader) <-chan sseEvent {
	events := make(chan sseEvent, 16)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(r)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				events <- ev
				ev = sseEvent{}
			case strings.HasPrefix(line, ":"):
			default:
				field, value, _ := strings.Cut(line, ": ")
				switch field {
				case "id":
					ev.id = value
				case "event":
					ev.event = value
				case "data":
					ev.data += value
				}
			}
		}
	}()
	return events
}

func next(t *testing.T, events <-chan sseEvent) sseEvent {
	t.Helper()
	select {
	case ev, ok := <-events:
		if !ok {
			t.Fatal("event stream ended early")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10s")
	}
	panic("unreachable")
}

func TestHandlerEventStream(t *testing.T) {
	t.Parallel()
	in := inbox.New(inbox.Options{})
	srv := serve(t, in, token)
	ids := askedIDs(t, in)

	// A question asked before the client connects arrives in the snapshot.
	go func() { _, _ = in.Ask(t.Context(), "Before?") }()
	early := <-ids

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET /events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	events := readEvents(resp.Body)

	ev := next(t, events)
	var snap struct {
		Seq       int
		Questions []inbox.Question
	}
	if err := json.Unmarshal([]byte(ev.data), &snap); err != nil || ev.event != "pending" {
		t.Fatalf("first event %+v (%v), want the pending snapshot", ev, err)
	}
	if snap.Seq != 1 || len(snap.Questions) != 1 || snap.Questions[0].ID != early {
		t.Fatalf("snapshot %+v, want seq 1 and %s pending", snap, early)
	}

	answers := make(chan inbox.Answer, 1)
	go func() {
		a, _ := in.Ask(t.Context(), "Deploy now?")
		answers <- a
	}()
	ev = next(t, events)
	var u inbox.Update
	if err := json.Unmarshal([]byte(ev.data), &u); err != nil {
		t.Fatal(err)
	}
	if ev.event != "asked" || ev.id != "2" || u.Kind != inbox.KindAsked || u.Text != "Deploy now?" || u.Question == nil {
		t.Fatalf("event %+v, want asked #2 for Deploy now?", ev)
	}

	resp2, body := request(t, t.Context(), "POST", srv.URL+"/questions/"+u.QuestionID+"/answer", "Bearer "+token, `{"answer":"yes"}`)
	if resp2.StatusCode != 200 {
		t.Fatalf("POST answer: %d %s", resp2.StatusCode, body)
	}
	if a := <-answers; a.Text != "yes" || a.By != "http" {
		t.Errorf("Ask got %+v, want yes by http", a)
	}
	ev = next(t, events)
	u = inbox.Update{}
	if err := json.Unmarshal([]byte(ev.data), &u); err != nil {
		t.Fatal(err)
	}
	if ev.event != "answered" || u.Seq != 3 || u.Text != "yes" || u.Question == nil || u.Question.Text != "Deploy now?" {
		t.Fatalf("event %+v, want answered #3 with its question", ev)
	}

	in.Post("deployed")
	if ev = next(t, events); ev.event != "posted" || !strings.Contains(ev.data, "deployed") {
		t.Fatalf("event %+v, want the posted message", ev)
	}

	// Ending the request ends the stream and removes its observer.
	cancel()
	for range events {
	}
	deadline := time.Now().Add(10 * time.Second)
	for inbox.ObserverCount(in) != 1 { // askedIDs' own observer stays
		if time.Now().After(deadline) {
			t.Fatalf("%d observers left after the client went away, want 1", inbox.ObserverCount(in))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A client that stops reading is cut off, not buffered for without bound.
func TestHandlerEventStreamSlowClient(t *testing.T) {
	t.Parallel()
	in := inbox.New(inbox.Options{})
	srv := serve(t, in, token)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()

	// Posting far more than the stream buffers and the sockets hold, while
	// the client reads nothing, must overflow the stream.
	big := strings.Repeat("x", 8<<10)
	for i := range 2000 {
		in.Post(fmt.Sprint(i, big))
	}
	var last sseEvent
	n := 0
	for ev := range readEvents(resp.Body) {
		last = ev
		n++
	}
	if last.event != "overflow" {
		t.Errorf("stream of %d events ended with %+v, want an overflow event", n, last)
	}
}

// BenchmarkAnswerOverHTTP measures a question's round trip when a remote
// operator answers it: asked, POSTed over loopback HTTP, Ask returns.
func BenchmarkAnswerOverHTTP(b *testing.B) {
	in := inbox.New(inbox.Options{})
	srv := httptest.NewServer(in.Handler(token))
	defer srv.Close()
	ids := make(chan string, 1)
	in.Observe(func(u inbox.Update) {
		if u.Kind == inbox.KindAsked {
			ids <- u.QuestionID
		}
	})
	go func() {
		for id := range ids {
			req, _ := http.NewRequest("POST", srv.URL+"/questions/"+id+"/answer", strings.NewReader(`{"answer":"yes"}`))
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	ctx := b.Context()
	for b.Loop() {
		if _, err := in.Ask(ctx, "Proceed?"); err != nil {
			b.Fatal(err)
		}
	}
	close(ids)
}

// TestHandlerRefusesOtherSites: even with the right token, the inbox's
// listener refuses what a web page could make the operator's browser
// send: a rebound Host, another origin's request, a POST that is not
// JSON.
func TestHandlerRefusesOtherSites(t *testing.T) {
	t.Parallel()
	in := inbox.New(inbox.Options{})
	srv := serve(t, in, token)
	for _, c := range []struct {
		name, method, path, host, contentType, origin string
		want                                          int
	}{
		{"a rebound name", "GET", "/questions", "evil.example:8765", "", "", http.StatusForbidden},
		{"another origin's event stream", "GET", "/events", "", "", "http://evil.example", http.StatusForbidden},
		{"a text/plain answer", "POST", "/questions/q1/answer", "", "text/plain", "", http.StatusUnsupportedMediaType},
		{"a form answer", "POST", "/questions/q1/answer", "", "application/x-www-form-urlencoded", "", http.StatusUnsupportedMediaType},
		{"a JSON answer", "POST", "/questions/q1/answer", "", "application/json", "", http.StatusNotFound},
		{"localhost", "GET", "/questions", "localhost", "", "", http.StatusOK},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			req, _ := http.NewRequestWithContext(t.Context(), c.method, srv.URL+c.path, strings.NewReader(`{"answer":"x"}`))
			req.Header.Set("Authorization", "Bearer "+token)
			if c.host != "" {
				req.Host = c.host
			}
			if c.contentType != "" {
				req.Header.Set("Content-Type", c.contentType)
			}
			if c.origin != "" {
				req.Header.Set("Origin", c.origin)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != c.want {
				// An event stream let through never ends: read only a refusal.
				var body []byte
				if resp.StatusCode != http.StatusOK {
					body, _ = io.ReadAll(resp.Body)
				}
				t.Errorf("%s %s: %s %s, want %d", c.method, c.path, resp.Status, body, c.want)
			}
		})
	}
}

// TestHandlerAnswerMarks checks the operator's marks over HTTP: an
// unmarked answer is private, the answer says its mark, a secret one is
// handed to OnSecret, kept out of the stored text and the history, and
// still typed as given, and a mark that is none of the three is refused.
func TestHandlerAnswerMarks(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		body   string
		status int
		mark   inbox.Mark
	}{
		"unmarked":  {body: `{"answer": "pin 4721"}`, mark: inbox.MarkPrivate},
		"empty":     {body: `{"answer": "pin 4721", "mark": ""}`, mark: inbox.MarkPrivate},
		"private":   {body: `{"answer": "pin 4721", "mark": "private"}`, mark: inbox.MarkPrivate},
		"shareable": {body: `{"answer": "pin 4721", "mark": "shareable"}`, mark: inbox.MarkShareable},
		"secret":    {body: `{"answer": "pin 4721", "mark": "secret"}`, mark: inbox.MarkSecret},
		"unknown":   {body: `{"answer": "pin 4721", "mark": "public"}`, status: http.StatusBadRequest},
		// The boolean marks of an earlier version are unknown fields, not
		// silently private answers the sender thought were marked.
		"old boolean": {body: `{"answer": "pin 4721", "secret": true}`, status: http.StatusBadRequest},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var told []string
			in := inbox.New(inbox.Options{OnSecret: func(v string) { told = append(told, v) }})
			srv := serve(t, in, token)
			ids := askedIDs(t, in)
			answers := make(chan inbox.Answer, 1)
			go func() {
				a, err := in.Ask(t.Context(), "The code?")
				if err != nil && c.status == 0 {
					t.Errorf("ask: %v", err)
				}
				answers <- a
			}()
			id := <-ids
			resp, body := request(t, t.Context(), "POST", srv.URL+"/questions/"+id+"/answer", "Bearer "+token, c.body)
			if c.status != 0 {
				if resp.StatusCode != c.status || !strings.Contains(string(body), "mark") && !strings.Contains(string(body), "secret") {
					t.Errorf("POST answer: %d %s, want %d naming the field", resp.StatusCode, body, c.status)
				}
				if p := in.Pending(); len(p) != 1 {
					t.Errorf("pending %v after a refused answer, want the question still waiting", p)
				}
				return
			}
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("POST answer: %d %s", resp.StatusCode, body)
			}
			var got struct{ Mark string }
			if err := json.Unmarshal(body, &got); err != nil || got.Mark != string(c.mark) {
				t.Errorf("response %s, want mark %q", body, c.mark)
			}
			a := <-answers
			if a.Value() != "pin 4721" || a.Mark != c.mark {
				t.Errorf("answer %+v value %q; want mark %q", a, a.Value(), c.mark)
			}
			secret := c.mark == inbox.MarkSecret
			_, hist := request(t, t.Context(), "GET", srv.URL+"/history", "Bearer "+token, "")
			if leaked := strings.Contains(string(body)+string(hist)+a.Text, "4721"); leaked == secret {
				t.Errorf("the answer shown: %v, want %v: %s %s", leaked, !secret, body, hist)
			}
			if secret != (len(told) == 1) {
				t.Errorf("OnSecret got %q", told)
			}
		})
	}
}
