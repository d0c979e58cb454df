package cdp

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
)

// TestPageLoads feeds the main frame's events to pageLoads and checks when
// a capture would wait. Timing is the browser's business; this checks the
// state the events leave.
func TestPageLoads(t *testing.T) {
	t.Parallel()
	const main, child = cdp.FrameID("main"), cdp.FrameID("child")
	requested := func(f cdp.FrameID, d page.ClientNavigationDisposition) any {
		return &page.EventFrameRequestedNavigation{FrameID: f, Disposition: d}
	}
	tests := []struct {
		name   string
		events []any
		busy   bool
		newDoc bool
		// begun is how many loads began.
		begun uint64
	}{
		{"nothing happened", nil, false, false, 0},
		{"a link was clicked", []any{requested(main, page.ClientNavigationDispositionCurrentTab)}, true, true, 1},
		{"a link opens a new tab", []any{requested(main, page.ClientNavigationDispositionNewTab)}, false, false, 0},
		{"a load is under way", []any{&page.EventFrameStartedLoading{FrameID: main}}, true, true, 1},
		{"a load ended", []any{
			requested(main, page.ClientNavigationDispositionCurrentTab),
			&page.EventFrameStartedLoading{FrameID: main},
			&page.EventFrameStoppedLoading{FrameID: main},
		}, false, true, 1},
		{"two loads ended", []any{
			&page.EventFrameStartedLoading{FrameID: main},
			&page.EventFrameStoppedLoading{FrameID: main},
			&page.EventFrameStartedLoading{FrameID: main},
			&page.EventFrameStoppedLoading{FrameID: main},
		}, false, true, 2},
		{"an iframe loads", []any{&page.EventFrameStartedLoading{FrameID: child}}, false, false, 0},
		{"a fragment link keeps the document", []any{
			requested(main, page.ClientNavigationDispositionCurrentTab),
			&page.EventNavigatedWithinDocument{FrameID: main},
		}, false, true, 1},
		{"pushState during a load does not end it", []any{
			&page.EventFrameStartedLoading{FrameID: main},
			&page.EventNavigatedWithinDocument{FrameID: main},
		}, true, true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l := newPageLoads(main)
			_, begins := l.nextBegin()
			for _, ev := range tt.events {
				l.onEvent(ev)
			}
			select {
			case <-begins:
				if tt.begun == 0 {
					t.Error("the channel for the next load closed, with no load begun")
				}
			default:
				if tt.begun > 0 {
					t.Error("the channel for the next load is open after a load began")
				}
			}
			if got := l.busy(); got != tt.busy {
				t.Errorf("busy = %v, want %v", got, tt.busy)
			}
			if got := l.newDocument(); got != tt.newDoc {
				t.Errorf("newDocument = %v, want %v", got, tt.newDoc)
			}
			if got := l.loadsBegun(); got != tt.begun {
				t.Errorf("loadsBegun = %d, want %d", got, tt.begun)
			}
		})
	}
}

// TestPageLoadsWait checks that a capture waits for a load to end, gives
// up on a navigation that never starts, and leaves room in the caller's
// deadline.
func TestPageLoadsWait(t *testing.T) {
	t.Parallel()
	const main = cdp.FrameID("main")
	t.Run("until the load ends", func(t *testing.T) {
		t.Parallel()
		l := newPageLoads(main)
		l.onEvent(&page.EventFrameStartedLoading{FrameID: main})
		go func() {
			time.Sleep(100 * time.Millisecond)
			l.onEvent(&page.EventFrameStoppedLoading{FrameID: main})
		}()
		start := time.Now()
		if err := l.wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited < 90*time.Millisecond || l.busy() {
			t.Errorf("returned after %s with busy %v, want once the load ended", waited, l.busy())
		}
	})
	t.Run("a request that never loads", func(t *testing.T) {
		t.Parallel()
		l := newPageLoads(main)
		l.onEvent(&page.EventFrameRequestedNavigation{FrameID: main, Disposition: page.ClientNavigationDispositionCurrentTab})
		start := time.Now()
		if err := l.wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited < maxRequestWait || waited > maxLoadWait {
			t.Errorf("returned after %s, want after about %s", waited, maxRequestWait)
		}
	})
	t.Run("a request that turns into a load", func(t *testing.T) {
		t.Parallel()
		// The load starts after the request and ends after the request's
		// own wait: wait follows it to its end rather than giving up when
		// the request's wait is over.
		l := newPageLoads(main)
		l.onEvent(&page.EventFrameRequestedNavigation{FrameID: main, Disposition: page.ClientNavigationDispositionCurrentTab})
		go func() {
			time.Sleep(maxRequestWait / 5)
			l.onEvent(&page.EventFrameStartedLoading{FrameID: main})
			time.Sleep(maxRequestWait + maxRequestWait/2)
			l.onEvent(&page.EventFrameStoppedLoading{FrameID: main})
		}()
		if err := l.wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		if l.busy() {
			t.Error("returned while the load the request turned into was under way")
		}
	})
	t.Run("half the caller's time at most", func(t *testing.T) {
		t.Parallel()
		l := newPageLoads(main)
		l.onEvent(&page.EventFrameStartedLoading{FrameID: main})
		ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
		defer cancel()
		start := time.Now()
		if err := l.wait(ctx); err != nil {
			t.Fatalf("wait: %v, want nil with time left to capture", err)
		}
		if waited := time.Since(start); waited > 300*time.Millisecond {
			t.Errorf("waited %s of a 400ms deadline", waited)
		}
	})
}
