// Package baseline compares a window's image with an approved one (a
// visual baseline), pixel by pixel with pixelmatch's perceptual colour
// distance, which tolerates anti-aliasing, and keeps baselines as PNG
// files.
package baseline

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"path/filepath"

	"github.com/orisano/pixelmatch"
)

// Options say how two images are compared.
type Options struct {
	// Threshold is the colour distance under which two pixels are the
	// same, from 0 (exact) to 1.
	Threshold float64
	// Masks are areas, in the images' coordinates from (0, 0), left out
	// of the comparison.
	Masks []image.Rectangle
}

// Result is what a comparison found.
type Result struct {
	// DiffPixels is how many pixels differ; Pixels how many were compared.
	DiffPixels, Pixels int
	// SizeDiffers says the images have different sizes, which no pixel
	// count can express: every pixel counts as differing.
	SizeDiffers bool
	// Diff shows the expected image faded, with the differing pixels red
	// and anti-aliased ones yellow; nil when the images are identical or
	// their sizes differ.
	Diff *image.RGBA
}

// Ratio is the share of pixels that differ, from 0 to 1.
func (r Result) Ratio() float64 {
	if r.SizeDiffers {
		return 1
	}
	if r.Pixels == 0 {
		return 0
	}
	return float64(r.DiffPixels) / float64(r.Pixels)
}

// maskColour fills masked areas in both images, so they compare equal and
// the diff image shows what was left out.
var maskColour = color.RGBA{R: 255, B: 255, A: 255}

// Compare compares actual with expected. Neither image is changed.
func Compare(expected, actual image.Image, o Options) (Result, error) {
	eb, ab := expected.Bounds(), actual.Bounds()
	if eb.Dx() != ab.Dx() || eb.Dy() != ab.Dy() {
		return Result{SizeDiffers: true, Pixels: ab.Dx() * ab.Dy(), DiffPixels: ab.Dx() * ab.Dy()}, nil
	}
	e, a := Normalize(expected), Normalize(actual)
	masked := 0
	for _, m := range o.Masks {
		m = m.Intersect(e.Bounds())
		if m.Empty() {
			continue
		}
		draw.Draw(e, m, image.NewUniform(maskColour), image.Point{}, draw.Src)
		draw.Draw(a, m, image.NewUniform(maskColour), image.Point{}, draw.Src)
		masked += m.Dx() * m.Dy()
	}
	var diff image.Image
	n, err := pixelmatch.MatchPixel(e, a, pixelmatch.Threshold(o.Threshold), pixelmatch.WriteTo(&diff))
	if err != nil {
		return Result{}, fmt.Errorf("compare the images: %w", err)
	}
	res := Result{DiffPixels: n, Pixels: eb.Dx()*eb.Dy() - masked}
	if d, ok := diff.(*image.RGBA); ok {
		res.Diff = d
	}
	return res, nil
}

// Normalize returns a copy of img as RGBA with its origin at (0, 0), so
// two images cut from different places of a screen compare pixel by pixel.
func Normalize(img image.Image) *image.RGBA {
	b := img.Bounds()
	out := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(out, out.Bounds(), img, b.Min, draw.Src)
	return out
}

// Same reports whether two images have the same size and pixels.
func Same(a, b *image.RGBA) bool {
	return a != nil && b != nil && a.Bounds().Eq(b.Bounds()) && bytes.Equal(a.Pix, b.Pix)
}

// Read reads the baseline at path; an error wrapping fs.ErrNotExist means
// there is none yet.
func Read(path string) (image.Image, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		return nil, fmt.Errorf("decode the baseline %s: %w", path, err)
	}
	return img, nil
}

// Write writes img to path as PNG, creating its directory, through a
// temporary file so a reader never sees half a baseline.
func Write(path string, img image.Image) (err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".baseline-*.png")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			os.Remove(tmp.Name())
		}
	}()
	if err := png.Encode(tmp, img); err != nil {
		tmp.Close()
		return fmt.Errorf("encode %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return errors.Join(fmt.Errorf("write %s", path), err)
	}
	return nil
}
