package vision

import (
	"image"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/model"
)

// TestLocatePromptConvention: the locate prompt states the convention
// the profile answers in: 0–1000 across the image, or pixels of the image
// with its size.
func TestLocatePromptConvention(t *testing.T) {
	t.Parallel()
	rel := locatePrompt(model.Relative1000, image.Pt(640, 400), "the OK button")
	abs := locatePrompt(model.Absolute, image.Pt(640, 400), "the OK button")
	if !strings.Contains(rel, "scaled to 0–1000") || strings.Contains(rel, "640 pixels wide") {
		t.Errorf("relative prompt %q", rel)
	}
	if !strings.Contains(abs, "which is 640 pixels wide and 400 pixels high") || strings.Contains(abs, "0–1000") {
		t.Errorf("absolute prompt %q", abs)
	}
}

// TestClipReply: a reply quoted in an error is kept whole up to 200 bytes
// and cut and marked past them.
func TestClipReply(t *testing.T) {
	t.Parallel()
	if s := strings.Repeat("a", 200); clip(s) != s {
		t.Error("a 200-byte reply was cut")
	}
	if got := clip(strings.Repeat("a", 201)); got != strings.Repeat("a", 200)+"…" {
		t.Errorf("a 201-byte reply became %q", got)
	}
}
