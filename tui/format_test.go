package tui

import (
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
)

// A zoomed grounding says which pass it was and what it looked at; a
// single pass says neither.
func TestFormatGroundingPasses(t *testing.T) {
	t.Parallel()
	pt := &events.Point{X: 12, Y: 34}
	tests := []struct {
		name string
		g    events.Grounding
		want string
	}{
		{"one pass", events.Grounding{Step: 2, Attempt: 1, Description: "Save", Expect: "saved", Point: pt, Outcome: "confirmed"},
			`grounding step 2 attempt 1: "Save" expect "saved" → confirmed at (12,34)`},
		{"first of two", events.Grounding{Step: 2, Attempt: 1, Description: "Save", Expect: "saved", Point: pt, Outcome: "located", Pass: 1},
			`grounding step 2 attempt 1: "Save" expect "saved" → located at (12,34) (pass 1, on the whole screen)`},
		{"second of two", events.Grounding{Step: 2, Attempt: 1, Description: "Save", Expect: "saved", Point: pt, Outcome: "confirmed", Pass: 2, Crop: &events.Rect{X: 5, Y: 6, W: 266, H: 266}},
			`grounding step 2 attempt 1: "Save" expect "saved" → confirmed at (12,34) (pass 2, on the 266x266 crop at 5,6)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := formatGrounding(&tt.g); got != tt.want {
				t.Errorf("formatGrounding = %q\nwant %q", got, tt.want)
			}
		})
	}
}
