package vision

import (
	"image"

	"github.com/kasmrt/kasmrt/engine/model"
)

// Downscales reports whether the profile sends an image of this size
// smaller than it is: then small things are blurred for the model, and a
// second look at full resolution (Zoom) pays.
// Rounding a side to the profile's multiple (Qwen's patches) is not
// scaling it down.
func Downscales(size image.Point, p model.Profile) bool {
	w, h := p.Image.Fit(size.X, size.Y)
	slack := p.Image.Multiple / 2
	return w < size.X-slack || h < size.Y-slack
}

// minZoomSide is the smallest side of a zoomed crop: enough around the
// first answer to hold a control and its label even when that answer was
// off by a few dozen pixels.
const minZoomSide = 256

// Zoom is the crop of screen around the point a first, whole-screen pass
// found, for a second pass at full resolution: a square a third of the
// screen's short side (at least minZoomSide), centred on the point and
// kept inside the screen, small enough for the profile to send as it is.
func Zoom(screen image.Rectangle, at image.Point, p model.Profile) image.Rectangle {
	side := max(min(screen.Dx(), screen.Dy())/3, minZoomSide)
	// Shrink until the profile would not scale it down.
	for side > 32 && Downscales(image.Pt(side, side), p) {
		side = side * 3 / 4
	}
	side = min(side, screen.Dx(), screen.Dy())
	corner := image.Pt(at.X-side/2, at.Y-side/2)
	corner.X = max(screen.Min.X, min(corner.X, screen.Max.X-side))
	corner.Y = max(screen.Min.Y, min(corner.Y, screen.Max.Y-side))
	return image.Rectangle{Min: corner, Max: corner.Add(image.Pt(side, side))}
}
