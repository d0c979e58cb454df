package model

import "math"

// Fit returns the size an image of w×h pixels is sent at under these
// bounds. The aspect ratio is kept as closely as the rounding allows; an
// image is never enlarged except to reach MinPixels or a Multiple.
//
// With Multiple set it follows Qwen's smart_resize: each side is rounded to
// the patch multiple, then scaled down (flooring) to fit MaxPixels or up
// (ceiling) to reach MinPixels.
func (s ImageSize) Fit(w, h int) (int, int) {
	if w <= 0 || h <= 0 {
		return w, h
	}
	fw, fh := float64(w), float64(h)
	scale := 1.0
	long, short := fw, fh
	if fh > fw {
		long, short = fh, fw
	}
	// The long edge is bounded first, at the image's own size.
	if s.MaxLongEdge > 0 && long > float64(s.MaxLongEdge) {
		scale = float64(s.MaxLongEdge) / long
	}
	if s.MaxShortEdge > 0 && short*scale > float64(s.MaxShortEdge) {
		scale = float64(s.MaxShortEdge) / short
	}
	if s.Multiple <= 0 {
		if s.MaxPixels > 0 && fw*fh*scale*scale > float64(s.MaxPixels) {
			scale = math.Sqrt(float64(s.MaxPixels) / (fw * fh))
		}
		// Every bound only lowers the scale, so at 1 this is w×h.
		return max(1, int(math.Round(fw*scale))), max(1, int(math.Round(fh*scale)))
	}

	f := float64(s.Multiple)
	fw, fh = fw*scale, fh*scale
	nw := math.Max(f, math.Round(fw/f)*f)
	nh := math.Max(f, math.Round(fh/f)*f)
	switch {
	case s.MaxPixels > 0 && nw*nh > float64(s.MaxPixels):
		beta := math.Sqrt(fw * fh / float64(s.MaxPixels))
		nw = math.Max(f, math.Floor(fw/beta/f)*f)
		nh = math.Max(f, math.Floor(fh/beta/f)*f)
	case s.MinPixels > 0 && nw*nh < float64(s.MinPixels):
		beta := math.Sqrt(float64(s.MinPixels) / (fw * fh))
		nw = math.Ceil(fw*beta/f) * f
		nh = math.Ceil(fh*beta/f) * f
	}
	return int(nw), int(nh)
}
