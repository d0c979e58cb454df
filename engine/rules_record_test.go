package engine

import (
	"context"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/scenarios"
)

// TestRulesRecordSession: a recording's steps run as a script's (source
// script, through the guards), a failed one leaves the session open, a
// look reads the startup window's title and the run's vocabulary (each
// declared tool with every combination of its values), and a
// window named on the spot is one switch_window can use at once.
func TestRulesRecordSession(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir := t.TempDir()
	path, _ := writeRunFiles(t, dir, rulesApp+`tools:
  greet:
    run: shell
    parameters:
      who: {values: {ada: "true", bob: "true"}}
      how: {values: {loud: "true"}}
`, "")
	files, err := LoadRecording(path, "", lookupIn(nil))
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeMachine{title: "Fake Window"}
	s, evs := rulesOpen(t, ctx, dir, files, f)
	defer s.Close(ctx, "", "")

	seen, err := s.Look(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if seen.Title != "Fake Window" || !slices.Contains(seen.Tools, "type_text") || !slices.Equal(seen.Vocabulary.Refs, []string{"greeting", "quit"}) {
		t.Errorf("look: title %q, tools %v, refs %v", seen.Title, seen.Tools, seen.Vocabulary.Refs)
	}
	wantDeclared := []DeclaredCall{
		{Tool: "greet", Args: map[string]any{"how": "loud", "who": "ada"}},
		{Tool: "greet", Args: map[string]any{"how": "loud", "who": "bob"}},
	}
	if !reflect.DeepEqual(seen.Vocabulary.Declared, wantDeclared) {
		t.Errorf("declared calls %+v, want every combination of the values: %+v", seen.Vocabulary.Declared, wantDeclared)
	}
	typed, err := s.Record(ctx, "type_text", map[string]any{"ref": "greeting"})
	if err != nil || typed.Status != events.StatusOK || typed.Ended {
		t.Fatalf("type_text: %+v %v", typed, err)
	}
	if bad, err := s.Record(ctx, "switch_window", map[string]any{"name": "main"}); err != nil || bad.Status == events.StatusOK || bad.Ended {
		t.Errorf("switch_window to a window not named yet: %+v %v", bad, err)
	}
	if err := s.Define(ctx, Definition{Window: "main", WindowMatch: scenarios.WindowMatch{Class: "Fake", Title: "Fake Window"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Define(ctx, Definition{Window: "main", WindowMatch: scenarios.WindowMatch{Class: "Fake"}}); err == nil {
		t.Error("a second window named main was taken")
	}
	sw, err := s.Record(ctx, "switch_window", map[string]any{"name": "main"})
	if err != nil || sw.Status != events.StatusOK || sw.Ended {
		t.Errorf("switch_window to the window named on the spot: %+v %v", sw, err)
	}
	if seen, _ := s.Look(ctx, nil); !slices.Contains(seen.Vocabulary.Windows, "main") {
		t.Errorf("the vocabulary lacks the window named on the spot: %v", seen.Vocabulary.Windows)
	}
	for _, e := range evs() {
		if e.Kind == events.KindStepStarted && e.Source != SourceRecord {
			t.Errorf("step %d (%s) ran with source %q, want %q", e.Step, e.Tool, e.Source, SourceRecord)
		}
	}
	if ins := f.inputs(); !slices.Contains(ins, "type echo hello") {
		t.Errorf("inputs %q: want the greeting typed", ins)
	}
}
