package report

import (
	"bytes"
	"image"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
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
	f := w.NewEncodedFrame(img, buf.Bytes())
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
}
