package graphics

import (
	"bytes"
	"image"
	"testing"

	"github.com/charmbracelet/colorprofile"
)

// TestFitCropWhereItLies: a crop of a capture (the console's window and
// zoom views) is scaled where it lies in the capture, without a copy, to
// the very pixels and cells its copy gives, and the capture is left as it
// was.
func TestFitCropWhereItLies(t *testing.T) {
	t.Parallel()
	frame := loadFrame(t, "frame-1280x800.png")
	pristine := bytes.Clone(frame.Pix)
	for _, r := range []image.Rectangle{
		image.Rect(300, 200, 1100, 700), // a window
		image.Rect(1, 1, 1280, 800),     // all but the first row and column
		image.Rect(640, 400, 960, 600),  // a zoom
	} {
		crop := frame.SubImage(r).(*image.RGBA)
		copied := toRGBA(crop)
		for _, pane := range [][2]int{{100, 30}, {40, 12}} {
			got, want := Fit(crop, pane[0], pane[1], 0, 0), Fit(copied, pane[0], pane[1], 0, 0)
			if got.Rect != want.Rect || !bytes.Equal(got.Pix, want.Pix) {
				t.Errorf("%v in %dx%d cells: Fit of the crop differs from Fit of its copy", r, pane[0], pane[1])
			}
			if RenderBlocks(crop, pane[0], pane[1], colorprofile.TrueColor) != RenderBlocks(copied, pane[0], pane[1], colorprofile.TrueColor) {
				t.Errorf("%v in %dx%d cells: the blocks of the crop differ from its copy's", r, pane[0], pane[1])
			}
		}
	}
	if !bytes.Equal(frame.Pix, pristine) {
		t.Error("the capture was changed")
	}
}
