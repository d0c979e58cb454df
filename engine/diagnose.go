package engine

import (
	"context"
	"fmt"
	"image"
	"time"

	"github.com/kasmrt/kasmrt/engine/events"
)

// failureScreenTimeout bounds the capture that documents a failed step: it
// runs even when the step was cut short, so it cannot wait for long.
const failureScreenTimeout = 3 * time.Second

// withFailureScreen attaches a capture of the screen as it is now to a step
// that did not succeed and has no screen of its own, so every failed or
// refused step shows what the application looked like. The capture is
// evidence only: it neither completes nor clears the observation record and
// is not what the loop compares screens with. When no capture can be made
// the message says why.
func (s *runState) withFailureScreen(ctx context.Context, n int, res result) result {
	if res.status == events.StatusOK || res.screen != "" {
		return res
	}
	rel, why := s.failureScreen(ctx, n)
	if rel == "" {
		res.message += "; no screen was captured: " + why
		return res
	}
	res.screen = rel
	return res
}

// failureScreen captures the screen for step n without settling (the
// failure is what is shown, not what follows it), or says why it cannot.
func (s *runState) failureScreen(ctx context.Context, n int) (rel, why string) {
	if s.desk == nil {
		return "", "the X session is not running"
	}
	if s.session != nil {
		select {
		case <-s.session.Done():
			return "", "the X server went away"
		default:
		}
	}
	// The step's own context may be the reason it failed (the deadline, an
	// interrupt); the report's reserve still has room for one capture.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), failureScreenTimeout)
	defer cancel()
	var img *image.RGBA
	var err error
	if s.web.pageIsTheScreen() {
		if !s.web.alive() {
			return "", "the browser is gone"
		}
		img, err = s.web.screenshot(ctx)
	} else {
		img, err = s.desk.Capture(ctx)
	}
	if err != nil {
		return "", fmt.Sprintf("capture the screen: %v", err)
	}
	rel, _, err = s.rep.SaveScreen(img)
	if err != nil {
		return "", err.Error()
	}
	b := img.Bounds()
	s.publish(events.Event{Kind: events.KindScreen, Screen: rel, Step: n, Data: map[string]any{
		"width": b.Dx(), "height": b.Dy(), "settled": false, "diagnostic": true,
	}})
	return rel, ""
}
