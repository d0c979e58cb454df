package engine

import (
	"context"
	"fmt"
	"image"
	"time"

	"github.com/kasmrt/kasmrt/engine/events"
)

// finalCaptureTimeout bounds the final capture, so a display that stopped
// answering cannot eat the reserve the report needs.
const finalCaptureTimeout = 5 * time.Second

// finalCapture records the screen as the run ended — after the loop or
// the script, on a failure, the deadline or Ctrl-C alike, and also when no
// step ran — so every report shows how the application was left. A run
// that never had a display records nothing; one whose display is gone
// records why there is no capture.
func (s *runState) finalCapture(ctx context.Context, outcome events.Outcome) {
	if s.env.desk == nil {
		return
	}
	final := events.FinalCapture{Ending: outcome}
	if s.env.session != nil {
		select {
		case <-s.env.session.Done():
			s.publish(events.Event{Message: "no final capture: the X server went away", Data: final})
			return
		default:
		}
	}
	ctx, cancel := context.WithTimeout(ctx, finalCaptureTimeout)
	defer cancel()
	// The capture is announced by the final event alone: it is no tool's
	// screen, so it is not a screen event.
	var img *image.RGBA
	var err error
	if s.env.web.PageIsTheScreen() {
		img, err = s.env.web.Screenshot(ctx)
	} else {
		img, err = s.env.desk.Capture(ctx)
	}
	var rel string
	if err == nil {
		rel, _, err = s.keepScreen(ctx, img)
	}
	if err != nil {
		s.publish(events.Event{Message: fmt.Sprintf("no final capture: %v", err), Data: final})
		return
	}
	b := img.Bounds()
	final.Width, final.Height = b.Dx(), b.Dy()
	final.Window = s.env.screenWindow()
	s.publish(events.Event{Screen: rel, Data: final})
}
