package report

import (
	"image"
	"path/filepath"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/redact"
)

// BenchmarkWriterEvent measures one step.ended event through the writer:
// value redaction with three secrets, encoding, folding and the write.
func BenchmarkWriterEvent(b *testing.B) {
	red := redact.New("hunter2", "1280", "s3cret-token")
	w, err := Create(filepath.Join(b.TempDir(), "r"), red.String)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	e := events.Event{Seq: 1, Kind: events.KindStepEnded, Step: 3, Tool: "type_text", Source: events.SourceModel, Status: events.StatusOK,
		Args: map[string]any{"ref": "password", "note": "typed hunter2 into the field"}, Message: `typed the secret value "password" (7 characters)`,
		Screen: "screens/0003.png", DurationMS: 412, Point: &events.Point{X: 640, Y: 400}}
	b.ReportAllocs()
	for b.Loop() {
		w.Event(e)
	}
}

// BenchmarkFrameSum measures repeat detection's sum of one 1280x800
// capture: what every screen of a goal run costs before the model sees it.
// A fresh frame each time, since a frame sums its pixels once.
func BenchmarkFrameSum(b *testing.B) {
	img := image.NewRGBA(image.Rect(0, 0, 1280, 800))
	for i := range img.Pix {
		img.Pix[i] = byte(i * 7)
	}
	b.SetBytes(int64(len(img.Pix)))
	for b.Loop() {
		if _, err := NewFrame(img).Sum(); err != nil {
			b.Fatal(err)
		}
	}
}
