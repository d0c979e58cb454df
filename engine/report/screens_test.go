package report

import (
	"bytes"
	"image"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSaveFrameCompleteAtClose queues more screens than the background
// writer holds: when Close returns, every one is on disk, whole and equal
// to its capture, and nothing half-written is left.
func TestSaveFrameCompleteAtClose(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "r")
	w, err := Create(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(4, 5))
	var frames []*image.RGBA
	var rels []string
	for i := 0; i < 3*screenQueue; i++ {
		img := image.NewRGBA(image.Rect(0, 0, 640, 400))
		for p := range img.Pix {
			img.Pix[p] = byte(r.IntN(256)) // noise: slow to compress
			if p%4 == 3 {
				img.Pix[p] = 0xff
			}
		}
		frames = append(frames, img)
		rels = append(rels, w.SaveFrame(NewFrame(img)))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// Look at once, newest first: those are the ones still queued at Close.
	for i := len(rels) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dir, rels[i])); err != nil {
			t.Fatalf("%s missing when Close returned: %v", rels[i], err)
		}
	}
	for i, rel := range rels {
		data, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			t.Fatalf("%s missing after Close: %v", rel, err)
		}
		got, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		if !bytes.Equal(got.(*image.RGBA).Pix, frames[i].Pix) && !samePixels(got, frames[i]) {
			t.Fatalf("%s differs from its capture", rel)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "screens", "*.tmp")); len(left) > 0 {
		t.Errorf("half-written files left: %v", left)
	}
}

func samePixels(a image.Image, b *image.RGBA) bool {
	for y := 0; y < b.Rect.Dy(); y++ {
		for x := 0; x < b.Rect.Dx(); x++ {
			r1, g1, b1, a1 := a.At(x, y).RGBA()
			r2, g2, b2, a2 := b.At(x, y).RGBA()
			if r1 != r2 || g1 != g2 || b1 != b2 || a1 != a2 {
				return false
			}
		}
	}
	return true
}

// TestFrameEncodesOnce checks that the report's file and a second caller
// share one encoding of the same frame.
func TestFrameEncodesOnce(t *testing.T) {
	t.Parallel()
	img := image.NewRGBA(image.Rect(0, 0, 8, 8))
	for p := range img.Pix {
		img.Pix[p] = 0xff
	}
	f := NewFrame(img)
	a, err := f.PNG()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := f.PNG()
	if &a[0] != &b[0] {
		t.Error("the frame was encoded twice")
	}
}

// TestScreensNumberedAndFailuresKept: screens are numbered from 0001 in
// the order they are saved, and a screen that cannot be written is the
// report's error at Close.
func TestScreensNumberedAndFailuresKept(t *testing.T) {
	t.Parallel()
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	dir := filepath.Join(t.TempDir(), "r")
	w, err := Create(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := w.SaveFrame(w.NewFrame(img)), w.SaveFrame(w.NewFrame(img)); a != "screens/0001.png" || b != "screens/0002.png" {
		t.Errorf("screens %s and %s, want 0001 and 0002", a, b)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(t.TempDir(), "r")
	w, err = Create(broken, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The screens directory becomes a file: no screen can be written.
	if err := os.RemoveAll(filepath.Join(broken, "screens")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(broken, "screens"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	w.SaveFrame(w.NewFrame(img))
	if err := w.Close(); err == nil || !strings.Contains(err.Error(), "screens/0001.png") {
		t.Errorf("close = %v, want the unwritten screen's error", err)
	}
}

// TestEncodedFrameWrittenAsItCame: a frame that came encoded is written
// with the bytes it came with, which are also its PNG, and never encoded
// here.
func TestEncodedFrameWrittenAsItCame(t *testing.T) {
	t.Parallel()
	img := image.NewRGBA(image.Rect(0, 0, 8, 8))
	for i := range img.Pix {
		img.Pix[i] = 0xff
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "r")
	w, err := Create(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	f, err := w.NewPNGFrame(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if got, err := f.PNG(); err != nil || !bytes.Equal(got, buf.Bytes()) {
		t.Errorf("PNG() = %d bytes, %v; want the %d it came with", len(got), err, buf.Len())
	}
	rel := w.SaveFrame(f)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	saved, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil || !bytes.Equal(saved, buf.Bytes()) {
		t.Errorf("%s holds %d bytes (%v), want the %d the frame came with", rel, len(saved), err, buf.Len())
	}
	if cores, encoded := f.EncodedOn(); !encoded || cores != CameEncoded {
		t.Errorf("EncodedOn() = %d, %v; want CameEncoded", cores, encoded)
	}
	// EncodedOn's other answers are goroutine counts, 0 (every core) or
	// more; CameEncoded must not read as one of them.
	if CameEncoded >= 0 {
		t.Errorf("CameEncoded = %d, which EncodedOn also says of a frame encoded here", CameEncoded)
	}
}

// pngOf encodes img with image/png, as a browser's capture comes.
func pngOf(t *testing.T, img image.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestPNGFrameDecodesOnlyWhenAsked: a frame made from a PNG knows its size
// from the header without decoding, and its pixels, decoded once on the
// first Image or Sum, are the PNG's.
func TestPNGFrameDecodesOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	img := image.NewRGBA(image.Rect(0, 0, 12, 7))
	r := rand.New(rand.NewPCG(1, 2))
	for i := range img.Pix {
		img.Pix[i] = byte(r.IntN(256))
	}
	for i := 3; i < len(img.Pix); i += 4 {
		img.Pix[i] = 0xff
	}
	data := pngOf(t, img)
	ask := map[string]func(f *Frame) error{
		"Image": func(f *Frame) error { _, err := f.Image(); return err },
		"Sum":   func(f *Frame) error { _, err := f.Sum(); return err },
	}
	for name, first := range ask {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w, err := Create(filepath.Join(t.TempDir(), "r"), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			f, err := w.NewPNGFrame(data)
			if err != nil {
				t.Fatal(err)
			}
			if got := f.Bounds(); got != img.Bounds() {
				t.Errorf("Bounds() = %v, want %v", got, img.Bounds())
			}
			if _, err := f.PNG(); err != nil || f.Decoded() {
				t.Errorf("after PNG(): decoded %v (%v), want the PNG kept undecoded", f.Decoded(), err)
			}
			if err := first(f); err != nil {
				t.Fatal(err)
			}
			if !f.Decoded() {
				t.Errorf("%s() did not decode the frame", name)
			}
			a, err := f.Image()
			if err != nil {
				t.Fatal(err)
			}
			b, _ := f.Image()
			if a != b {
				t.Error("the frame was decoded twice")
			}
			if !bytes.Equal(a.Pix, img.Pix) || a.Bounds() != img.Bounds() {
				t.Error("the decoded pixels are not the PNG's")
			}
			sum, err := f.Sum()
			if want, _ := NewFrame(img).Sum(); err != nil || sum != want {
				t.Errorf("Sum() = %x, %v; want the pixels' %x", sum, err, want)
			}
		})
	}
}

// TestPNGFrameBadPNG: a PNG whose header cannot be read is NewPNGFrame's
// error, and one whose pixels do not decode is an error from every Image
// and Sum, never a panic or a nil image without an error; the report
// still writes the bytes it was given.
func TestPNGFrameBadPNG(t *testing.T) {
	t.Parallel()
	good := pngOf(t, image.NewRGBA(image.Rect(0, 0, 16, 16)))
	// The header is whole; the image data after it is cut short.
	cut := slices.Clone(good[:len(good)-20])
	cases := []struct {
		name     string
		data     []byte
		noHeader bool
	}{
		{"empty", nil, true},
		{"not a PNG", []byte("GIF89a and more bytes than a header"), true},
		{"image data cut short", cut, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "r")
			w, err := Create(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			f, err := w.NewPNGFrame(c.data)
			if c.noHeader {
				if err == nil || f != nil {
					t.Errorf("NewPNGFrame = %v, %v; want an error", f, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if f.Bounds() != image.Rect(0, 0, 16, 16) {
				t.Errorf("Bounds() = %v, want the header's 16x16", f.Bounds())
			}
			for range 2 {
				if img, err := f.Image(); err == nil || img != nil {
					t.Errorf("Image() gave an image: %v, error %v; want no image and an error", img != nil, err)
				}
				if _, err := f.Sum(); err == nil {
					t.Error("Sum() gave no error")
				}
			}
			rel := w.SaveFrame(f)
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if saved, err := os.ReadFile(filepath.Join(dir, rel)); err != nil || !bytes.Equal(saved, cut) {
				t.Errorf("%s holds %d bytes (%v), want the %d given", rel, len(saved), err, len(cut))
			}
		})
	}
}

// TestFrameSumTellsScreensApart is repeat detection's contract: frames
// with the same size and pixels have one sum, whichever frame computed it,
// and a single byte's change anywhere, or the same bytes at another size,
// gives another. A sum of a downscale or of part of the pixels would miss
// the letter typed into a terminal.
func TestFrameSumTellsScreensApart(t *testing.T) {
	t.Parallel()
	screen := func(w, h int) *image.RGBA {
		img := image.NewRGBA(image.Rect(0, 0, w, h))
		r := rand.New(rand.NewPCG(8, 9))
		for i := range img.Pix {
			img.Pix[i] = byte(r.Uint32())
		}
		return img
	}
	sum := func(img *image.RGBA) [32]byte {
		t.Helper()
		s, err := NewFrame(img).Sum()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	base := screen(1280, 800)
	changed := func(offset int) *image.RGBA {
		img := screen(1280, 800)
		img.Pix[offset] ^= 0x01
		return img
	}
	tests := []struct {
		name  string
		other *image.RGBA
		same  bool
	}{
		{"the same pixels in another frame", screen(1280, 800), true},
		{"the first byte changed", changed(0), false},
		{"one byte in the middle changed", changed(base.PixOffset(640, 400) + 1), false},
		{"the last byte changed", changed(len(base.Pix) - 1), false},
		{"the same bytes at another size", &image.RGBA{Pix: base.Pix, Stride: 800 * 4, Rect: image.Rect(0, 0, 800, 1280)}, false},
	}
	want := sum(base)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := sum(tc.other); (got == want) != tc.same {
				t.Errorf("same sum = %v, want %v", got == want, tc.same)
			}
		})
	}
	f := NewFrame(base)
	a, _ := f.Sum()
	b, _ := f.Sum()
	if a != b || a != want {
		t.Error("one frame's sum changed between calls")
	}
}

// TestCaptureFrameSamePNG: a capture frame (an X11 screen, opaque by
// construction) is written as the very bytes a frame checked for
// transparency would be, in a run of screens of one writer.
func TestCaptureFrameSamePNG(t *testing.T) {
	t.Parallel()
	checked, err := Create(filepath.Join(t.TempDir(), "a"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer checked.Close()
	known, err := Create(filepath.Join(t.TempDir(), "b"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer known.Close()
	r := rand.New(rand.NewPCG(6, 7))
	img := image.NewRGBA(image.Rect(0, 0, 320, 200))
	for i := range img.Pix {
		img.Pix[i] = byte(r.IntN(4)) * 60
		if i%4 == 3 {
			img.Pix[i] = 0xff
		}
	}
	for i := range 3 {
		next := image.NewRGBA(img.Rect)
		copy(next.Pix, img.Pix)
		next.Pix[next.PixOffset(i*50, i*30)] ^= 0xff
		a, errA := checked.NewFrame(next).PNG()
		f := known.NewCaptureFrame(next)
		b, errB := f.PNG()
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Fatalf("screen %d: the capture frame's PNG differs (%v, %v)", i, errA, errB)
		}
		if !f.KnownOpaque() || checked.NewFrame(next).KnownOpaque() {
			t.Error("KnownOpaque is not the constructor's")
		}
		img = next
	}
}
