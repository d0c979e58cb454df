package vision

import (
	"image"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"golang.org/x/image/draw"
)

// referenceResample is Catmull-Rom written out plainly, in float64, with
// x/image/draw's kernel: every destination pixel weighs the source pixels
// within two kernel widths of its centre (the kernel widened by the scale
// when shrinking, pixels past the edges repeating the edge), first along
// x into rows of bytes, then along y. resampleRGBA must agree with it to
// within the rounding of its fixed-point weights.
func referenceResample(src *image.RGBA, w, h int) *image.RGBA {
	sw, sh := src.Rect.Dx(), src.Rect.Dy()
	// along computes destination pixel d of an axis n source pixels long
	// scaled to m, reading source pixel i through at.
	along := func(n, m, d int, at func(i int) float64) uint8 {
		scale := float64(n) / float64(m)
		width := math.Max(scale, 1)
		centre := (float64(d)+0.5)*scale - 0.5
		var sum, total float64
		for i := int(math.Floor(centre - 2*width)); i <= int(math.Ceil(centre+2*width)); i++ {
			t := math.Abs(float64(i)-centre) / width
			if t >= draw.CatmullRom.Support {
				continue // At is only defined inside the support
			}
			k := draw.CatmullRom.At(t)
			sum += k * at(min(max(i, 0), n-1))
			total += k
		}
		return uint8(math.Round(min(max(sum/total, 0), 255)))
	}
	mid := image.NewRGBA(image.Rect(0, 0, w, sh))
	for y := range sh {
		for x := range w {
			for c := range 3 {
				mid.Pix[mid.PixOffset(x, y)+c] = along(sw, w, x, func(i int) float64 { return float64(src.Pix[src.PixOffset(src.Rect.Min.X+i, src.Rect.Min.Y+y)+c]) })
			}
		}
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			for c := range 3 {
				dst.Pix[dst.PixOffset(x, y)+c] = along(sh, h, y, func(i int) float64 { return float64(mid.Pix[mid.PixOffset(x, i)+c]) })
			}
			dst.Pix[dst.PixOffset(x, y)+3] = 0xff
		}
	}
	return dst
}

// patchwork is an opaque w x h image of rectangles of random colours,
// some of them one pixel wide and some noise, so both the resampler's
// arithmetic and its shortcuts for flat runs and identical rows are used.
func patchwork(rng *rand.Rand, w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Pix[img.PixOffset(x, y)+3] = 0xff
		}
	}
	for range 12 {
		r := image.Rect(rng.IntN(w), rng.IntN(h), rng.IntN(w)+1, rng.IntN(h)+1).Canon()
		noise := rng.IntN(3) == 0
		col := [3]uint8{uint8(rng.IntN(256)), uint8(rng.IntN(256)), uint8(rng.IntN(256))}
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				for c := range 3 {
					v := col[c]
					if noise {
						v = uint8(rng.IntN(256))
					}
					img.Pix[img.PixOffset(x, y)+c] = v
				}
			}
		}
	}
	return img
}

// TestResampleMatchesReference scales patchwork images, shrinking,
// enlarging and keeping the size, to sizes down to one pixel: every
// result is within one level of the plain float64 Catmull-Rom.
func TestResampleMatchesReference(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 5))
	sizes := [][4]int{
		{64, 40, 64, 40}, {64, 40, 48, 30}, {64, 40, 33, 21}, {64, 40, 16, 10}, {64, 40, 7, 5},
		{64, 40, 100, 61}, {9, 7, 40, 30}, {5, 4, 3, 2}, {3, 3, 1, 1}, {2, 90, 1, 40}, {90, 2, 41, 1},
	}
	for _, s := range sizes {
		for round := range 3 {
			src := patchwork(rng, s[0], s[1])
			got, want := resampleRGBA(src, s[2], s[3]), referenceResample(src, s[2], s[3])
			if mean, most := meanAbsDiff(got, want); most > 1 {
				t.Errorf("%dx%d to %dx%d, image %d: differs from the reference by %.3f on average, %d at most", s[0], s[1], s[2], s[3], round, mean, most)
			}
		}
	}
}

// TestResampleSameSizeIsTheImage: scaled to its own size an image is
// itself, to the level, since Catmull-Rom is 1 at a pixel's centre and 0
// at every other whole pixel.
func TestResampleSameSizeIsTheImage(t *testing.T) {
	t.Parallel()
	src := patchwork(rand.New(rand.NewPCG(11, 13)), 61, 37)
	if got := resampleRGBA(src, 61, 37); !slices.Equal(got.Pix, src.Pix) {
		mean, most := meanAbsDiff(got, src)
		t.Errorf("the same size differs from the image by %.3f on average, %d at most", mean, most)
	}
}

// TestCatmullRom pins the kernel's shape: 1 at its centre, 0 at every
// other whole pixel and beyond two, its negative lobe between one and two.
func TestCatmullRom(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ x, want float64 }{
		{0, 1}, {0.5, 0.5625}, {-0.5, 0.5625}, {1, 0}, {1.5, -0.0625}, {-1.5, -0.0625}, {2, 0}, {2.5, 0}, {-3, 0},
	} {
		if got := catmullRom(c.x); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("catmullRom(%g) = %g, want %g", c.x, got, c.want)
		}
	}
}
