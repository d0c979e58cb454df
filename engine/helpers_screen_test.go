package engine

import (
	"image"
	"image/png"
	"os"
	"testing"
)

// readScreen decodes a saved screen, failing the test when it cannot.
func readScreen(t testing.TB, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("screen: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screen %s: %v", path, err)
	}
	return img
}
