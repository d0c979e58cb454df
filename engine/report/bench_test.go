package report

import (
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
