package ocr

import (
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestTextReadsAScreen(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath(Command); err != nil {
		t.Skip("tesseract is not installed (scripts/setup.sh installs it)")
	}
	// A capture of the xterm demo after it greeted the visitor.
	f, err := os.Open("../../scenarios/examples/greeting-done.png")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	text, err := Text(ctx, img)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "Hello, Ada Lovelace!") {
		t.Errorf("read %q, want the greeting", text)
	}
	// A blank image has no text.
	blank, err := Text(ctx, image.NewRGBA(image.Rect(0, 0, 200, 100)))
	if err != nil || strings.TrimSpace(blank) != "" {
		t.Errorf("blank image read as %q, %v", blank, err)
	}
}

func TestTextWithoutTesseract(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	if _, err := Text(context.Background(), image.NewRGBA(image.Rect(0, 0, 10, 10))); err != ErrNotInstalled {
		t.Errorf("err = %v, want ErrNotInstalled", err)
	}
}

// BenchmarkText reads the xterm demo's 1280x800 capture, the cost of one
// try of an expect: screen_text check.
func BenchmarkText(b *testing.B) {
	if _, err := exec.LookPath(Command); err != nil {
		b.Skip("tesseract is not installed")
	}
	f, err := os.Open("../../scenarios/examples/greeting-done.png")
	if err != nil {
		b.Fatal(err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Text(context.Background(), img); err != nil {
			b.Fatal(err)
		}
	}
}
