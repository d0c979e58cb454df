package engine

import (
	"context"
	"sync"
	"time"
)

// pausableDeadline is a context that ends at a deadline which can be
// paused: while paused its clock does not run, and resuming moves the
// deadline on by the time spent paused. It is the run's work context when
// a takeover pauses the deadline (--takeover-pauses-deadline). Its Err is
// context.DeadlineExceeded when the deadline ends it, as a
// context.WithTimeout's is, and contexts derived from it see the same.
type pausableDeadline struct {
	parent context.Context
	done   chan struct{}
	stop   func() bool // detaches from the parent

	mu       sync.Mutex
	err      error
	deadline time.Time
	timer    *time.Timer
	pausedAt time.Time // zero unless paused
	// paused is the time spent paused before pausedAt.
	paused time.Duration
}

func withPausableDeadline(parent context.Context, d time.Duration) (*pausableDeadline, context.CancelFunc) {
	c := &pausableDeadline{parent: parent, done: make(chan struct{}), deadline: time.Now().Add(d)}
	c.timer = time.AfterFunc(d, func() { c.end(context.DeadlineExceeded) })
	c.stop = context.AfterFunc(parent, func() { c.end(parent.Err()) })
	return c, func() { c.end(context.Canceled) }
}

func (c *pausableDeadline) end(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	c.err = err
	c.timer.Stop()
	c.stop()
	close(c.done)
}

// pause stops the clock; it is a no-op while paused or once ended.
func (c *pausableDeadline) pause() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil || !c.pausedAt.IsZero() {
		return
	}
	if !c.timer.Stop() {
		return // the deadline has just fired
	}
	c.pausedAt = time.Now()
}

// resume runs the clock again, with the deadline moved on by the pause.
func (c *pausableDeadline) resume() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil || c.pausedAt.IsZero() {
		return
	}
	c.deadline = c.deadline.Add(time.Since(c.pausedAt))
	c.paused += time.Since(c.pausedAt)
	c.pausedAt = time.Time{}
	c.timer.Reset(time.Until(c.deadline))
}

func (c *pausableDeadline) Deadline() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.pausedAt.IsZero() {
		// While paused the deadline moves on with the clock.
		return c.deadline.Add(time.Since(c.pausedAt)), true
	}
	return c.deadline, true
}

func (c *pausableDeadline) Done() <-chan struct{} { return c.done }

func (c *pausableDeadline) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *pausableDeadline) Value(key any) any { return c.parent.Value(key) }

// workContext is the context the run's work is done in: it ends when the
// deadline's reserve begins, or with ctx. When a takeover pauses the
// deadline its clock can be paused (r.clock).
func (r *Runner) workContext(ctx context.Context) (context.Context, context.CancelFunc) {
	total, reserve := r.deadlines()
	if r.takeover != nil && r.takeover.pausesDeadline {
		c, cancel := withPausableDeadline(ctx, total-reserve)
		r.clock = c
		return c, cancel
	}
	return context.WithTimeout(ctx, total-reserve)
}

// pausedFor is how long the clock has been paused in all.
func (c *pausableDeadline) pausedFor() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.paused
	if !c.pausedAt.IsZero() {
		d += time.Since(c.pausedAt)
	}
	return d
}

// deadlineUsed is how much of the deadline the run has used: the time
// since it started, less what a takeover paused.
func (s *runState) deadlineUsed() time.Duration {
	used := time.Since(s.startedAt)
	if s.r.clock != nil {
		used -= s.r.clock.pausedFor()
	}
	return used
}
