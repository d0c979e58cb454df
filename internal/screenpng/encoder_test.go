package screenpng

import (
	"bytes"
	"image"
	"image/png"
	"testing"
)

// TestEncoderKeepsUnchangedBands encodes a run of screens that change a
// little from one to the next, as an agent's steps do: each encoding is
// byte for byte what a fresh encoding of that screen is, and only the
// bands whose rows (or the row above them, which the filter reads)
// changed are compressed again.
func TestEncoderKeepsUnchangedBands(t *testing.T) {
	t.Parallel()
	screen := loadScreen(t) // 1280x800: 13 bands
	bands := (screen.Rect.Dy() + bandRows - 1) / bandRows
	// changed returns a copy of the previous screen with the pixel at y
	// inverted in each of rows.
	changed := func(prev *image.RGBA, rows ...int) *image.RGBA {
		next := image.NewRGBA(prev.Rect)
		copy(next.Pix, prev.Pix)
		for _, y := range rows {
			i := next.PixOffset(700, y)
			next.Pix[i] ^= 0xff
		}
		return next
	}
	steps := []struct {
		name       string
		next       func(prev *image.RGBA) *image.RGBA
		compressed int
	}{
		{"the first screen", func(*image.RGBA) *image.RGBA { return screen }, bands},
		{"the same screen again", func(p *image.RGBA) *image.RGBA { return changed(p) }, 0},
		{"a letter typed in one band", func(p *image.RGBA) *image.RGBA { return changed(p, 100, 101, 110) }, 1},
		{"the last row of a band, which the next one's filter reads", func(p *image.RGBA) *image.RGBA { return changed(p, 2*bandRows-1) }, 2},
		{"the first and the last row of the screen", func(p *image.RGBA) *image.RGBA { return changed(p, 0, screen.Rect.Dy()-1) }, 2},
		{"a translucent pixel, which the standard encoder takes", func(p *image.RGBA) *image.RGBA {
			next := changed(p)
			next.Pix[next.PixOffset(5, 500)+3] = 0x80
			next.Pix[next.PixOffset(5, 500)] = 0x10
			return next
		}, 0},
		{"opaque again", func(*image.RGBA) *image.RGBA { return screen }, bands},
		{"another size", func(*image.RGBA) *image.RGBA { return screen.SubImage(image.Rect(0, 0, 640, 400)).(*image.RGBA) }, (400 + bandRows - 1) / bandRows},
	}
	var e Encoder
	prev := screen
	for _, s := range steps {
		img := s.next(prev)
		before := e.compressed
		got, err := e.Encode(img, 2)
		if err != nil {
			t.Fatal(err)
		}
		want, err := BytesOn(img, 1)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: %d bytes differ from a fresh encoding's %d", s.name, len(got), len(want))
		}
		if _, err := png.Decode(bytes.NewReader(got)); err != nil {
			t.Errorf("%s: decode: %v", s.name, err)
		}
		if n := e.compressed - before; n != s.compressed {
			t.Errorf("%s: %d bands compressed, want %d", s.name, n, s.compressed)
		}
		prev = img
	}
}

// TestBytesSameOnAnyCores: an image's bytes do not depend on how many
// goroutines encode it.
func TestBytesSameOnAnyCores(t *testing.T) {
	t.Parallel()
	screen := loadScreen(t)
	want, err := BytesOn(screen, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, cores := range []int{2, 3, 8} {
		got, err := BytesOn(screen, cores)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("on %d cores: %d bytes, on one %d, and they differ", cores, len(got), len(want))
		}
	}
}

// TestEncodeOpaque: an image known to be opaque (an X11 capture) encodes
// to the very bytes the checked path gives, alone and in an Encoder's run
// of screens, and its alpha is never read: a translucent pixel, which the
// checked path sends to the standard encoder as RGBA, is written as RGB.
func TestEncodeOpaque(t *testing.T) {
	t.Parallel()
	screen := loadScreen(t)
	want, err := Bytes(screen)
	if err != nil {
		t.Fatal(err)
	}
	got, err := BytesOpaqueOn(screen, 0)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("BytesOpaqueOn differs from Bytes (err %v)", err)
	}
	next := image.NewRGBA(screen.Rect)
	copy(next.Pix, screen.Pix)
	next.Pix[next.PixOffset(700, 300)] ^= 0xff
	var checked, known Encoder
	for i, img := range []*image.RGBA{screen, next, screen} {
		a, errA := checked.Encode(img, 0)
		b, errB := known.EncodeOpaque(img, 0)
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Fatalf("screen %d: EncodeOpaque differs from Encode (%v, %v)", i, errA, errB)
		}
	}

	translucent := image.NewRGBA(screen.Rect)
	copy(translucent.Pix, screen.Pix)
	translucent.Pix[translucent.PixOffset(10, 10)+3] = 0x80
	colourType := func(data []byte) byte { return data[8+8+9] } // IHDR's colour type
	for _, tc := range []struct {
		name   string
		encode func() ([]byte, error)
		want   byte
	}{
		{"Bytes", func() ([]byte, error) { return Bytes(translucent) }, 6},
		{"BytesOpaqueOn", func() ([]byte, error) { return BytesOpaqueOn(translucent, 0) }, 2},
		{"Encoder.EncodeOpaque", func() ([]byte, error) { var e Encoder; return e.EncodeOpaque(translucent, 0) }, 2},
	} {
		data, err := tc.encode()
		if err != nil {
			t.Fatal(err)
		}
		if got := colourType(data); got != tc.want {
			t.Errorf("%s: colour type %d, want %d", tc.name, got, tc.want)
		}
		if _, err := png.Decode(bytes.NewReader(data)); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}
