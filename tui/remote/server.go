package remote

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/inbox"
	"github.com/kasmrt/kasmrt/tui"
)

// listEvery is how often a server's list of runs and sessions is read
// again, for the ones that appeared since.
const listEvery = time.Second

// Server is a server's runs and sessions as the fleet console's source:
// each is followed as attach follows one run, its screens mirrored into a
// folder of its own, and answered and steered through the API.
type Server struct {
	root, token, dir string
	http             *http.Client

	mu sync.Mutex
	// clients are keyed by fleetID, since a run and a session may have
	// the same id.
	clients map[string]*Client
}

// fleetID names a run ("runs/ID") or a session ("sessions/ID") in the
// fleet, as its URL does under /v1/: the server's runs and sessions are
// numbered apart, so one of each may share an id.
func fleetID(kind, id string) string { return kind + "/" + id }

// DialServer checks that target is a server's URL the token opens.
func DialServer(ctx context.Context, target, token, dir string) (*Server, error) {
	u, err := url.Parse(strings.TrimRight(target, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("attach %s: want a server's http:// or https:// URL", target)
	}
	if u.RawQuery != "" {
		// The query may hold a credential: it is not repeated.
		u.RawQuery = ""
		return nil, fmt.Errorf("attach %s: no query string; the token comes from --token-file or $KASMRT_TOKEN", u)
	}
	s := &Server{root: u.Scheme + "://" + u.Host, token: token, dir: dir, http: &http.Client{}, clients: map[string]*Client{}}
	if _, _, err := s.list(ctx); err != nil {
		return nil, fmt.Errorf("attach %s: %w", target, err)
	}
	return s, nil
}

func (s *Server) list(ctx context.Context) ([]Run, []session, error) {
	probe := &Client{token: s.token, http: s.http}
	var runs struct {
		Runs []Run `json:"runs"`
	}
	if err := probe.getJSON(ctx, s.root+"/v1/runs", &runs); err != nil {
		return nil, nil, err
	}
	sessions, err := probe.sessions(ctx, s.root)
	return runs.Runs, sessions, err
}

// Single returns the URL of the server's one run when it has exactly one
// run and no session (kasmrt run --listen), so attach can show that run
// at once instead of a table of one.
func (s *Server) Single(ctx context.Context) (string, bool) {
	runs, sessions, err := s.list(ctx)
	if err != nil || len(runs) != 1 || len(sessions) != 0 {
		return "", false
	}
	return s.root + "/v1/runs/" + url.PathEscape(runs[0].Run), true
}

// IsServerURL reports whether target names a server rather than one run
// or session.
func IsServerURL(target string) bool {
	u, err := url.Parse(strings.TrimRight(target, "/"))
	if err != nil {
		return false
	}
	p := u.EscapedPath()
	return p == "" || p == "/v1" || p == "/v1/runs" || p == "/v1/sessions"
}

// Watch follows every run and session the server has, and those that
// appear later, until ctx ends.
func (s *Server) Watch(ctx context.Context, sink tui.FleetSink) error {
	tick := time.NewTicker(listEvery)
	defer tick.Stop()
	for {
		runs, sessions, err := s.list(ctx)
		if err == nil {
			for _, r := range runs {
				s.follow(ctx, sink, fleetID("runs", r.Run), r, "", s.root+"/v1/runs/"+url.PathEscape(r.Run))
			}
			for _, se := range sessions {
				// Sessions of one scenario differ by their ids.
				info := Run{Run: se.Session, Name: se.Scenario, Scenario: se.Scenario + " " + shortID(se.Session), Goal: se.Goal, Report: se.Report}
				s.follow(ctx, sink, fleetID("sessions", se.Session), info, "session", s.root+"/v1/sessions/"+url.PathEscape(se.Session))
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// shortID is enough of a session's id to tell it from the others.
func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// follow starts following the run or session id (a fleetID) when it is
// not followed yet.
func (s *Server) follow(ctx context.Context, sink tui.FleetSink, id string, info Run, mode, base string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, known := s.clients[id]; known {
		return
	}
	// The folder is named by the order the runs appeared in, not by the
	// id the server chose, so no id ("..") can lead outside s.dir.
	dir := filepath.Join(s.dir, fmt.Sprintf("%04d", len(s.clients)+1))
	if err := os.MkdirAll(filepath.Join(dir, "screens"), 0o700); err != nil {
		return
	}
	c := &Client{base: base, token: s.token, http: s.http, dir: dir, Info: info}
	s.clients[id] = c
	desc := tui.FleetRun{ID: id, Scenario: info.Scenario, Mode: mode, State: tui.RunRunning, Dir: dir}
	sink.Run(desc)
	go func() {
		_ = c.Follow(ctx, func(e events.Event) {
			sink.Event(id, e)
			if e.Kind == events.KindRunEnded {
				desc.State = tui.RunEnded
				sink.Run(desc)
			}
		}, nil)
	}()
}

// client is the follower of runID, a fleetID.
func (s *Server) client(runID string) (*Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, found := s.clients[runID]
	if !found {
		return nil, fmt.Errorf("no run or session %q", runID)
	}
	return c, nil
}

// AnswerMarked answers a question of one run or session with the
// operator's mark.
func (s *Server) AnswerMarked(runID, questionID, text string, mark inbox.Mark) error {
	c, err := s.client(runID)
	if err != nil {
		return err
	}
	return c.AnswerMarked(questionID, text, mark)
}

// Steer steers one run or session.
func (s *Server) Steer(runID string, st events.Steer) error {
	c, err := s.client(runID)
	if err != nil {
		return err
	}
	return c.Steer(st)
}
