package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/internal/testkit"
)

const apiToken = "api-test-token-91c2"

func apiDo(t *testing.T, srv *httptest.Server, method, path, body string, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+apiToken)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// openSession opens a session of scenario over the API and returns what
// the server said of it.
func openSession(t *testing.T, srv *httptest.Server, scenario string) OpenedSession {
	t.Helper()
	resp, body := apiDo(t, srv, "POST", "/v1/sessions", `{"scenario":"`+scenario+`"}`, nil)
	var opened OpenedSession
	if resp.StatusCode != http.StatusCreated || json.Unmarshal(body, &opened) != nil {
		t.Fatalf("open %s: %d %s", scenario, resp.StatusCode, body)
	}
	return opened
}

// TestOpenAPIDescribesTheRoutesThatExist asks the server for every
// operation the document lists (each must reach its handler, not the
// mux's 404 or 405) and for methods it does not list (405).
func TestOpenAPIDescribesTheRoutesThatExist(t *testing.T) {
	t.Parallel()
	m, _ := testManager(t, t.Context())
	srv := httptest.NewServer(NewHandler(m, HTTPOptions{Token: apiToken}))
	defer srv.Close()
	doc := OpenAPI()
	if doc["openapi"] != "3.1.0" {
		t.Errorf("openapi %v", doc["openapi"])
	}
	listed := 0
	for path, item := range doc["paths"].(map[string]any) {
		concrete := strings.NewReplacer("{id}", "s-none", "{qid}", "q1", "{file}", "0001.png").Replace(path)
		for _, method := range []string{"GET", "POST", "PUT", "DELETE", "PATCH"} {
			_, documented := item.(map[string]any)[strings.ToLower(method)]
			resp, body := apiDo(t, srv, method, concrete, "{}", nil)
			reached := resp.Header.Get("Content-Type") == "application/json" && resp.StatusCode != http.StatusMethodNotAllowed
			if documented {
				listed++
				if !reached {
					t.Errorf("%s %s is documented but answers %d %s", method, path, resp.StatusCode, body)
				}
			} else if resp.StatusCode != http.StatusMethodNotAllowed {
				t.Errorf("%s %s is not documented but answers %d", method, path, resp.StatusCode)
			}
		}
	}
	for _, r := range apiRoutes() {
		if op, found := operations[r.method+" "+r.path]; !found || op.summary == "" || len(op.responses) == 0 {
			t.Errorf("%s %s has no documented operation", r.method, r.path)
		}
	}
	if len(operations) != len(apiRoutes()) {
		t.Errorf("%d documented operations for %d routes", len(operations), len(apiRoutes()))
	}
	if listed != len(apiRoutes()) {
		t.Errorf("the document lists %d operations, the server has %d routes", listed, len(apiRoutes()))
	}
	resp, _ := apiDo(t, srv, "GET", "/v1/nothing", "", nil)
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown route: %d", resp.StatusCode)
	}
}

func TestHTTPAPIRefusesMissingWrongAndQueryTokens(t *testing.T) {
	t.Parallel()
	m, _ := testManager(t, t.Context())
	srv := httptest.NewServer(NewHandler(m, HTTPOptions{Token: apiToken}))
	defer srv.Close()
	for name, c := range map[string]struct {
		path, auth string
		status     int
	}{
		"none":  {"/v1/sessions", "", http.StatusUnauthorized},
		"wrong": {"/v1/sessions", "Bearer " + apiToken + "x", http.StatusUnauthorized},
		"query": {"/v1/sessions?access_token=" + apiToken, "", http.StatusBadRequest},
		"right": {"/v1/sessions", "Bearer " + apiToken, http.StatusOK},
	} {
		req, _ := http.NewRequest("GET", srv.URL+c.path, nil)
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s: %d, want %d", name, resp.StatusCode, c.status)
		}
	}
}

// sseEvent is one Server-Sent Event.
type sseEvent struct {
	id   int64
	kind string
}

// readSSE reads up to n events (all, when n is 0) from a stream.
func readSSE(t *testing.T, body io.Reader, n int) []sseEvent {
	t.Helper()
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			cur.id, _ = strconv.ParseInt(strings.TrimPrefix(line, "id: "), 10, 64)
		case strings.HasPrefix(line, "event: "):
			cur.kind = strings.TrimPrefix(line, "event: ")
		case line == "":
			out = append(out, cur)
			if n > 0 && len(out) == n {
				return out
			}
		}
	}
	return out
}

func TestHTTPAPIDrivesXtermAndStreamsEventsThatResume(t *testing.T) {
	t.Parallel()
	need(t, "Xvfb", "xterm")
	m, _ := testManager(t, t.Context())
	m.opts.MaxSessions = 1
	srv := httptest.NewServer(NewHandler(m, HTTPOptions{Token: apiToken}))
	defer srv.Close()

	resp, body := apiDo(t, srv, "POST", "/v1/sessions", `{"scenario":"../outside.yaml"}`, nil)
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a path escape: %d %s", resp.StatusCode, body)
	}
	opened := openSession(t, srv, "xterm.yaml")
	resp, body = apiDo(t, srv, "POST", "/v1/sessions", `{"scenario":"xterm.yaml"}`, nil)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("past --max-sessions: %d (Retry-After %q) %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	base := "/v1/sessions/" + opened.Session

	// A first event stream, dropped after three events.
	req, _ := http.NewRequestWithContext(t.Context(), "GET", srv.URL+base+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+apiToken)
	stream, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	first := readSSE(t, stream.Body, 3)
	stream.Body.Close()
	if len(first) != 3 || first[0].id != 1 || first[0].kind != string(events.KindRunStarted) {
		t.Fatalf("the first events: %+v", first)
	}

	for _, c := range []struct {
		body   string
		status events.Status
	}{
		{`{"tool":"observe_screen"}`, events.StatusOK},
		{`{"tool":"click","args":{"target":"prompt"}}`, events.StatusOK},
		{`{"tool":"type_text","args":{"ref":"password"}}`, events.StatusOK},
		{`{"tool":"click","args":{"target":"x; rm -rf /"}}`, events.StatusMalformed},
	} {
		resp, body := apiDo(t, srv, "POST", base+"/calls", c.body, nil)
		var cr CallResponse
		if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &cr) != nil || cr.Status != c.status {
			t.Errorf("%s: %d %s, want status %s", c.body, resp.StatusCode, body, c.status)
		}
		if bytes.Contains(body, []byte(testSecret)) {
			t.Errorf("%s: the reply carries the secret", c.body)
		}
	}
	resp, body = apiDo(t, srv, "GET", base+"/screen", "", nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("screen: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if _, err := png.Decode(bytes.NewReader(body)); err != nil {
		t.Errorf("the screen is not a PNG: %v", err)
	}
	resp, body = apiDo(t, srv, "POST", "/v1/sessions/s-none/calls", `{"tool":"observe_screen"}`, nil)
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown session: %d %s", resp.StatusCode, body)
	}
	resp, body = apiDo(t, srv, "POST", base+"/calls", `{"tool":"observe_screen","sneaky":1}`, nil)
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("an unknown body field: %d %s", resp.StatusCode, body)
	}

	// Resume from the last id seen while the session goes on and closes.
	req, _ = http.NewRequestWithContext(t.Context(), "GET", srv.URL+base+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+apiToken)
	req.Header.Set("Last-Event-ID", strconv.FormatInt(first[2].id, 10))
	stream, err = srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	rest := make(chan []sseEvent, 1)
	go func() { rest <- readSSE(t, stream.Body, 0) }()

	resp, body = apiDo(t, srv, "POST", base+"/close", `{"verdict":"goal-met","reason":"typed"}`, nil)
	var closed ClosedSession
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &closed) != nil || closed.Verdict != events.VerdictPassConcerns {
		// pass-with-concerns: the last input was malformed, and the
		// scenario declares no success criteria.
		t.Fatalf("close: %d %s", resp.StatusCode, body)
	}
	all := append(first, <-rest...)
	for i, e := range all {
		if e.id != int64(i+1) {
			t.Fatalf("event %d has id %d: lost or repeated across the reconnect (%+v)", i+1, e.id, all)
		}
	}
	if last := all[len(all)-1]; last.kind != string(events.KindRunEnded) {
		t.Errorf("the stream ends with %s, want run.ended", last.kind)
	}
	evs, err := events.ReadFile(closed.Report + "/events.jsonl")
	if err != nil || len(evs) != len(all) {
		t.Errorf("the stream had %d events, events.jsonl %d (%v)", len(all), len(evs), err)
	}
}

func TestHTTPAPIAbortEndsTheSessionAsAborted(t *testing.T) {
	t.Parallel()
	need(t, "Xvfb", "xterm")
	m, _ := testManager(t, t.Context())
	srv := httptest.NewServer(NewHandler(m, HTTPOptions{Token: apiToken}))
	defer srv.Close()
	opened := openSession(t, srv, "xterm.yaml")
	base := "/v1/sessions/" + opened.Session
	if resp, body := apiDo(t, srv, "POST", base+"/steer", `{"action":"pause"}`, nil); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("pause: %d %s", resp.StatusCode, body)
	}
	if resp, body := apiDo(t, srv, "POST", base+"/steer", `{"action":"abort","reason":"enough"}`, nil); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("abort: %d %s", resp.StatusCode, body)
	}
	// The agent's goal-met does not turn an aborted session into a pass.
	resp, body := apiDo(t, srv, "POST", base+"/close", `{"verdict":"goal-met"}`, nil)
	var closed ClosedSession
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &closed) != nil {
		t.Fatalf("close: %d %s", resp.StatusCode, body)
	}
	if closed.Verdict != events.VerdictTestError || closed.Outcome != "aborted" {
		t.Errorf("closed %+v, want test-error aborted", closed)
	}
}

// TestHTTPAPIAnswersASessionsQuestion: an agent's ask_human waits until an
// operator answers it over /v1, reached through the inbox's own routes.
func TestHTTPAPIAnswersASessionsQuestion(t *testing.T) {
	t.Parallel()
	need(t, "Xvfb", "xterm")
	m, base := testManager(t, t.Context())
	op := filepath.Join(base, "operator.yaml")
	if err := os.WriteFile(op, []byte("inbox:\n  session_token: inbox-t0ken-c3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m.opts.Operator = op
	srv := httptest.NewServer(NewHandler(m, HTTPOptions{Token: apiToken}))
	t.Cleanup(srv.Close)
	// Cleanups run last first: the sessions end, so a call still waiting
	// returns, before the server closes.
	t.Cleanup(func() { m.CloseAll(context.Background()) })
	opened := openSession(t, srv, "xterm.yaml")
	s := "/v1/sessions/" + opened.Session
	// The agent is the model here: an answer reaches it only when the
	// operator marks it shareable; an unmarked one it can only type by ref.
	for _, c := range []struct {
		id, mark, told string
	}{
		{"q1", "", `the operator answered (4 characters); the answer is not shown to you; type it with type_text, ref "answer_q1"`},
		{"q2", `,"mark":"shareable"`, "the operator answered: blue"},
	} {
		asked := make(chan CallResponse, 1)
		go func() {
			_, body := apiDo(t, srv, "POST", s+"/calls", `{"tool":"ask_human","args":{"question":"Which colour?"}}`, nil)
			var cr CallResponse
			_ = json.Unmarshal(body, &cr)
			asked <- cr
		}()
		var pending struct{ Questions []struct{ ID, Text string } }
		for deadline := time.Now().Add(20 * time.Second); len(pending.Questions) == 0; {
			if time.Now().After(deadline) {
				t.Fatal("the question never became pending")
			}
			time.Sleep(50 * time.Millisecond)
			_, body := apiDo(t, srv, "GET", s+"/questions", "", nil)
			_ = json.Unmarshal(body, &pending)
		}
		if q := pending.Questions[0]; q.ID != c.id || q.Text != "Which colour?" {
			t.Errorf("pending %+v", pending)
		}
		if resp, body := apiDo(t, srv, "POST", s+"/questions/q9/answer", `{"answer":"blue"}`, nil); resp.StatusCode != http.StatusNotFound {
			t.Errorf("an unknown question: %d %s", resp.StatusCode, body)
		}
		if resp, body := apiDo(t, srv, "POST", s+"/questions/"+c.id+"/answer", `{"answer":"blue","by":"ops"`+c.mark+`}`, nil); resp.StatusCode != http.StatusOK {
			t.Fatalf("answer: %d %s", resp.StatusCode, body)
		}
		if resp, _ := apiDo(t, srv, "POST", s+"/questions/"+c.id+"/answer", `{"answer":"red"}`, nil); resp.StatusCode != http.StatusConflict {
			t.Errorf("a second answer: %d, want 409", resp.StatusCode)
		}
		if cr := <-asked; cr.Status != events.StatusOK || !strings.Contains(cr.Message, c.told) {
			t.Errorf("the agent's ask_human: %+v, want %q", cr, c.told)
		}
	}
	_, body := apiDo(t, srv, "GET", s+"/history", "", nil)
	if !strings.Contains(string(body), `"by":"ops"`) {
		t.Errorf("history: %s", body)
	}
	if _, err := m.Close(t.Context(), opened.Session, "", ""); err != nil {
		t.Fatal(err)
	}
}

// TestHTTPAPIRedactsASessionsGoal: a goal that names a secret through
// ${NAME} reaches the agent and the list of sessions redacted, as the
// session's events have it.
func TestHTTPAPIRedactsASessionsGoal(t *testing.T) {
	t.Parallel()
	need(t, "Xvfb", "xterm")
	m, base := testManager(t, t.Context())
	scenario := strings.Replace(testScenario, "Type the password at the prompt", "Type the password (${MCP_PW}) at the prompt", 1)
	testkit.WriteFile(t, filepath.Join(base, "scenarios"), "goal.yaml", scenario)
	srv := httptest.NewServer(NewHandler(m, HTTPOptions{Token: apiToken}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { m.CloseAll(context.Background()) })
	resp, opened := apiDo(t, srv, "POST", "/v1/sessions", `{"scenario":"goal.yaml"}`, nil)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("open: %d %s", resp.StatusCode, opened)
	}
	_, listed := apiDo(t, srv, "GET", "/v1/sessions", "", nil)
	for what, body := range map[string][]byte{"the opened session": opened, "the list of sessions": listed} {
		if !bytes.Contains(body, []byte("Type the password (")) {
			t.Errorf("%s has no goal: %s", what, body)
		}
		if bytes.Contains(body, []byte(testSecret)) {
			t.Errorf("%s holds the secret: %s", what, body)
		}
	}
}

// TestHTTPAPIRefusesOtherSites: a web page cannot drive a tokenless
// loopback server through the operator's browser — not by rebinding its
// name to 127.0.0.1, not from its own origin, not with a text/plain or
// form POST (which a browser sends without asking the server first) — and
// a public server refuses a rebound Host on /mcp as on /v1. Nothing
// refused reaches a route.
func TestHTTPAPIRefusesOtherSites(t *testing.T) {
	t.Parallel()
	m, _ := testManager(t, t.Context())
	local := httptest.NewServer(NewHandler(m, HTTPOptions{}))
	defer local.Close()
	public := httptest.NewServer(NewHandler(m, HTTPOptions{Token: apiToken, Public: true, Listen: "0.0.0.0:7400"}))
	defer public.Close()
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"page","version":"1"}}}`
	for _, c := range []struct {
		name        string
		srv         *httptest.Server
		path, host  string
		contentType string
		origin      string
		body        string
		want        int
	}{
		{"a rebound name", local, "/v1/sessions", "evil.example", "application/json", "", `{"scenario":"missing.yaml"}`, http.StatusForbidden},
		{"another origin", local, "/v1/sessions", "", "application/json", "http://evil.example", `{"scenario":"missing.yaml"}`, http.StatusForbidden},
		{"another origin's text/plain", local, "/v1/sessions/s-1/close", "", "text/plain;charset=UTF-8", "http://evil.example", `{"verdict":"goal-met"}`, http.StatusForbidden},
		{"a text/plain POST", local, "/v1/sessions", "", "text/plain", "", `{"scenario":"missing.yaml"}`, http.StatusUnsupportedMediaType},
		{"a form POST", local, "/v1/sessions/s-1/steer", "", "application/x-www-form-urlencoded", "", `{"action":"abort"}`, http.StatusUnsupportedMediaType},
		{"a rebound name on a public server's /mcp", public, "/mcp", "evil.example", "application/json", "", initialize, http.StatusForbidden},
		{"a rebound name on a public server's /v1", public, "/v1/sessions", "evil.example", "application/json", "", `{"scenario":"missing.yaml"}`, http.StatusForbidden},
		// What an agent, curl and kasmrt attach send passes.
		{"a JSON POST", local, "/v1/sessions", "", "application/json", "", `{"scenario":"missing.yaml"}`, http.StatusBadRequest},
		{"its own origin", local, "/v1/sessions", "", "application/json", "same", `{"scenario":"missing.yaml"}`, http.StatusBadRequest},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, c.srv.URL+c.path, strings.NewReader(c.body))
			if c.host != "" {
				req.Host = c.host
			}
			req.Header.Set("Content-Type", c.contentType)
			req.Header.Set("Accept", "application/json, text/event-stream")
			if c.srv == public {
				req.Header.Set("Authorization", "Bearer "+apiToken)
			}
			switch c.origin {
			case "same":
				req.Header.Set("Origin", c.srv.URL)
			case "":
			default:
				req.Header.Set("Origin", c.origin)
			}
			resp, err := c.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.want {
				t.Errorf("POST %s: %s %s, want %d", c.path, resp.Status, body, c.want)
			}
		})
	}
	if open := m.List(); len(open) != 0 {
		t.Errorf("sessions opened: %+v", open)
	}
}
