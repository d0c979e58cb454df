package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/kasmrt/kasmrt/engine"
	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/report"
)

// route is one route of the HTTP API; the OpenAPI document describes
// exactly these (a test holds the two together).
type route struct {
	method, path string
	handler      func(*api, http.ResponseWriter, *http.Request)
}

// apiRoutes returns the routes (a function, since the document's own route
// refers back to the list).
func apiRoutes() []route {
	routes := []route{
		{http.MethodGet, "/v1/openapi.json", (*api).openAPI},
		{http.MethodGet, "/v1/sessions", (*api).list},
		{http.MethodPost, "/v1/sessions", (*api).open},
		{http.MethodPost, "/v1/sessions/{id}/calls", (*api).call},
		{http.MethodPost, "/v1/sessions/{id}/close", (*api).close},
		{http.MethodGet, "/v1/runs", (*api).listRuns},
		{http.MethodGet, "/v1/runs/{id}", (*api).runInfo},
	}
	for _, wr := range watchedRoutes {
		routes = append(routes,
			route{wr.method, "/v1/sessions/{id}" + wr.suffix, forSession(wr.handler)},
			route{wr.method, "/v1/runs/{id}" + wr.suffix, forRun(wr.handler)})
	}
	return append(routes, takeoverRoutes()...)
}

type api struct {
	m *Manager
	// views are the takeovers' browser views (takeover_view.go).
	views *views
}

// mountAPI adds the /v1 routes to mux.
func mountAPI(mux *http.ServeMux, m *Manager, v *views) {
	a := &api{m: m, views: v}
	for _, r := range apiRoutes() {
		mux.HandleFunc(r.method+" "+r.path, func(w http.ResponseWriter, req *http.Request) { r.handler(a, w, req) })
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// readBody decodes a JSON body into v, refusing unknown fields.
func readBody(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if _, tooBig := errors.AsType[*http.MaxBytesError](err); tooBig {
			writeError(w, http.StatusRequestEntityTooLarge, "the body is over 1 MiB")
			return false
		}
		writeError(w, http.StatusBadRequest, "the body is not the JSON object this route takes: "+err.Error())
		return false
	}
	return true
}

func (a *api) openAPI(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, OpenAPI()) }

func (a *api) list(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"sessions": a.m.List()})
}

func (a *api) open(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Scenario string `json:"scenario"`
	}
	if !readBody(w, r, &body) {
		return
	}
	id, s, err := a.m.Open(body.Scenario)
	switch {
	case errors.Is(err, ErrTooMany):
		w.Header().Set("Retry-After", retryAfter)
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return
	case err != nil:
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	var names []string
	for _, t := range s.Tools() {
		names = append(names, t.Name)
	}
	writeJSON(w, http.StatusCreated, OpenedSession{Session: id, Goal: a.m.Goal(id), Tools: names, Report: s.ReportDir()})
}

// session finds the route's session, or answers 404.
func (a *api) session(w http.ResponseWriter, r *http.Request) (string, *engine.AgentRun, bool) {
	id := r.PathValue("id")
	s, err := a.m.Get(id)
	if err != nil {
		writeError(w, http.StatusNotFound, err.Error())
		return id, nil, false
	}
	return id, s, true
}

// CallResponse is a tool call's answer on the HTTP API.
type CallResponse struct {
	Step    int           `json:"step"`
	Tool    string        `json:"tool"`
	Status  events.Status `json:"status"`
	Message string        `json:"message"`
	Screen  string        `json:"screen,omitempty"`
	Ended   bool          `json:"ended"`
}

func (a *api) call(w http.ResponseWriter, r *http.Request) {
	id, s, found := a.session(w, r)
	if !found {
		return
	}
	var body struct {
		Tool string         `json:"tool"`
		Args map[string]any `json:"args"`
	}
	if !readBody(w, r, &body) {
		return
	}
	res, err := s.Call(r.Context(), body.Tool, body.Args)
	a.m.Touch(id)
	switch {
	case errors.Is(err, engine.ErrBusy):
		writeError(w, http.StatusConflict, err.Error())
	case errors.Is(err, engine.ErrAgentRunOver):
		writeError(w, http.StatusGone, err.Error()+"; close it to learn its verdict")
	case err != nil:
		writeError(w, http.StatusServiceUnavailable, err.Error())
	default:
		writeJSON(w, http.StatusOK, CallResponse{Step: res.Step, Tool: res.Tool, Status: res.Status,
			Message: res.Message, Screen: res.Screen, Ended: res.Ended})
	}
}

func (a *api) screen(w http.ResponseWriter, r *http.Request, s Watched) {
	evs, _ := events.ReadFile(filepath.Join(s.ReportDir(), "events.jsonl"))
	latest := ""
	for _, e := range evs {
		if e.Kind == events.KindScreen && e.Screen != "" {
			latest = e.Screen
		}
	}
	if latest == "" {
		writeError(w, http.StatusNotFound, "no screen has been captured yet; call observe_screen")
		return
	}
	// The run writes screens in the background after announcing them.
	f, err := report.OpenScreen(s.ReportDir(), latest)
	var b []byte
	if err == nil {
		b, err = io.ReadAll(f)
		f.Close()
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, "read the screen: "+err.Error())
		return
	}
	writePNG(w, latest, b)
}

func (a *api) steer(w http.ResponseWriter, r *http.Request, s Watched) {
	var body events.Steer
	if !readBody(w, r, &body) {
		return
	}
	if err := s.Steer(body); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"action": body.Action})
}

func (a *api) close(w http.ResponseWriter, r *http.Request) {
	id, _, found := a.session(w, r)
	if !found {
		return
	}
	var body struct {
		Verdict string `json:"verdict"`
		Reason  string `json:"reason"`
	}
	if r.ContentLength != 0 && !readBody(w, r, &body) {
		return
	}
	if body.Verdict != "" && body.Verdict != events.ModelGoalMet && body.Verdict != events.ModelGoalNotMet {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("verdict must be %s or %s", events.ModelGoalMet, events.ModelGoalNotMet))
		return
	}
	res, err := a.m.Close(r.Context(), id, body.Verdict, body.Reason)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, ClosedSession{Verdict: res.Verdict, Outcome: res.Outcome, Reasons: res.Reasons, Report: res.ReportDir})
}

// events streams the session's events.jsonl as Server-Sent Events, each
// with its seq as id, from after Last-Event-ID (or the start), following
// the file until run.ended. The file holds every event, redacted, so a
// client that reconnects with the last id it saw loses none.
func (a *api) events(w http.ResponseWriter, r *http.Request, s Watched) {
	after := int64(0)
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, "Last-Event-ID must be an event's seq")
			return
		}
		after = n
	}
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if flusher != nil {
		flusher.Flush()
	}
	_ = followEvents(r.Context(), filepath.Join(s.ReportDir(), "events.jsonl"), after, a.m.bell.wait, func(seq int64, kind string, line []byte) error {
		if _, err := fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", seq, kind, line); err != nil {
			return err
		}
		if flusher != nil {
			flusher.Flush()
		}
		return nil
	})
}

// followPoll is how often an event stream looks for new events when
// nothing rang.
const followPoll = 100 * time.Millisecond

// followEvents calls emit for every complete line of an events.jsonl with
// a seq after `after`, looking for more whenever wake's channel closes
// (and every poll interval, for writers that do not ring) until run.ended
// or ctx ends.
func followEvents(ctx context.Context, path string, after int64, wake func() <-chan struct{}, emit func(seq int64, kind string, line []byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	rd := bufio.NewReader(f)
	var partial []byte
	for {
		rung := wake()
		chunk, err := rd.ReadBytes('\n')
		partial = append(partial, chunk...)
		if err == nil {
			line := bytes.TrimSpace(partial)
			partial = partial[:0]
			var head struct {
				Seq  int64  `json:"seq"`
				Kind string `json:"kind"`
			}
			if json.Unmarshal(line, &head) != nil || head.Seq <= after {
				continue
			}
			if err := emit(head.Seq, head.Kind, line); err != nil {
				return err
			}
			if head.Kind == string(events.KindRunEnded) {
				return nil
			}
			continue
		}
		if err != io.EOF {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-rung:
		case <-time.After(followPoll):
		}
	}
}
