package capacity

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Many requests through a group bounded to two never hold more than two
// slots at once, and the ones that waited say so.
func TestAcquireBounds(t *testing.T) {
	t.Parallel()
	g, err := New(map[string]int{"model": 2})
	if err != nil {
		t.Fatal(err)
	}
	var inFlight, peak, waits atomic.Int64
	w := Waiter{Waiting: func(group string, limit int) {
		if group != "model" || limit != 2 {
			t.Errorf("waiting for %s/%d, want model/2", group, limit)
		}
		waits.Add(1)
	}}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			release, err := g.Acquire(context.Background(), "model", w)
			if err != nil {
				t.Error(err)
				return
			}
			n := inFlight.Add(1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			time.Sleep(5 * time.Millisecond)
			inFlight.Add(-1)
			release()
			release() // a second release is harmless
		})
	}
	wg.Wait()
	if p := peak.Load(); p != 2 {
		t.Errorf("peak in flight = %d, want 2", p)
	}
	if waits.Load() == 0 {
		t.Error("no request waited, though eight shared two slots")
	}
}

// A group nobody bounded, and nil gates, never wait.
func TestUnbounded(t *testing.T) {
	t.Parallel()
	var nilGates *Gates
	for _, g := range []*Gates{nilGates, must(New(map[string]int{"ocr": 1}))} {
		for range 3 {
			if _, err := g.Acquire(context.Background(), "model", Waiter{Waiting: func(string, int) { t.Error("waited on an unbounded group") }}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// A wait ends with the context, and the time it took is reported.
func TestAcquireCancelled(t *testing.T) {
	t.Parallel()
	g := must(New(map[string]int{"model": 1}))
	release, err := g.Acquire(context.Background(), "model", Waiter{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := g.Acquire(ctx, "model", Waiter{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the deadline", err)
	}
	var waited time.Duration
	done := make(chan struct{})
	go func() {
		defer close(done)
		r, err := g.Acquire(context.Background(), "model", Waiter{Acquired: func(_ string, _ int, d time.Duration) { waited = d }})
		if err == nil {
			r()
		}
	}()
	time.Sleep(30 * time.Millisecond)
	release()
	<-done
	if waited < 20*time.Millisecond {
		t.Errorf("waited = %v, want at least the 30 ms the slot was held", waited)
	}
}

// Runs that share gates must agree on a group's bound.
func TestBoundConflict(t *testing.T) {
	t.Parallel()
	g := must(New(map[string]int{"model": 2}))
	if err := g.Bound("model", 2); err != nil {
		t.Errorf("the same bound again: %v", err)
	}
	if err := g.Bound("model", 3); err == nil {
		t.Error("another bound for model was accepted")
	}
	if err := g.Bound("ocr", 0); err == nil {
		t.Error("a bound of 0 was accepted")
	}
	if g.Limit("model") != 2 || g.Limit("ocr") != 0 {
		t.Errorf("limits = %d, %d", g.Limit("model"), g.Limit("ocr"))
	}
}

func must(g *Gates, err error) *Gates {
	if err != nil {
		panic(err)
	}
	return g
}

// A zero Gates, which a suite fills from its runs' operator files, takes
// bounds and holds requests to them.
func TestZeroGatesTakeBounds(t *testing.T) {
	t.Parallel()
	var g Gates
	if got := g.Limit("model"); got != 0 {
		t.Fatalf("a zero Gates bounds model to %d", got)
	}
	if err := g.Bound("model", 1); err != nil {
		t.Fatal(err)
	}
	release, err := g.Acquire(context.Background(), "model", Waiter{})
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := g.Acquire(ctx, "model", Waiter{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a second request in a group bounded to one got %v, want it to wait until its context ended", err)
	}
}

// New bounds every group it is given, and refuses the bounds when one of
// them is not positive.
func TestNewBoundsEachGroup(t *testing.T) {
	t.Parallel()
	g := must(New(map[string]int{"model": 2, "ocr": 1, "vision": 3}))
	if g.Limit("model") != 2 || g.Limit("ocr") != 1 || g.Limit("vision") != 3 {
		t.Errorf("limits = %d, %d, %d, want 2, 1, 3", g.Limit("model"), g.Limit("ocr"), g.Limit("vision"))
	}
	if _, err := New(map[string]int{"model": 2, "ocr": 0}); err == nil || !strings.Contains(err.Error(), "ocr") {
		t.Errorf("New with ocr bounded to 0: %v, want an error naming ocr", err)
	}
}
