package engine

import (
	"image"

	"github.com/kasmrt/kasmrt/engine/report"
)

// saveScreen hands a capture's frame to the report, which encodes and
// writes it in the background on one core. When the step itself is about
// to need the full-size PNG (sent: its result carries the screen, to a
// model sent full-size screens or to an outside agent), it is encoded here
// first on every core, and the report writes those bytes: one encoding
// either way. An action's settled screen is never in its result (the model
// or the agent asks for the screen when it wants it), so its PNG is the
// report's alone and stays off the step's critical path. A frame that came
// encoded (a headless page, as the browser encoded it) is not encoded at
// all, and is decoded only if its pixels are asked for.
func (a *actor) saveScreen(frame *report.Frame, sent bool) string {
	if a.model.ready() && a.loop.ran {
		// The model's memory will want the screen's sum: it is computed
		// while the step waits on the X server for the window list. An
		// error is met again by whoever asks for the sum.
		go func() { _, _ = frame.Sum() }()
	}
	if sent && a.sendsFullScreens(frame.Bounds()) {
		_, _ = frame.PNG() // an error is the model's and the report's to meet
	}
	return a.rep.SaveFrame(frame)
}

// sendsFullScreens reports whether a screen of size b goes to the model or
// the agent at its own size.
func (a *actor) sendsFullScreens(b image.Rectangle) bool {
	if a.r.agent != nil {
		return true
	}
	if !a.model.ready() || !a.loop.ran {
		return false
	}
	w, h := a.model.profile.Image.Fit(b.Dx(), b.Dy())
	return w == b.Dx() && h == b.Dy()
}
