// Package capacity bounds the requests in flight to each capacity group of
// backends (the model endpoint, a service declared tools call) across every
// run in one process. The bounds are process-local: several processes
// sharing a backend each keep their own (docs/language.md, "services").
package capacity

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"
)

// Gates holds one semaphore per bounded group. A nil *Gates bounds
// nothing; a zero Gates bounds nothing until Bound is called. It is safe
// for concurrent use.
type Gates struct {
	mu     sync.Mutex
	groups map[string]*gate
}

type gate struct {
	limit int
	sem   *semaphore.Weighted
}

// New returns gates with the given bounds (group -> max_concurrent).
func New(limits map[string]int) (*Gates, error) {
	g := &Gates{}
	if err := g.BoundEach(limits); err != nil {
		return nil, err
	}
	return g, nil
}

// BoundEach bounds every group of limits (group -> max_concurrent), as
// Bound does one, and stops at the first that disagrees with its bound.
func (g *Gates) BoundEach(limits map[string]int) error {
	for _, name := range sortedNames(limits) {
		if err := g.Bound(name, limits[name]); err != nil {
			return err
		}
	}
	return nil
}

// Bound sets a group's bound. Bounding a group again with the same limit
// is a no-op; another limit is an error, because runs sharing the gates
// must agree on what the backend holds.
func (g *Gates) Bound(name string, limit int) error {
	if limit < 1 {
		return fmt.Errorf("bound capacity group %s: max_concurrent %d is not positive", name, limit)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.groups == nil {
		g.groups = map[string]*gate{}
	}
	if have, ok := g.groups[name]; ok {
		if have.limit != limit {
			return fmt.Errorf("bound capacity group %s: max_concurrent %d, but it is already bounded to %d", name, limit, have.limit)
		}
		return nil
	}
	g.groups[name] = &gate{limit: limit, sem: semaphore.NewWeighted(int64(limit))}
	return nil
}

// Limit returns a group's bound, 0 when it has none.
func (g *Gates) Limit(name string) int {
	if gt := g.lookup(name); gt != nil {
		return gt.limit
	}
	return 0
}

func (g *Gates) lookup(name string) *gate {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.groups[name]
}

// Waiter hears about a request that has to wait for its group: Waiting
// before it blocks, Acquired once it holds a slot (waited is how long that
// took). Either may be nil.
type Waiter struct {
	Waiting  func(group string, limit int)
	Acquired func(group string, limit int, waited time.Duration)
}

// Acquire takes a slot of the group for one request and returns the
// function that gives it back. An unbounded group returns at once. When
// every slot is taken it waits, telling w, until one is free or ctx ends
// (then the error is ctx's).
func (g *Gates) Acquire(ctx context.Context, name string, w Waiter) (release func(), err error) {
	gt := g.lookup(name)
	if gt == nil {
		return func() {}, nil
	}
	if !gt.sem.TryAcquire(1) {
		if w.Waiting != nil {
			w.Waiting(name, gt.limit)
		}
		start := time.Now()
		if err := gt.sem.Acquire(ctx, 1); err != nil {
			return nil, fmt.Errorf("wait for capacity group %s (max_concurrent %d): %w", name, gt.limit, err)
		}
		if w.Acquired != nil {
			w.Acquired(name, gt.limit, time.Since(start))
		}
	}
	var once sync.Once
	return func() { once.Do(func() { gt.sem.Release(1) }) }, nil
}

func sortedNames(m map[string]int) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
