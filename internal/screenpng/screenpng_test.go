package screenpng

import (
	"bytes"
	"hash/adler32"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math/rand/v2"
	"os"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	screen := loadScreen(t)
	noise := func(w, h int, opaque bool) *image.RGBA {
		img := image.NewRGBA(image.Rect(0, 0, w, h))
		r := rand.New(rand.NewPCG(1, uint64(w*h)))
		for i := range img.Pix {
			img.Pix[i] = byte(r.IntN(256))
			if i%4 == 3 && opaque {
				img.Pix[i] = 0xff
			}
		}
		if !opaque {
			// Premultiplied: no channel above alpha.
			for i := 0; i < len(img.Pix); i += 4 {
				a := img.Pix[i+3]
				for c := 0; c < 3; c++ {
					img.Pix[i+c] = min(img.Pix[i+c], a)
				}
			}
		}
		return img
	}
	sub := image.NewRGBA(image.Rect(0, 0, 300, 200))
	draw.Draw(sub, sub.Bounds(), screen, image.Pt(100, 100), draw.Src)
	for _, c := range []struct {
		name string
		img  *image.RGBA
	}{
		{"a real screen, 1280x800", screen},
		{"one pixel", noise(1, 1, true)},
		{"fewer rows than a band", noise(37, 5, true)},
		{"odd size, many bands", noise(333, 517, true)},
		{"translucent", noise(64, 300, false)},
		{"a sub-image with its own origin", screen.SubImage(image.Rect(10, 20, 410, 320)).(*image.RGBA)},
		{"a copied part", sub},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			data, err := Bytes(c.img)
			if err != nil {
				t.Fatal(err)
			}
			got, err := png.Decode(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if got.Bounds().Size() != c.img.Bounds().Size() {
				t.Fatalf("size %v, want %v", got.Bounds().Size(), c.img.Bounds().Size())
			}
			// The standard encoder's round trip is the reference: exact
			// for opaque pixels, and what PNG's straight alpha allows for
			// translucent ones.
			var ref bytes.Buffer
			if err := png.Encode(&ref, c.img); err != nil {
				t.Fatal(err)
			}
			want, err := png.Decode(&ref)
			if err != nil {
				t.Fatal(err)
			}
			b, opaque := c.img.Bounds(), c.img.Opaque()
			for y := 0; y < b.Dy(); y++ {
				for x := 0; x < b.Dx(); x++ {
					if opaque && c.img.RGBAAt(b.Min.X+x, b.Min.Y+y) != color.RGBAModel.Convert(want.At(x, y)) {
						t.Fatalf("the reference differs at (%d, %d)", x, y)
					}
					want := color.RGBAModel.Convert(want.At(x, y)).(color.RGBA)
					if g := color.RGBAModel.Convert(got.At(x, y)).(color.RGBA); g != want {
						t.Fatalf("pixel (%d, %d) = %v, want %v", x, y, g, want)
					}
				}
			}
		})
	}
}

func TestAdler32Combine(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(2, 3))
	for _, n := range []int{0, 1, 5552, 65521, 65522, 200000} {
		a := make([]byte, 1000+n%777)
		b := make([]byte, n)
		for i := range a {
			a[i] = 0xff
		}
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		want := adler32.Checksum(append(append([]byte{}, a...), b...))
		if got := adler32Combine(adler32.Checksum(a), adler32.Checksum(b), len(b)); got != want {
			t.Errorf("len %d: combined %08x, want %08x", n, got, want)
		}
	}
}

func loadScreen(tb testing.TB) *image.RGBA {
	tb.Helper()
	f, err := os.Open("testdata/screen-1280x800.png")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		tb.Fatal(err)
	}
	rgba := image.NewRGBA(img.Bounds())
	draw.Draw(rgba, rgba.Bounds(), img, image.Point{}, draw.Src)
	return rgba
}

// BenchmarkEncode compares this encoder with the standard library's at
// its fastest level on a real 1280x800 screen (an xterm and a dialog),
// reporting the output size.
func BenchmarkEncode(b *testing.B) {
	screen := loadScreen(b)
	b.Run("screenpng", func(b *testing.B) {
		var n int
		for b.Loop() {
			data, err := Bytes(screen)
			if err != nil {
				b.Fatal(err)
			}
			n = len(data)
		}
		b.ReportMetric(float64(n), "bytes")
	})
	b.Run("screenpng-known-opaque", func(b *testing.B) {
		// An X11 capture: opaque by construction, so no pixel's alpha is
		// read before encoding.
		for b.Loop() {
			if _, err := BytesOpaqueOn(screen, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoder-a-letter-typed", func(b *testing.B) {
		// Each screen differs from the one before in one band, as after
		// a key press in a terminal.
		var e Encoder
		screens := [2]*image.RGBA{screen, image.NewRGBA(screen.Rect)}
		copy(screens[1].Pix, screen.Pix)
		screens[1].Pix[screens[1].PixOffset(600, 300)] ^= 0xff
		i := 0
		for b.Loop() {
			if _, err := e.Encode(screens[i%2], 0); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("encoder-a-letter-typed-known-opaque", func(b *testing.B) {
		// The same, as the report encodes X11 captures: no alpha read in
		// the bands that changed.
		var e Encoder
		screens := [2]*image.RGBA{screen, image.NewRGBA(screen.Rect)}
		copy(screens[1].Pix, screen.Pix)
		screens[1].Pix[screens[1].PixOffset(600, 300)] ^= 0xff
		i := 0
		for b.Loop() {
			if _, err := e.EncodeOpaque(screens[i%2], 0); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("image-png-BestSpeed", func(b *testing.B) {
		var n int
		for b.Loop() {
			var buf bytes.Buffer
			enc := png.Encoder{CompressionLevel: png.BestSpeed}
			if err := enc.Encode(&buf, screen); err != nil {
				b.Fatal(err)
			}
			n = buf.Len()
		}
		b.ReportMetric(float64(n), "bytes")
	})
}

// BenchmarkOpaqueScan is what encoding a capture known to be opaque no
// longer does: read the alpha of every pixel of a 1280x800 screen, as
// image.RGBA.Opaque does before Bytes encodes and as the Encoder does in
// the bands it compresses.
func BenchmarkOpaqueScan(b *testing.B) {
	screen := loadScreen(b)
	b.Run("Opaque", func(b *testing.B) {
		for b.Loop() {
			if !screen.Opaque() {
				b.Fatal("the screen is not opaque")
			}
		}
	})
	b.Run("opaqueRows", func(b *testing.B) {
		for b.Loop() {
			if !opaqueRows(screen, 0, screen.Rect.Dy()) {
				b.Fatal("the screen is not opaque")
			}
		}
	})
}
