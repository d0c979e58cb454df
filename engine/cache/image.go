package cache

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"image"
	"image/png"
	"math/bits"
)

// hashSide is the difference hash's grid: hashSide rows of hashSide
// comparisons, 256 bits. A finer grid than the usual 8x8 notices a moved
// button or a different dialog on a 1280x800 screen, and still ignores a
// blinking caret or antialiasing.
const hashSide = 16

// MaxDistance is how many of the hash's 256 bits may differ for a screen
// to still fit a cached step: about 6%, above what a caret, a focus ring
// or a cursor changes and below what a dialog or another screen does. A
// small control moved or renamed changes a few bits only: the hash is the
// coarse check, and the control, page element and crop checks the fine
// ones.
const MaxDistance = 16

// Hash is the screen's perceptual difference hash (dHash) in hex: the
// image scaled down to (hashSide+1)xhashSide by area averages, in grey,
// each bit saying whether a cell is brighter than its right neighbour.
func Hash(img image.Image) string {
	cells := downscale(img, hashSide+1, hashSide)
	var sum [hashSide * hashSide / 8]byte
	for y := range hashSide {
		for x := range hashSide {
			if cells[y*(hashSide+1)+x] > cells[y*(hashSide+1)+x+1] {
				i := y*hashSide + x
				sum[i/8] |= 1 << (i % 8)
			}
		}
	}
	return hex.EncodeToString(sum[:])
}

// Distance is the number of bits two hashes differ in, or -1 when either
// is not a hash.
func Distance(a, b string) int {
	x, errA := hex.DecodeString(a)
	y, errB := hex.DecodeString(b)
	if errA != nil || errB != nil || len(x) != len(y) || len(x) == 0 {
		return -1
	}
	d := 0
	for i := range x {
		d += bits.OnesCount8(x[i] ^ y[i])
	}
	return d
}

// downscale averages img's grey levels over a w x h grid of cells.
func downscale(img image.Image, w, h int) []float64 {
	b := img.Bounds()
	out := make([]float64, w*h)
	counts := make([]int, w*h)
	if b.Empty() {
		return out
	}
	// Sampling every pixel of a large screen costs tens of milliseconds;
	// a stride of two keeps the averages and halves it twice.
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		cy := (y - b.Min.Y) * h / b.Dy()
		for x := b.Min.X; x < b.Max.X; x += 2 {
			cx := (x - b.Min.X) * w / b.Dx()
			out[cy*w+cx] += grey(img, x, y)
			counts[cy*w+cx]++
		}
	}
	for i := range out {
		if counts[i] > 0 {
			out[i] /= float64(counts[i])
		}
	}
	return out
}

func grey(img image.Image, x, y int) float64 {
	if rgba, ok := img.(*image.RGBA); ok {
		i := rgba.PixOffset(x, y)
		p := rgba.Pix[i : i+3 : i+3]
		return 0.299*float64(p[0]) + 0.587*float64(p[1]) + 0.114*float64(p[2])
	}
	r, g, bl, _ := img.At(x, y).RGBA()
	return (0.299*float64(r) + 0.587*float64(g) + 0.114*float64(bl)) / 257
}

// CropSide is the side of a grounded click's crop in pixels.
const CropSide = 48

// Crop is the CropSide square of img around p, clipped to the image, as
// a PNG; the point's offset in it is where p falls.
func Crop(img image.Image, p image.Point) ([]byte, error) {
	r := image.Rect(p.X-CropSide/2, p.Y-CropSide/2, p.X+CropSide/2, p.Y+CropSide/2).Intersect(img.Bounds())
	if r.Empty() {
		return nil, fmt.Errorf("crop around %v: outside the %v screen", p, img.Bounds())
	}
	sub := image.NewRGBA(image.Rect(0, 0, r.Dx(), r.Dy()))
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			sub.Set(x-r.Min.X, y-r.Min.Y, img.At(x, y))
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, sub); err != nil {
		return nil, fmt.Errorf("encode the crop: %w", err)
	}
	return buf.Bytes(), nil
}

// cropTolerance is the mean difference per channel (0–255) under which
// a crop counts as found: rendering the same control twice differs by
// less than this, a different label or icon by more.
const cropTolerance = 6

// FindCrop reports whether the crop (a PNG from Crop made around p) is
// on img within radius pixels of where it was taken, and where p is now:
// p moved as far as the crop did.
func FindCrop(img image.Image, cropPNG []byte, p image.Point, radius int) (image.Point, bool, error) {
	crop, err := png.Decode(bytes.NewReader(cropPNG))
	if err != nil {
		return image.Point{}, false, fmt.Errorf("decode the crop: %w", err)
	}
	cb := crop.Bounds()
	// Where Crop put the crop's top left corner, before clipping.
	origin := image.Pt(p.X-CropSide/2, p.Y-CropSide/2)
	if origin.X < img.Bounds().Min.X {
		origin.X = img.Bounds().Min.X
	}
	if origin.Y < img.Bounds().Min.Y {
		origin.Y = img.Bounds().Min.Y
	}
	limit := float64(cropTolerance * 3 * cb.Dx() * cb.Dy())
	// The nearest match wins: rings of growing distance from where the
	// crop was taken, so an unmoved control is found at once.
	for r := 0; r <= radius; r++ {
		for dy := -r; dy <= r; dy++ {
			for dx := -r; dx <= r; dx++ {
				if max(abs(dx), abs(dy)) != r {
					continue
				}
				at := origin.Add(image.Pt(dx, dy))
				if !image.Rect(at.X, at.Y, at.X+cb.Dx(), at.Y+cb.Dy()).In(img.Bounds()) {
					continue
				}
				if differs(img, crop, at, limit) <= limit {
					return p.Add(image.Pt(dx, dy)), true, nil
				}
			}
		}
	}
	return image.Point{}, false, nil
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// differs sums the channel differences between crop and img at at,
// stopping once the sum passes limit.
func differs(img, crop image.Image, at image.Point, limit float64) float64 {
	cb := crop.Bounds()
	total := 0.0
	for y := cb.Min.Y; y < cb.Max.Y; y++ {
		for x := cb.Min.X; x < cb.Max.X; x++ {
			r1, g1, b1, _ := crop.At(x, y).RGBA()
			r2, g2, b2, _ := img.At(at.X+x-cb.Min.X, at.Y+y-cb.Min.Y).RGBA()
			total += (absDiff(r1, r2) + absDiff(g1, g2) + absDiff(b1, b2)) / 257
		}
		if total > limit {
			return total
		}
	}
	return total
}

func absDiff(a, b uint32) float64 {
	if a > b {
		return float64(a - b)
	}
	return float64(b - a)
}
