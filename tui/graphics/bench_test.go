package graphics

import (
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/charmbracelet/colorprofile"
)

// The pane every benchmark draws into: 100×30 cells of the default 10×20 px,
// i.e. at most 1000×600 pixels.
const benchCols, benchRows = 100, 30

var benchFrames = []string{"frame-640x400.png", "frame-1280x800.png"}

func BenchmarkFit(b *testing.B) {
	for _, name := range benchFrames {
		frame := loadFrame(b, name)
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				Fit(frame, benchCols, benchRows, 0, 0)
			}
		})
	}
}

// BenchmarkFitWindow fits the console's window view: a 1000x600 crop of a
// 1280x800 capture, away from its corner, to the pane as sixel and kitty
// frames are fitted, and to the sub-pixels of half-block cells.
func BenchmarkFitWindow(b *testing.B) {
	crop := loadFrame(b, "frame-1280x800.png").SubImage(image.Rect(140, 100, 1140, 700))
	b.Run("pane", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			Fit(crop, benchCols, benchRows, 0, 0)
		}
	})
	b.Run("blocks", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			fitSubpixels(crop, 140, 40)
		}
	})
}

// BenchmarkSixel measures a steady-state frame: fit to the pane and encode
// with a warm encoder, as the console does for every new screen.
func BenchmarkSixel(b *testing.B) {
	for _, name := range benchFrames {
		frame := loadFrame(b, name)
		for _, p := range []struct {
			name string
			kind SixelPalette
		}{{"adaptive", PaletteAdaptiveOnce}, {"uniform", PaletteUniform}} {
			b.Run(name+"/"+p.name, func(b *testing.B) {
				enc := NewSixelEncoder(p.kind)
				enc.Encode(Fit(frame, benchCols, benchRows, 0, 0))
				var n int
				for b.Loop() {
					n = len(enc.Encode(Fit(frame, benchCols, benchRows, 0, 0)))
				}
				b.ReportMetric(float64(n), "bytes/frame")
			})
		}
	}
}

// BenchmarkSixelFirstFrame includes building the palette and lookup table.
func BenchmarkSixelFirstFrame(b *testing.B) {
	for _, name := range benchFrames {
		frame := loadFrame(b, name)
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				NewSixelEncoder(PaletteAdaptiveOnce).Encode(Fit(frame, benchCols, benchRows, 0, 0))
			}
		})
	}
}

// BenchmarkImg2Sixel runs libsixel's img2sixel on the same frames, scaled to
// the same size, for a side-by-side figure. It includes process start-up,
// which is what a shell-out would cost the console.
func BenchmarkImg2Sixel(b *testing.B) {
	bin, err := exec.LookPath("img2sixel")
	if err != nil {
		b.Skip("img2sixel (libsixel-bin) is not installed")
	}
	for _, name := range benchFrames {
		frame := loadFrame(b, name)
		fitted := Fit(frame, benchCols, benchRows, 0, 0)
		w, h := fitted.Rect.Dx(), fitted.Rect.Dy()
		path, _ := filepath.Abs(filepath.Join("testdata", name))
		b.Run(name+"/scale", func(b *testing.B) {
			var n int
			for b.Loop() {
				out, err := exec.Command(bin, "-w", strconv.Itoa(w), "-h", strconv.Itoa(h), path).Output()
				if err != nil {
					b.Fatalf("img2sixel: %v", err)
				}
				n = len(out)
			}
			b.ReportMetric(float64(n), "bytes/frame")
		})
		// Pre-fitted input isolates libsixel's quantizer and encoder.
		pre := filepath.Join(b.TempDir(), "fitted.png")
		f, err := os.Create(pre)
		if err != nil {
			b.Fatal(err)
		}
		if err := png.Encode(f, fitted); err != nil {
			b.Fatal(err)
		}
		f.Close()
		b.Run(name+"/prefitted", func(b *testing.B) {
			for b.Loop() {
				if err := exec.Command(bin, pre).Run(); err != nil {
					b.Fatalf("img2sixel: %v", err)
				}
			}
		})
	}
}

func BenchmarkKitty(b *testing.B) {
	for _, name := range benchFrames {
		frame := loadFrame(b, name)
		b.Run(name, func(b *testing.B) {
			var n int
			for b.Loop() {
				data, err := EncodePNG(Fit(frame, benchCols, benchRows, 0, 0))
				if err != nil {
					b.Fatal(err)
				}
				n = len(KittyTransmit(7, data, benchCols, benchRows)) + len(KittyPlaceholders(7, benchCols, benchRows))
			}
			b.ReportMetric(float64(n), "bytes/frame")
		})
	}
}

func BenchmarkBlocks(b *testing.B) {
	for _, name := range benchFrames {
		frame := loadFrame(b, name)
		for _, p := range []colorprofile.Profile{colorprofile.TrueColor, colorprofile.ANSI256} {
			b.Run(fmt.Sprintf("%s/%s", name, p), func(b *testing.B) {
				var n int
				for b.Loop() {
					n = len(RenderBlocks(frame, benchCols, benchRows, p))
				}
				b.ReportMetric(float64(n), "bytes/frame")
			})
		}
	}
}
