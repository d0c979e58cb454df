package serve

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/inbox"
)

// Watched is what the API serves of a run or a session besides its calls:
// its report directory (events and screens are read from there, as they
// are written), its inbox and its steering.
type Watched interface {
	ReportDir() string
	// Inbox returns the questions and answers, or nil when there are none.
	Inbox() *inbox.Inbox
	Steer(events.Steer) error
}

// RunInfo describes a run the server publishes.
type RunInfo struct {
	Run      string    `json:"run"`
	Name     string    `json:"name"`
	Scenario string    `json:"scenario"`
	Goal     string    `json:"goal"`
	Report   string    `json:"report"`
	Started  time.Time `json:"started"`
}

type publishedRun struct {
	info RunInfo
	run  Watched
}

// RunID is the id a run is published under: its report directory's name,
// unique among the reports of one folder and readable in a URL.
func RunID(reportDir string) string { return filepath.Base(reportDir) }

// Publish makes a run watchable and steerable under /v1/runs/{id} until
// the returned function is called; its id is RunID of its report
// directory. Calling Event with each of the run's events (a bus sink)
// lets event streams follow it at once rather than at their next poll.
func (m *Manager) Publish(info RunInfo, run Watched) (unpublish func()) {
	info.Run = RunID(run.ReportDir())
	info.Report = run.ReportDir()
	if info.Started.IsZero() {
		info.Started = time.Now()
	}
	m.mu.Lock()
	m.runs[info.Run] = &publishedRun{info: info, run: run}
	m.mu.Unlock()
	return func() {
		m.mu.Lock()
		delete(m.runs, info.Run)
		m.mu.Unlock()
	}
}

// Event wakes the event streams: some run or session has a new event in
// its events.jsonl. It is a bus sink and never blocks.
func (m *Manager) Event(events.Event) { m.bell.ring() }

// Runs returns the published runs, oldest first.
func (m *Manager) Runs() []RunInfo {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []RunInfo{}
	for _, p := range m.runs {
		out = append(out, p.info)
	}
	slices.SortFunc(out, func(a, b RunInfo) int { return a.Started.Compare(b.Started) })
	return out
}

func (m *Manager) run(id string) (*publishedRun, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, found := m.runs[id]
	if !found {
		return nil, fmt.Errorf("no published run %q", id)
	}
	return p, nil
}

// bell wakes everyone waiting on it; a waiter takes the channel before it
// looks, so a ring between the look and the wait is not missed.
type bell struct {
	mu sync.Mutex
	ch chan struct{}
}

func newBell() *bell { return &bell{ch: make(chan struct{})} }

func (b *bell) ring() {
	b.mu.Lock()
	defer b.mu.Unlock()
	close(b.ch)
	b.ch = make(chan struct{})
}

func (b *bell) wait() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ch
}

// watchedHandler is a route's handler once its run or session is found.
type watchedHandler func(a *api, w http.ResponseWriter, r *http.Request, t Watched)

// forSession and forRun find the route's session or run, or answer 404.
func forSession(h watchedHandler) func(*api, http.ResponseWriter, *http.Request) {
	return func(a *api, w http.ResponseWriter, r *http.Request) {
		if _, s, found := a.session(w, r); found {
			h(a, w, r, s)
		}
	}
}

func forRun(h watchedHandler) func(*api, http.ResponseWriter, *http.Request) {
	return func(a *api, w http.ResponseWriter, r *http.Request) {
		p, err := a.m.run(r.PathValue("id"))
		if err != nil {
			writeError(w, http.StatusNotFound, err.Error())
			return
		}
		h(a, w, r, p.run)
	}
}

// watchedRoutes are the routes a run and a session share, relative to
// /v1/runs/{id} and /v1/sessions/{id}.
var watchedRoutes = []struct {
	method, suffix string
	handler        watchedHandler
}{
	{http.MethodGet, "/events", (*api).events},
	{http.MethodGet, "/screen", (*api).screen},
	{http.MethodGet, "/screens/{file}", (*api).screenFile},
	{http.MethodPost, "/steer", (*api).steer},
	{http.MethodGet, "/questions", inboxRoute("/questions")},
	{http.MethodGet, "/history", inboxRoute("/history")},
	{http.MethodPost, "/questions/{qid}/answer", inboxRoute("/questions/{qid}/answer")},
	{http.MethodGet, "/inbox/events", inboxRoute("/events")},
}

// inboxRoute hands the request on to the inbox's own route, so questions
// and answers are served by one handler wherever they are reached.
func inboxRoute(path string) watchedHandler {
	return func(_ *api, w http.ResponseWriter, r *http.Request, t Watched) {
		in := t.Inbox()
		if in == nil {
			writeError(w, http.StatusNotFound, "this has no inbox: its operator file sets no inbox token, and no console or --listen gives it one")
			return
		}
		inner := r.Clone(r.Context())
		inner.URL.Path = strings.ReplaceAll(path, "{qid}", r.PathValue("qid"))
		inner.URL.RawPath = ""
		in.Routes().ServeHTTP(w, inner)
	}
}

func (a *api) listRuns(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"runs": a.m.Runs()})
}

func (a *api) runInfo(w http.ResponseWriter, r *http.Request) {
	p, err := a.m.run(r.PathValue("id"))
	if err != nil {
		writeError(w, http.StatusNotFound, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, p.info)
}

// screenName is a capture's file name in a report's screens/ folder.
var screenName = regexp.MustCompile(`^[0-9]{4,}\.png$`)

// screenFile serves one capture by name, so a remote console can show
// the screens its events name.
func (a *api) screenFile(w http.ResponseWriter, r *http.Request, t Watched) {
	name := r.PathValue("file")
	if !screenName.MatchString(name) {
		writeError(w, http.StatusNotFound, "a screen is named NNNN.png")
		return
	}
	b, err := os.ReadFile(filepath.Join(t.ReportDir(), "screens", name))
	if err != nil {
		writeError(w, http.StatusNotFound, "no screen "+name)
		return
	}
	writePNG(w, "screens/"+name, b)
}

func writePNG(w http.ResponseWriter, rel string, b []byte) {
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Screen", rel)
	_, _ = w.Write(b)
}
