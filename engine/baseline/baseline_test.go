package baseline

import (
	"errors"
	"image"
	"image/color"
	"image/draw"
	"io/fs"
	"path/filepath"
	"testing"
)

// canvas is a w×h image of grey with a dark bar, the kind of flat UI a
// window shows, placed at origin (as a window cut from a screen is).
func canvas(origin image.Point, w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h).Add(origin))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.RGBA{230, 230, 230, 255}), image.Point{}, draw.Src)
	bar := image.Rect(10, 10, 50, 20).Add(origin)
	draw.Draw(img, bar, image.NewUniform(color.RGBA{20, 20, 20, 255}), image.Point{}, draw.Src)
	return img
}

func TestCompare(t *testing.T) {
	t.Parallel()
	o := image.Pt(300, 200) // the actual window's place on the screen
	cases := []struct {
		name      string
		change    func(*image.RGBA)
		opts      Options
		wantDiff  int
		wantRatio float64
	}{
		{"the same window elsewhere on the screen", func(*image.RGBA) {}, Options{Threshold: 0.1}, 0, 0},
		{"one pixel turned red", func(a *image.RGBA) { a.Set(o.X+70, o.Y+40, color.RGBA{255, 0, 0, 255}) }, Options{Threshold: 0.1}, 1, 1.0 / 10000},
		{"a shade no one sees, within the threshold", func(a *image.RGBA) { a.Set(o.X+70, o.Y+40, color.RGBA{228, 230, 230, 255}) }, Options{Threshold: 0.1}, 0, 0},
		{"the same shade with an exact threshold", func(a *image.RGBA) { a.Set(o.X+70, o.Y+40, color.RGBA{228, 230, 230, 255}) }, Options{Threshold: 0}, 1, 1.0 / 10000},
		{"a changed area that is masked", func(a *image.RGBA) {
			draw.Draw(a, image.Rect(60, 60, 80, 80).Add(o), image.NewUniform(color.Black), image.Point{}, draw.Src)
		}, Options{Threshold: 0.1, Masks: []image.Rectangle{image.Rect(55, 55, 85, 85)}}, 0, 0},
		{"a changed area half masked", func(a *image.RGBA) {
			draw.Draw(a, image.Rect(60, 60, 80, 80).Add(o), image.NewUniform(color.Black), image.Point{}, draw.Src)
		}, Options{Threshold: 0.1, Masks: []image.Rectangle{image.Rect(60, 60, 70, 80)}}, 200, 200.0 / (10000 - 200)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			expected, actual := canvas(image.Point{}, 100, 100), canvas(o, 100, 100)
			c.change(actual)
			res, err := Compare(expected, actual, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.DiffPixels != c.wantDiff || res.Ratio() != c.wantRatio || res.SizeDiffers {
				t.Errorf("diff %d ratio %g (size differs %v), want %d and %g", res.DiffPixels, res.Ratio(), res.SizeDiffers, c.wantDiff, c.wantRatio)
			}
			if res.DiffPixels > 0 && (res.Diff == nil || res.Diff.Bounds() != image.Rect(0, 0, 100, 100)) {
				t.Errorf("diff image %v", res.Diff)
			}
		})
	}
}

// A window of another size is all different, whatever its pixels.
func TestCompareSizes(t *testing.T) {
	t.Parallel()
	res, err := Compare(canvas(image.Point{}, 100, 100), canvas(image.Point{}, 100, 90), Options{Threshold: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	if !res.SizeDiffers || res.Ratio() != 1 || res.Diff != nil {
		t.Errorf("%+v ratio %g, want the sizes to differ with ratio 1", res, res.Ratio())
	}
}

func TestWriteRead(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "app.baselines", "main.png")
	if _, err := Read(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Read of no baseline = %v, want fs.ErrNotExist", err)
	}
	img := canvas(image.Pt(5, 5), 40, 30)
	if err := Write(path, Normalize(img)); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if !Same(Normalize(got), Normalize(img)) {
		t.Error("the baseline read back differs from the image written")
	}
	matches, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".baseline-*"))
	if len(matches) != 0 {
		t.Errorf("temporary files left: %v", matches)
	}
}
