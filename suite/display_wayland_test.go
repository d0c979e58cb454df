package suite

import (
	"context"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/drivers/desktop"
	"github.com/kasmrt/kasmrt/internal/testkit"
)

// A worker asked for a Wayland session starts a compositor for the run
// instead of handing out the X display it keeps.
func TestWorkerStartsWaylandSessions(t *testing.T) {
	testkit.Need(t, "sway")
	k := &keptDisplay{}
	defer k.close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := k.StartDisplayServer(ctx, desktop.DisplayOptions{Desktop: desktop.DesktopWayland})
	if err != nil {
		t.Fatalf("StartSession: %v", err)
	}
	defer s.Close()
	if wm := s.WindowManager(); wm != "sway" {
		t.Errorf("the worker's session runs %q, want a Wayland compositor (sway)", wm)
	}
	if k.started != 0 {
		t.Errorf("the worker counted %d kept displays started for a Wayland run", k.started)
	}
}
