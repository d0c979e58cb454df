package atspi

import "image"

// ControlAt returns the control under p (screen coordinates): the one with
// the smallest extents that contain it, since a button sits inside the
// panel that also contains the point. Controls without extents never
// match.
func ControlAt(controls []Control, p image.Point) (Control, bool) {
	var best Control
	found := false
	for _, c := range controls {
		if c.Extents.Empty() || !p.In(c.Extents) {
			continue
		}
		if !found || area(c.Extents) < area(best.Extents) {
			best, found = c, true
		}
	}
	return best, found
}

func area(r image.Rectangle) int { return r.Dx() * r.Dy() }
