package engine

import (
	"context"
	"fmt"
	"image"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/vision"
)

// located is where a grounded click's locate put the described thing: the
// point, and which pass found it on what crop (zero and nil for a single
// pass on the whole screen).
type located struct {
	point image.Point
	pass  int
	crop  *events.Rect
}

// locate finds description on img. When the profile scales the screen
// down for the model, it looks twice: the whole screen, then a
// full-resolution crop around the first answer, so a control a few pixels
// wide is not lost to the downscale (docs/language.md, "Zoom"). A second
// pass that fails leaves the first answer standing. The first pass is
// recorded in grounding[]; the caller records the one it clicks.
func (m *modelState) locate(ctx context.Context, n, attempt int, img *image.RGBA, rel, description, expect string) (located, error) {
	locator := vision.Model{Turner: m, Profile: m.profile}
	first, err := locator.Locate(ctx, img, description)
	if err != nil {
		return located{}, err
	}
	screen := img.Bounds()
	if !vision.Downscales(screen.Size(), m.profile) {
		return located{point: first}, nil
	}
	crop := vision.Zoom(screen, first, m.profile)
	firstPoint := &events.Point{X: first.X, Y: first.Y}
	m.publish(events.Event{Kind: events.KindGrounding, Step: n, Point: firstPoint, Screen: rel, Grounding: &events.Grounding{
		Step: n, Attempt: attempt, Description: description, Expect: expect, Point: firstPoint,
		Outcome: events.GroundingLocated, Reason: "the whole screen, scaled down for the model; a second pass looks at the crop around this answer at full resolution",
		Before: rel, Pass: 1,
	}})
	box := &events.Rect{X: crop.Min.X, Y: crop.Min.Y, W: crop.Dx(), H: crop.Dy()}
	second, err := locator.Locate(ctx, img.SubImage(crop), description)
	if err != nil {
		if ctx.Err() != nil {
			return located{}, err
		}
		m.log("the zoomed pass of click_grounded %q failed, so the first answer stands: %v", description, err)
		return located{point: first, pass: 1}, nil
	}
	return located{point: second, pass: 2, crop: box}, nil
}

// zoomedCheck is the image check_expectation asks about: the application
// window's part of the screen at full resolution when the profile would
// scale the whole screen down and the window is smaller than the screen;
// otherwise the whole screen. what names it for the result.
func (a *actor) zoomedCheck(img *image.RGBA) (image.Image, string) {
	screen := img.Bounds()
	if !a.model.ready() || !a.env.hasWin || a.env.web.PageIsTheScreen() || !vision.Downscales(screen.Size(), a.model.profile) {
		return img, ""
	}
	w, err := a.env.desk.Window(a.env.currentWindow().ID)
	if err != nil {
		return img, ""
	}
	area := image.Rect(w.X, w.Y, w.X+w.Width, w.Y+w.Height).Intersect(screen)
	if area.Empty() || area == screen {
		return img, ""
	}
	how := "at full resolution"
	if vision.Downscales(area.Size(), a.model.profile) {
		how = "scaled down less than the whole screen"
	}
	return img.SubImage(area), fmt.Sprintf(" (judged on the application window, %s)", how)
}
