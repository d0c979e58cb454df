package remote

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/tui"
)

// fleetRecorder keeps the runs a source describes.
type fleetRecorder struct {
	mu   sync.Mutex
	runs map[string]tui.FleetRun
}

func (r *fleetRecorder) Run(d tui.FleetRun) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.runs[d.ID] = d
}

func (r *fleetRecorder) Event(string, events.Event) {}

// TestServerKeepsMirrorsInItsFolder: the ids a server gives its runs and
// sessions name no folder of the attaching machine, so one named ".." or
// "." mirrors its screens inside the attach folder like any other.
func TestServerKeepsMirrorsInItsFolder(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/v1/runs":
			_, _ = w.Write([]byte(`{"runs":[{"run":".."},{"run":"."},{"run":"ordinary"}]}`))
		case r.URL.Path == "/v1/sessions":
			_, _ = w.Write([]byte(`{"sessions":[{"session":".."}]}`))
		case strings.HasSuffix(r.URL.Path, "/events"):
			<-r.Context().Done()
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	parent := t.TempDir()
	dir := filepath.Join(parent, "attach")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	s, err := DialServer(ctx, srv.URL, "", dir)
	if err != nil {
		t.Fatal(err)
	}
	rec := &fleetRecorder{runs: map[string]tui.FleetRun{}}
	watchCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Watch(watchCtx, rec) }()
	for {
		rec.mu.Lock()
		n := len(rec.runs)
		rec.mu.Unlock()
		if n >= 4 || ctx.Err() != nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	<-done
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.runs) != 4 {
		t.Fatalf("runs %+v, want the three runs and the session the server lists (the session shares an id with a run)", rec.runs)
	}
	folders := map[string]bool{}
	for id, d := range rec.runs {
		rel, err := filepath.Rel(dir, d.Dir)
		if err != nil || !filepath.IsLocal(rel) || rel == "." {
			t.Errorf("run %q mirrors into %s, outside the attach folder %s", id, d.Dir, dir)
		}
		if folders[d.Dir] {
			t.Errorf("run %q shares its folder %s", id, d.Dir)
		}
		folders[d.Dir] = true
	}
	if _, err := os.Stat(filepath.Join(parent, "screens")); err == nil {
		t.Errorf("a screens folder was made beside the attach folder")
	}
}
