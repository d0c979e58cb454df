package x11

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"time"
)

// SettleOptions bounds WaitSettled.
type SettleOptions struct {
	// Interval is the pause between captures; zero means 100 ms.
	Interval time.Duration
	// Cap is the longest WaitSettled waits; zero means 2 s.
	Cap time.Duration
}

// WaitSettled captures the screen until two consecutive captures are
// identical or opts.Cap has passed, and returns the last capture and
// whether the screen settled. A cancelled ctx is an error.
func (c *Conn) WaitSettled(ctx context.Context, opts SettleOptions) (*image.RGBA, bool, error) {
	interval, limit := opts.Interval, opts.Cap
	if interval <= 0 {
		interval = 100 * time.Millisecond
	}
	if limit <= 0 {
		limit = 2 * time.Second
	}
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
