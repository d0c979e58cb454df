// Package serve offers sessions to outside agents: scenarios named relative
// to one folder, launched as `kasmrt run` launches them, driven over MCP
// (stdio or streamable HTTP) one call at a time.
package serve

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kasmrt/kasmrt/engine"
	"github.com/kasmrt/kasmrt/engine/capacity"
	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/internal/httpguard"
	"github.com/kasmrt/kasmrt/scenarios"
)

// Options configure a Manager.
type Options struct {
	// ScenariosDir is the folder scenarios are named relative to; nothing
	// outside it can be opened.
	ScenariosDir string
	// Operator is the operator file every session uses ("" for defaults).
	Operator string
	// NewReportDir creates a fresh report directory for a scenario.
	NewReportDir func(scenarioName string) (string, error)
	// Lookup reads the environment for the loader (nil: the process's).
	Lookup scenarios.Lookup
	// Getenv reads the environment for the engine (nil: os.Getenv).
	Getenv func(string) string
	// MaxSessions bounds the sessions open at once (0: no bound).
	MaxSessions int
	// IdleTimeout closes a session no call has used for this long, with a
	// complete report (0: never).
	IdleTimeout time.Duration
}

// ErrTooMany is an open refused because MaxSessions are open.
var ErrTooMany = errors.New("too many sessions are open; close one or retry later")

// Manager holds the open sessions of one server.
type Manager struct {
	opts Options
	// ctx outlives every session; cancelling it ends them all.
	ctx context.Context

	// bell wakes the event streams when any session or run has a new
	// event.
	bell *bell
	// gates bound the requests to each capacity group across every
	// session, as they do across a suite's runs.
	gates *capacity.Gates

	mu       sync.Mutex
	sessions map[string]*open
	runs     map[string]*publishedRun
}

type open struct {
	id       string
	scenario string
	goal     string
	s        *engine.AgentRun
	// used is when a call last started or ended.
	used time.Time
}

// NewManager returns a manager whose sessions live at most as long as ctx.
func NewManager(ctx context.Context, opts Options) *Manager {
	m := &Manager{opts: opts, ctx: ctx, bell: newBell(), gates: new(capacity.Gates), sessions: map[string]*open{}, runs: map[string]*publishedRun{}}
	if opts.IdleTimeout > 0 {
		go m.closeIdle()
	}
	return m
}

// closeIdle closes sessions left unused for the idle timeout, until the
// manager's context ends.
func (m *Manager) closeIdle() {
	tick := time.NewTicker(min(m.opts.IdleTimeout/4, time.Second))
	defer tick.Stop()
	for {
		select {
		case <-m.ctx.Done():
			return
		case now := <-tick.C:
			m.mu.Lock()
			var idle []string
			for id, o := range m.sessions {
				if o.s != nil && now.Sub(o.used) >= m.opts.IdleTimeout {
					idle = append(idle, id)
				}
			}
			m.mu.Unlock()
			for _, id := range idle {
				go func() { _, _ = m.Close(m.ctx, id, "", "") }()
			}
		}
	}
}

// Touch marks a session as used now, so the idle timeout counts from here.
func (m *Manager) Touch(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if o, found := m.sessions[id]; found {
		o.used = time.Now()
	}
}

// Resolve turns a scenario name into a path inside the scenarios folder:
// an absolute path, `..`, or a symlink that leads outside is refused. A
// name that is not there is refused with the names that are.
func (m *Manager) Resolve(name string) (string, error) {
	path, err := m.resolve(name)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("scenario %q: no such file in the scenarios folder; %s", name, m.available())
	}
	return path, err
}

// resolve is Resolve without the list of what is available, which
// listing the folder uses itself.
func (m *Manager) resolve(name string) (string, error) {
	if name == "" || filepath.IsAbs(name) || !filepath.IsLocal(name) {
		return "", fmt.Errorf("scenario %q: name a file inside the scenarios folder, relative to it", name)
	}
	root, err := filepath.EvalSymlinks(m.opts.ScenariosDir)
	if err != nil {
		return "", fmt.Errorf("the scenarios folder: %w", err)
	}
	root, err = filepath.Abs(root)
	if err != nil {
		return "", fmt.Errorf("the scenarios folder: %w", err)
	}
	real, err := filepath.EvalSymlinks(filepath.Join(root, name))
	if err != nil {
		return "", fmt.Errorf("scenario %q: %w", name, errors.Unwrap(err))
	}
	if rel, err := filepath.Rel(root, real); err != nil || !filepath.IsLocal(rel) {
		return "", fmt.Errorf("scenario %q leads outside the scenarios folder", name)
	}
	if st, err := os.Stat(real); err != nil || !st.Mode().IsRegular() {
		return "", fmt.Errorf("scenario %q is not a regular file", name)
	}
	return real, nil
}

// HasModel reports whether the server's sessions have a model: the
// operator file, or the environment, names an endpoint. Sessions offer
// check_expectation and click_grounded only then.
func (m *Manager) HasModel() (bool, error) {
	o, err := scenarios.LoadOperator(m.opts.Operator, m.opts.Lookup)
	if err != nil {
		return false, fmt.Errorf("load the operator file: %w", err)
	}
	return o.HasModel(), nil
}

// Open loads a scenario and launches it as a session; the id names it in
// later calls.
func (m *Manager) Open(name string) (string, *engine.AgentRun, error) {
	if m.opts.ScenariosDir == "" {
		return "", nil, errors.New("this server opens no sessions: it publishes one run")
	}
	path, err := m.Resolve(name)
	if err != nil {
		return "", nil, err
	}
	files, err := engine.LoadSession(path, m.opts.Operator, m.opts.Lookup)
	if err == nil {
		err = m.gates.BoundEach(files.Operator.ServiceLimits())
	}
	if err == nil && files.Operator.Inbox.Listen != "" {
		// The session's engine serves inbox.listen itself: it needs what
		// run --listen needs of an address other machines reach.
		token, key := files.Operator.InboxToken()
		err = httpguard.CheckListen("inbox.listen", files.Operator.Inbox.Listen, token, key)
	}
	if err != nil {
		return "", nil, fmt.Errorf("load %s: %w", name, err)
	}
	id := newID()
	// The slot is taken before the launch, so a burst of opens cannot pass
	// the bound.
	m.mu.Lock()
	if m.opts.MaxSessions > 0 && len(m.sessions) >= m.opts.MaxSessions {
		m.mu.Unlock()
		return "", nil, ErrTooMany
	}
	m.sessions[id] = &open{id: id, scenario: name}
	m.mu.Unlock()
	release := func() { m.mu.Lock(); delete(m.sessions, id); m.mu.Unlock() }

	dir, err := m.opts.NewReportDir(files.Scenario.Name)
	if err == nil {
		// The agent reads the report from its own working directory, not
		// the server's: the path it is given must not depend on either.
		dir, err = filepath.Abs(dir)
	}
	if err != nil {
		release()
		return "", nil, fmt.Errorf("create the report directory: %w", err)
	}
	r, err := engine.New(files, engine.Options{ReportDir: dir, Getenv: m.opts.Getenv, Gates: m.gates, Sinks: []func(events.Event){m.Event}})
	if err != nil {
		release()
		return "", nil, err
	}
	s, err := r.Open(m.ctx)
	if err != nil {
		release()
		return "", nil, err
	}
	m.mu.Lock()
	// The goal goes to the agent and to anyone listing the sessions, so
	// it is redacted as the session's events are (it may name a secret
	// through ${NAME}).
	m.sessions[id].s, m.sessions[id].used, m.sessions[id].goal = s, time.Now(), r.Redact(files.Scenario.Goal)
	m.mu.Unlock()
	// A session the deadline ended keeps its slot until it is closed, so
	// its agent still learns the verdict.
	return id, s, nil
}

// Full reports whether MaxSessions are open, so an open would be refused.
func (m *Manager) Full() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.opts.MaxSessions > 0 && len(m.sessions) >= m.opts.MaxSessions
}

// Get returns an open session.
func (m *Manager) Get(id string) (*engine.AgentRun, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	o, found := m.sessions[id]
	if !found || o.s == nil {
		return nil, fmt.Errorf("no open session %q", id)
	}
	o.used = time.Now()
	return o.s, nil
}

// Goal returns the goal of an open session's scenario.
func (m *Manager) Goal(id string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if o, found := m.sessions[id]; found {
		return o.goal
	}
	return ""
}

// Close ends a session with the agent's verdict and forgets it.
func (m *Manager) Close(ctx context.Context, id, verdict, reason string) (engine.Result, error) {
	s, err := m.Get(id)
	if err != nil {
		return engine.Result{}, err
	}
	res, err := s.Close(ctx, verdict, reason)
	m.mu.Lock()
	delete(m.sessions, id)
	m.mu.Unlock()
	return res, err
}

// CloseAll closes every open session without a verdict from its agent, so
// each ends by the checks with a complete report.
func (m *Manager) CloseAll(ctx context.Context) {
	m.mu.Lock()
	ids := make([]string, 0, len(m.sessions))
	for id, o := range m.sessions {
		if o.s != nil {
			ids = append(ids, id)
		}
	}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Go(func() { _, _ = m.Close(ctx, id, "", "") })
	}
	wg.Wait()
}

// newID returns a session id no client can guess.
func newID() string {
	b := make([]byte, 9)
	_, _ = rand.Read(b)
	return "s-" + strings.ToLower(hex.EncodeToString(b))
}

// SessionInfo describes an open session.
type SessionInfo struct {
	Session  string `json:"session"`
	Scenario string `json:"scenario"`
	Goal     string `json:"goal"`
	Report   string `json:"report"`
}

// List returns the open sessions.
func (m *Manager) List() []SessionInfo {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []SessionInfo{}
	for id, o := range m.sessions {
		if o.s != nil {
			out = append(out, SessionInfo{Session: id, Scenario: o.scenario, Goal: o.goal, Report: o.s.ReportDir()})
		}
	}
	slices.SortFunc(out, func(a, b SessionInfo) int { return strings.Compare(a.Session, b.Session) })
	return out
}
