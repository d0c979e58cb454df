package engine

import (
	"context"

	"github.com/kasmrt/kasmrt/engine/model"
	"github.com/kasmrt/kasmrt/engine/report"
	"github.com/kasmrt/kasmrt/engine/vision"
	"github.com/kasmrt/kasmrt/internal/screenpng"
)

// modelImages makes the screens one run sends its model. Successive
// screens of a run differ in a few rows (a letter typed, a button
// pressed), so the downscale and the PNG of a screen redo only what
// changed since the one before; the bytes are the same as a fresh
// encoding's.
type modelImages struct {
	scaler  *vision.Downscaler
	encoder screenpng.Encoder
}

func newModelImages(p model.Profile) *modelImages {
	return &modelImages{scaler: vision.NewDownscaler(p)}
}

// png is the screen as the model sees it, fitted to the profile's
// preferred size. A full-size screen shares the report's encoding; a
// smaller one is encoded here, once.
func (m *modelImages) png(f *report.Frame) ([]byte, error) {
	img, err := f.Image()
	if err != nil {
		return nil, err
	}
	if !f.KnownOpaque() {
		small, scale := m.scaler.Downscale(img)
		if scale.Sent == scale.Screen {
			return f.PNG()
		}
		return m.encoder.Encode(small, 0)
	}
	// An X11 capture is opaque, and so is its downscale: neither is
	// scanned for transparent pixels.
	small, scale := m.scaler.DownscaleOpaque(img)
	if scale.Sent == scale.Screen {
		return f.PNG()
	}
	return m.encoder.EncodeOpaque(small, 0)
}

// warmModelImages primes the downscaler and both encoders with a screen
// taken while the first request is with the model, so the run's first
// observation redoes only what changed since then, as every later one
// does. The screen is never saved or sent: it is only what the next
// screens are compared with, and an encoding is the same bytes whatever
// came before it.
func (m *modelState) warmModelImages(ctx context.Context) {
	if m.env.desk == nil || m.env.web.PageIsTheScreen() || !m.ready() {
		return
	}
	desk, rep, images := m.env.desk, m.rep, m.images
	go func() {
		img, err := desk.Capture(ctx)
		if err != nil {
			return // the first observation does the whole work instead
		}
		f := rep.NewCaptureFrame(img)
		_, _ = images.png(f)
		_, _ = f.PNG()
	}()
}
