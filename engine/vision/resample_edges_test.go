package vision

import (
	"image"
	"image/color"
	"testing"
)

// TestResampleKeepsFlatAreasFlat: a flat image stays exactly its colour at
// any size, since the weights of each pixel sum to one in fixed point and
// the sum is rounded, not cut.
func TestResampleKeepsFlatAreasFlat(t *testing.T) {
	t.Parallel()
	src := image.NewRGBA(image.Rect(0, 0, 64, 40))
	c := color.RGBA{R: 200, G: 101, B: 37, A: 0xff}
	for i := 0; i < len(src.Pix); i += 4 {
		src.Pix[i], src.Pix[i+1], src.Pix[i+2], src.Pix[i+3] = c.R, c.G, c.B, c.A
	}
	for _, size := range [][2]int{{32, 20}, {48, 30}, {64, 40}, {80, 50}} {
		got := resampleRGBA(src, size[0], size[1])
		for i := 0; i < len(got.Pix); i += 4 {
			if p := (color.RGBA{got.Pix[i], got.Pix[i+1], got.Pix[i+2], got.Pix[i+3]}); p != c {
				t.Fatalf("%dx%d: pixel %d is %v, want %v", size[0], size[1], i/4, p, c)
			}
		}
	}
}

// TestResampleMirrors: pixels past an edge repeat the edge on the right
// and the bottom as on the left and the top, so a mirrored image scales to
// the mirror of its scaled self (within the one level the rounding of a
// tie between taps may move).
func TestResampleMirrors(t *testing.T) {
	t.Parallel()
	const w, h = 16, 10
	src, mirrored := image.NewRGBA(image.Rect(0, 0, w, h)), image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			v := uint8(0)
			if x == 0 || y == 0 {
				v = 255 // a bright edge on the left and the top
			}
			src.SetRGBA(x, y, color.RGBA{v, v, v, 0xff})
			mirrored.SetRGBA(w-1-x, h-1-y, color.RGBA{v, v, v, 0xff})
		}
	}
	a, b := resampleRGBA(src, w/2, h/2), resampleRGBA(mirrored, w/2, h/2)
	for y := range h / 2 {
		for x := range w / 2 {
			p, q := a.RGBAAt(x, y).R, b.RGBAAt(w/2-1-x, h/2-1-y).R
			if d := int(p) - int(q); d > 1 || d < -1 {
				t.Errorf("pixel %d,%d is %d, its mirror %d", x, y, p, q)
			}
		}
	}
}

// TestResampleRoundsToNearest: fine stripes of two neighbouring levels
// scale to those levels and none below or above, which a sum cut rather
// than rounded would leave.
func TestResampleRoundsToNearest(t *testing.T) {
	t.Parallel()
	src := image.NewRGBA(image.Rect(0, 0, 48, 30))
	for y := range 30 {
		for x := range 48 {
			v := uint8(100 + (x/2+y)%2)
			src.SetRGBA(x, y, color.RGBA{v, v, v, 0xff})
		}
	}
	for _, size := range [][2]int{{32, 20}, {36, 22}, {40, 25}} {
		got := resampleRGBA(src, size[0], size[1])
		for i := 0; i < len(got.Pix); i += 4 {
			if v := got.Pix[i]; v < 100 || v > 101 {
				t.Fatalf("%dx%d: pixel %d is %d, outside the stripes' 100 and 101", size[0], size[1], i/4, v)
			}
		}
	}
}
