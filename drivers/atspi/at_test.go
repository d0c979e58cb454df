package atspi

import (
	"image"
	"testing"
)

func TestControlAt(t *testing.T) {
	t.Parallel()
	controls := []Control{
		{Name: "Toolbar", Extents: image.Rect(0, 0, 400, 50)},
		{Name: "Bold", Extents: image.Rect(10, 10, 40, 40)},
		{Name: "No extents"},
		{Name: "Italic", Extents: image.Rect(40, 10, 70, 40)},
	}
	cases := []struct {
		p    image.Point
		want string // "" for none
	}{
		{image.Pt(20, 20), "Bold"},     // inside both: the smaller wins
		{image.Pt(40, 20), "Italic"},   // a shared edge belongs to the right-hand one
		{image.Pt(200, 45), "Toolbar"}, // only the toolbar
		{image.Pt(500, 500), ""},       // nothing there
		{image.Pt(0, 0), "Toolbar"},    // the corner is inside
		{image.Pt(400, 10), ""},        // the far edge is outside
	}
	for _, c := range cases {
		got, found := ControlAt(controls, c.p)
		if found != (c.want != "") || got.Name != c.want {
			t.Errorf("ControlAt(%v) = %q, %v; want %q", c.p, got.Name, found, c.want)
		}
	}
}
