package x11

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"time"
)

// WaitSettled waits until the screen is still or opts.Cap has passed, and
// returns a capture taken then and whether the screen settled. With the
// DAMAGE extension the screen is still once nothing has been drawn for
// opts.Quiet (after the first drawing, when opts.Response asks to wait for
// one), and the screen is captured once; otherwise captures are taken
// opts.Interval apart until two are identical. A cancelled ctx is an
// error.
func (c *Conn) WaitSettled(ctx context.Context, opts SettleOptions) (*image.RGBA, bool, error) {
	opts = opts.WithDefaults()
	if c.damage != nil && !opts.Compare {
		if _, _, err := c.damage.state(); err == nil {
			return c.settleByDamage(ctx, opts)
		}
	}
	return c.settleByComparing(ctx, opts)
}

// settleByDamage waits for a quiet screen (outside opts.Ignore) as the
// DAMAGE reports tell it, then captures.
func (c *Conn) settleByDamage(ctx context.Context, opts SettleOptions) (*image.RGBA, bool, error) {
	start := time.Now()
	deadline := start.Add(opts.Cap)
	since := start
	if !opts.Since.IsZero() && opts.Since.Before(start) {
		since = opts.Since
	}
	t := time.NewTimer(opts.Cap)
	defer t.Stop()
	for {
		last, err := c.damage.lastOutside(opts.Ignore)
		if err != nil {
			// The watching connection died (the server is going away):
			// the comparison says what can still be said.
			return c.settleByComparing(ctx, SettleOptions{Interval: opts.Interval, Cap: max(time.Until(deadline), time.Millisecond)})
		}
		// ready is when the screen counts as settled if nothing more is
		// drawn: Response after the start while the action's drawing has
		// not begun, Quiet after the newest drawing otherwise.
		ready := last.Add(opts.Quiet)
		if !last.After(since) && opts.Response > 0 {
			ready = start.Add(opts.Response)
		}
		now := time.Now()
		// A window mapped and not yet painted shows the screen under it:
		// the screen is not still until it has painted (or had its time).
		if until := c.damage.unpaintedUntil(now, opts.Ignore); until.After(ready) {
			ready = until
		}
		settled := !now.Before(ready)
		if settled || !now.Before(deadline) {
			img, err := c.Capture(ctx)
			if err != nil {
				return nil, false, fmt.Errorf("wait for screen to settle: %w", err)
			}
			return img, settled, nil
		}
		wake := ready
		if deadline.Before(wake) {
			wake = deadline
		}
		t.Reset(wake.Sub(now))
		select {
		case <-ctx.Done():
			return nil, false, fmt.Errorf("wait for screen to settle: %w", ctx.Err())
		case <-c.damage.kick:
		case <-t.C:
		}
	}
}

// settleByComparing captures the screen until two consecutive captures
// are identical or opts.Cap has passed.
func (c *Conn) settleByComparing(ctx context.Context, opts SettleOptions) (*image.RGBA, bool, error) {
	interval, limit := opts.Interval, opts.Cap
	deadline := time.Now().Add(limit)
	prev, err := c.Capture(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("wait for screen to settle: %w", err)
	}
	// Two buffers alternate so a long wait allocates nothing per capture.
	next := image.NewRGBA(prev.Rect)
	t := time.NewTimer(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return prev, false, fmt.Errorf("wait for screen to settle: %w", ctx.Err())
		case <-t.C:
		}
		if err := c.captureInto(next); err != nil {
			return prev, false, fmt.Errorf("wait for screen to settle: %w", err)
		}
		if bytes.Equal(prev.Pix, next.Pix) {
			return next, true, nil
		}
		prev, next = next, prev
		if !time.Now().Before(deadline) {
			return prev, false, nil
		}
		t.Reset(min(interval, time.Until(deadline)))
	}
}
