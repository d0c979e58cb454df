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
func (a *actor) finalCapture(ctx context.Context, outcome events.Outcome) {
	if a.env.desk == nil {
		return
	}
	final := events.FinalCapture{Ending: outcome}
	if a.env.session != nil {
		select {
		case <-a.env.session.Done():
			a.publish(events.Event{Message: "no final capture: the X server went away", Data: final})
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
	if a.env.web.PageIsTheScreen() {
		img, err = a.env.web.Screenshot(ctx)
	} else {
		img, err = a.env.desk.Capture(ctx)
	}
	var rel string
	if err == nil {
		rel, _, err = a.keepScreen(ctx, img)
	}
	if err != nil {
		a.publish(events.Event{Message: fmt.Sprintf("no final capture: %v", err), Data: final})
		return
	}
	b := img.Bounds()
	final.Width, final.Height = b.Dx(), b.Dy()
	final.Window = a.env.screenWindow()
	a.publish(events.Event{Screen: rel, Data: final})
}
