package tui

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
)

// recordedRun is a report directory recorded from a real goal run (xterm
// in Xvfb, the model test server scripting one of everything the console
// shows: a refusal, a malformed call, a grounded click with before and
// after screens, a concern, a question answered while paused, a message
// to the operator and a verdict). engine's TestRecordConsoleFixture
// records it again; its comment gives the command.
const recordedRun = "testdata/recorded-run"

// sampleEvents is the recorded run's event stream.
func sampleEvents() []events.Event {
	evs, err := events.ReadFile(filepath.Join(recordedRun, "events.jsonl"))
	if err != nil {
		panic(err)
	}
	return evs
}

// writeReport writes a report directory for evs with the recorded run's
// screens; report.json, the recorded one, only when withSummary.
func writeReport(tb testing.TB, dir string, evs []events.Event, withSummary bool) {
	tb.Helper()
	if err := os.CopyFS(filepath.Join(dir, "screens"), os.DirFS(filepath.Join(recordedRun, "screens"))); err != nil {
		tb.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	enc := json.NewEncoder(f)
	for _, e := range evs {
		if err := enc.Encode(e); err != nil {
			tb.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	if withSummary {
		data, err := os.ReadFile(filepath.Join(recordedRun, "report.json"))
		if err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "report.json"), data, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// TestWriteSampleReport writes the sample report to $KASMRT_SAMPLE_REPORT
// for trying the console by hand; without the variable it only checks that
// the sample loads back.
func TestWriteSampleReport(t *testing.T) {
	t.Parallel()
	dir := os.Getenv("KASMRT_SAMPLE_REPORT")
	if dir == "" {
		dir = t.TempDir()
	}
	writeReport(t, dir, sampleEvents(), true)
	r, err := LoadReport(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Events) != len(sampleEvents()) || r.Summary == nil || r.Summary.Verdict != "pass-with-concerns" {
		t.Fatalf("loaded %d events, summary %v", len(r.Events), r.Summary)
	}
}
