package vision

import (
	"errors"
	"image"
	"testing"

	"github.com/kasmrt/kasmrt/engine/model"
)

// A locate answer is whatever the model wrote: it gives a point on the
// screen, or ErrNotFound, or ErrUnavailable — never a point off the screen
// a click would then be sent to.
func FuzzLocateAnswer(f *testing.F) {
	for _, seed := range []string{
		`{"point": [10, 20]}`, `[{"point_2d": [999, 1000]}]`, `{"found": false}`,
		"<answer>```json\n{\"point\": [1e308, -0]}\n```</answer>", `{"point": [1, 2, 3]}`, `{"point": [NaN, 1]}`,
		`[{"point": [1, 1]}, {"point": [2, 2]}]`, `{"point": [-0.4, 1279.9]}`,
	} {
		f.Add(seed)
	}
	screen := image.Pt(1280, 800)
	scale := Scale{Screen: screen, Sent: image.Pt(1024, 640)}
	f.Fuzz(func(t *testing.T, text string) {
		x, y, err := parseLocate(text)
		if err != nil {
			if !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrUnavailable) {
				t.Fatalf("answer %q: %v is neither not found nor unavailable", text, err)
			}
			return
		}
		for _, c := range []model.Coordinates{model.Absolute, model.Relative1000} {
			pt, err := MapPoint(scale, c, x, y)
			if err == nil && !pt.In(image.Rectangle{Max: screen}) {
				t.Fatalf("answer %q (%s): point %v is off the %v screen", text, c, pt, screen)
			}
		}
	})
}
