// Package modeltest is an in-process OpenAI-compatible model server for
// tests: it answers Chat Completions and Responses requests from a script of
// exchanges and keeps every request for assertions.
//
//	srv := modeltest.New(t,
//		modeltest.Status(429, 2*time.Second),
//		modeltest.Call("observe_screen", `{}`),
//		modeltest.Text("<answer>done</answer>"),
//	)
//	client, _ := model.New(model.Config{Endpoint: srv.URL(), ...})
//
// Each exchange is one HTTP reply, shaped for whichever protocol the request
// used. When the script runs out the server replies 500 and fails the test.
package modeltest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Protocol names the API a request used, from its path.
type Protocol string

// The protocols the server answers.
const (
	ChatCompletions Protocol = "chat_completions"
	Responses       Protocol = "responses"
)

// Server is a running scripted model server.
type Server struct {
	t      testing.TB
	srv    *httptest.Server
	mu     sync.Mutex
	script []Exchange
	reqs   []Request
	calls  int
	// exhausted counts requests that arrived after the script ran out.
	exhausted int
	// models is what GET /v1/models lists; listed counts those requests,
	// which are not turns and use no scripted exchange.
	models []string
	listed int
	// inFlight is the turns being answered now, and peak the most there
	// ever were at once.
	inFlight, peak int
}

// PeakConcurrency is the most turns the server was answering at once.
func (s *Server) PeakConcurrency() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak
}

// DefaultModel is the one model a new server lists at GET /v1/models.
const DefaultModel = "modeltest-vlm"

// ServeModels sets the model IDs GET /v1/models lists (none: an empty
// list).
func (s *Server) ServeModels(ids ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models = ids
}

// ModelListRequests is the number of GET /v1/models requests so far.
func (s *Server) ModelListRequests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.listed
}

func (s *Server) serveModels(w http.ResponseWriter) {
	s.mu.Lock()
	s.listed++
	data := make([]map[string]any, 0, len(s.models))
	for _, id := range s.models {
		data = append(data, map[string]any{"id": id, "object": "model", "created": 0, "owned_by": "modeltest"})
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
}

// New starts a server that answers with script, in order, and stops it when
// the test ends.
func New(t testing.TB, script ...Exchange) *Server {
	t.Helper()
	s := &Server{t: t, script: script, models: []string{DefaultModel}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// URL is the service base (http://127.0.0.1:PORT), without /v1.
func (s *Server) URL() string { return s.srv.URL }

// Requests returns every request received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.reqs))
	copy(out, s.reqs)
	return out
}

// Remaining is the number of scripted exchanges not yet used.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script)
}

// Exhausted is the number of requests that arrived after the script ran out.
func (s *Server) Exhausted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exhausted
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	var proto Protocol
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/v1/chat/completions"):
		proto = ChatCompletions
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/v1/responses"):
		proto = Responses
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/v1/models"):
		s.serveModels(w)
		return
	default:
		writeError(w, http.StatusNotFound, fmt.Sprintf("modeltest: no endpoint %s %s", r.Method, r.URL.Path))
		return
	}
	s.mu.Lock()
	s.inFlight++
	s.peak = max(s.peak, s.inFlight)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}()
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "modeltest: read body: "+err.Error())
		return
	}
	req := Request{Path: r.URL.Path, Protocol: proto, Header: r.Header.Clone(), Raw: raw, Received: time.Now()}
	if err := json.Unmarshal(raw, &req.Body); err != nil {
		s.t.Errorf("modeltest: request %s is not a JSON object: %v", r.URL.Path, err)
	}

	s.mu.Lock()
	req.N = len(s.reqs) + 1
	s.reqs = append(s.reqs, req)
	if len(s.script) == 0 {
		s.exhausted++
		s.mu.Unlock()
		s.t.Errorf("modeltest: script exhausted: request %d (%s) has no scripted reply", req.N, r.URL.Path)
		writeError(w, http.StatusInternalServerError, fmt.Sprintf("modeltest: script exhausted at request %d", req.N))
		return
	}
	ex := s.script[0]
	s.script = s.script[1:]
	s.mu.Unlock()

	s.reply(w, r, req, ex)
}

func (s *Server) reply(w http.ResponseWriter, r *http.Request, req Request, ex Exchange) {
	for ex.fn != nil || ex.delay > 0 {
		if ex.fn != nil {
			ex = ex.fn(req)
			continue
		}
		select {
		case <-time.After(ex.delay):
		case <-r.Context().Done():
			// The client gave up (its timeout); nobody reads the reply.
			return
		}
		ex = *ex.inner
	}
	for k, vs := range ex.header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	switch {
	case ex.status != 0 && ex.status != http.StatusOK:
		body := ex.raw
		if body == "" {
			body = errorBody(fmt.Sprintf("modeltest: scripted HTTP %d", ex.status))
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(ex.status)
		io.WriteString(w, body)
	case ex.garbage:
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, ex.raw)
	default:
		body := s.success(req, ex)
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}
}

func (s *Server) success(req Request, ex Exchange) []byte {
	s.mu.Lock()
	var calls []call
	for _, c := range ex.calls {
		if c.id == "" {
			s.calls++
			c.id = "call_" + strconv.Itoa(s.calls)
		}
		calls = append(calls, c)
	}
	s.mu.Unlock()
	modelName, _ := req.Body["model"].(string)
	var body map[string]any
	if req.Protocol == Responses {
		usage := map[string]any{
			"input_tokens":          100,
			"input_tokens_details":  map[string]any{"cached_tokens": 0},
			"output_tokens":         10,
			"output_tokens_details": map[string]any{"reasoning_tokens": 0},
			"total_tokens":          110,
		}
		maps.Copy(usage, ex.usage)
		output := []any{}
		if ex.text != "" || len(calls) == 0 {
			output = append(output, map[string]any{
				"type": "message", "id": fmt.Sprintf("msg_%d", req.N), "role": "assistant", "status": "completed",
				"content": []any{map[string]any{"type": "output_text", "text": ex.text, "annotations": []any{}}},
			})
		}
		for i, c := range calls {
			output = append(output, map[string]any{
				"type": "function_call", "id": fmt.Sprintf("fc_%d_%d", req.N, i+1), "call_id": c.id,
				"name": c.name, "arguments": c.args, "status": "completed",
			})
		}
		body = map[string]any{
			"id": fmt.Sprintf("resp_%d", req.N), "object": "response", "status": "completed",
			"model": modelName, "output": output, "usage": usage,
		}
	} else {
		usage := map[string]any{
			"prompt_tokens":         100,
			"completion_tokens":     10,
			"total_tokens":          110,
			"prompt_tokens_details": map[string]any{"cached_tokens": 0},
		}
		maps.Copy(usage, ex.usage)
		msg := map[string]any{"role": "assistant", "content": ex.text}
		finish := "stop"
		if len(calls) > 0 {
			finish = "tool_calls"
			if ex.text == "" {
				msg["content"] = nil
			}
			var tcs []any
			for _, c := range calls {
				tcs = append(tcs, map[string]any{
					"id": c.id, "type": "function",
					"function": map[string]any{"name": c.name, "arguments": c.args},
				})
			}
			msg["tool_calls"] = tcs
		}
		body = map[string]any{
			"id": fmt.Sprintf("chatcmpl-%d", req.N), "object": "chat.completion", "created": 0,
			"model":   modelName,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			"usage":   usage,
		}
	}
	out, err := json.Marshal(body)
	if err != nil {
		s.t.Errorf("modeltest: encode reply: %v", err)
	}
	return out
}

func errorBody(msg string) string {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "modeltest"}})
	return string(b)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, errorBody(msg))
}

// indent is used by Request.String for readable failure messages.
func indent(raw []byte) string {
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		return string(raw)
	}
	return b.String()
}
