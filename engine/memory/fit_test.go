package memory

import (
	"bytes"
	"image"
	"image/png"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/model"
)

func pngSized(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestFitTrimsOldestImagesThenTurns checks the trimming order under
// model.max_context_length: the older images go first, then the oldest
// turns, then the newest image; the goal and the newest turn's text always
// stay.
func TestFitTrimsOldestImagesThenTurns(t *testing.T) {
	t.Parallel()
	screen := pngSized(t, 280, 280) // 100 patches
	if got := ImageTokens(screen); got != 102 {
		t.Fatalf("ImageTokens(280x280) = %d, want 102", got)
	}
	turn := func(n string) []model.Message {
		return []model.Message{
			{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: n, Name: "observe_screen", Arguments: "{}"}}},
			{Role: model.RoleTool, CallID: n, Text: "observed " + n, Images: []model.Image{{Handle: "img_" + n, PNG: screen}}},
		}
	}
	msgs := []model.Message{{Role: model.RoleUser, Text: "Goal: the goal."}}
	for _, n := range []string{"1", "2", "3"} {
		msgs = append(msgs, turn(n)...)
	}
	full := EstimateTokens(msgs)
	if got := Fit(msgs, full); len(got) != len(msgs) || len(got[2].Images) != 1 {
		t.Fatal("Fit trimmed a request within its budget")
	}
	// One image too many: the oldest goes, the text stays.
	got := Fit(msgs, full-50)
	if len(got) != len(msgs) || len(got[2].Images) != 0 || len(got[4].Images) != 1 || !strings.Contains(got[2].Text, "img_1 left out") {
		t.Errorf("one image over: %+v", got)
	}
	if len(msgs[2].Images) != 1 {
		t.Error("Fit changed its input")
	}
	// No room for the older screens nor the older turns: the newest
	// screen, the model's only view, outlasts the older turns' text.
	got = Fit(msgs, EstimateTokens(msgs[:1])+EstimateTokens(msgs[5:])+5)
	if len(got) != 3 || got[1].ToolCalls[0].ID != "3" || len(got[2].Images) != 1 {
		t.Errorf("room for the goal and the newest turn: %+v", got)
	}
	// No room for images at all, nor the older turns' text.
	got = Fit(msgs, 40)
	if len(got) != 3 || got[0].Text != "Goal: the goal." || got[1].ToolCalls[0].ID != "3" || len(got[2].Images) != 0 {
		t.Errorf("far over: %+v", got)
	}
}
