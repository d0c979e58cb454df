package suite

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/kasmrt/kasmrt/drivers/desktop"
	"github.com/kasmrt/kasmrt/engine/stage"
)

// resetTimeout bounds how long a kept display may take to lose the last
// run's clients before it is replaced by a new one.
const resetTimeout = 2 * time.Second

// keptDisplay is one worker's machine: the real drivers, except that the
// worker's embedded Xvfb (and its window manager) outlives each run.
// Starting them is most of a short run's fixed cost (docs/benchmarks.md,
// "Suites"); between runs the display is reset (every client but the
// window manager disconnected, the pointer centred) and checked, and one
// that cannot be reset, died, or was started with other settings is
// closed and replaced by a new one.
type keptDisplay struct {
	stage.Drivers
	mu       sync.Mutex
	idle     stage.Keepable
	idleOpts desktop.DisplayOptions
	// Started and Reused count the displays started and handed out
	// again, for the benchmark.
	started, reused int
}

func (k *keptDisplay) StartDisplayServer(ctx context.Context, opts desktop.DisplayOptions) (stage.DisplayServer, error) {
	if opts.Display != "" || opts.Desktop == desktop.DesktopWayland {
		// A borrowed display is not the worker's to keep, and a Wayland
		// compositor is started for each run (no reset to a fresh state
		// is written for one).
		return k.Drivers.StartDisplayServer(ctx, opts)
	}
	k.mu.Lock()
	idle, idleOpts := k.idle, k.idleOpts
	k.idle = nil
	k.mu.Unlock()
	if idle != nil {
		if idleOpts == opts && alive(idle) && !idle.WindowManagerExited() {
			k.mu.Lock()
			k.reused++
			k.mu.Unlock()
			return &keptSession{Keepable: idle, k: k, opts: opts, snapshot: true, kept: true}, nil
		}
		_ = idle.Close()
	}
	s, err := stage.StartKeepable(ctx, opts)
	if err != nil {
		return nil, err
	}
	k.mu.Lock()
	k.started++
	k.mu.Unlock()
	ks := &keptSession{Keepable: s, k: k, opts: opts}
	// What the display holds before any application is what a reset
	// returns to; without it the display is used once, as a new one.
	ks.snapshot = s.Snapshot() == nil
	return ks, nil
}

// close stops the display the worker kept, when its last run is over.
func (k *keptDisplay) close() {
	k.mu.Lock()
	idle := k.idle
	k.idle = nil
	k.mu.Unlock()
	if idle != nil {
		_ = idle.Close()
	}
}

func alive(s stage.DisplayServer) bool {
	select {
	case <-s.Done():
		return false
	default:
		return true
	}
}

// keptSession is a run's use of the worker's display: closing it resets
// the display for the next run instead of stopping it.
type keptSession struct {
	stage.Keepable
	k    *keptDisplay
	opts desktop.DisplayOptions
	// snapshot says the display's fresh state was taken; a display
	// without one is not kept.
	snapshot, kept bool
}

// Kept reports whether the display served an earlier run of the worker.
func (s *keptSession) Kept() bool { return s.kept }

func (s *keptSession) Close() error {
	if err := reset(s); err != nil {
		// Not fresh: the next run gets a new display.
		if cerr := s.Keepable.Close(); cerr != nil {
			return fmt.Errorf("%w; stop it: %v", err, cerr)
		}
		// Said, so a suite whose displays are never kept shows why.
		return fmt.Errorf("%w; the next run gets a new display", err)
	}
	s.k.mu.Lock()
	s.k.idle, s.k.idleOpts = s.Keepable, s.opts
	s.k.mu.Unlock()
	return nil
}

// reset readies the display for the next run and checks that it is as the
// run asked for: alive, with the screen it was started with.
func reset(s *keptSession) error {
	if !s.snapshot {
		return fmt.Errorf("keep display %s: its fresh state is not known", s.Display())
	}
	opts := s.opts
	if !alive(s.Keepable) {
		return fmt.Errorf("keep display %s: the server is gone", s.Display())
	}
	if s.WindowManagerExited() {
		// A display without the window manager session.started names
		// is not as a new one.
		return fmt.Errorf("keep display %s: its window manager has exited", s.Display())
	}
	ctx, cancel := context.WithTimeout(context.Background(), resetTimeout)
	defer cancel()
	return s.Reset(ctx, resetTimeout, opts.Width, opts.Height)
}
