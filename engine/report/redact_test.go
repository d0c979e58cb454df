package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/internal/plant"
	"github.com/kasmrt/kasmrt/engine/redact"
)

// TestRedactedCoversEveryString plants a marker in every string of a
// report (found by reflection, so a field added later is covered) and
// checks that Redacted reached each one except the runtime's own words.
func TestRedactedCoversEveryString(t *testing.T) {
	t.Parallel()
	const marker = "PLANTED"
	structural := []string{
		"Schema", "Scenario.SHA256", "Mode", "Verdict", "Outcome",
		"Steps[].Source", "Steps[].Status", "Steps[].Screen", "Startup.Screen", "Hung.Screen", "Baselines[].Baseline.Result",
		"Grounding[].Outcome", "Questions[].ID", "Steering[].Action",
		"Budgets[].Name", "Budgets[].Unit", "Final.Screen", "Final.Ending", "Cache.CacheReport.Mode",
	}
	var r Report
	plant.Fill(reflect.ValueOf(&r).Elem(), marker)
	got := r.Redacted(func(s string) string { return strings.ReplaceAll(s, marker, "[REDACTED]") })
	var left []string
	plant.Strings(reflect.ValueOf(got), "", func(path, s string) {
		if strings.Contains(s, marker) {
			left = append(left, path)
		}
	})
	slices.Sort(left)
	slices.Sort(structural)
	if !slices.Equal(left, structural) {
		t.Errorf("unredacted strings %v, want exactly the structural %v", left, structural)
	}
	if got.Steps[0].Args["k"] != "[REDACTED]" {
		t.Errorf("a step's argument value = %v", got.Steps[0].Args["k"])
	}
	if _, ok := got.Steps[0].Args[marker]; !ok {
		t.Errorf("a step's argument key was changed: %v", got.Steps[0].Args)
	}
	// The original is not changed.
	if r.Goal != marker || r.Steps[0].Args["k"] != marker {
		t.Error("Redacted changed the report it was given")
	}
}

// FuzzSecretValue writes a run's report directory through the bus and the
// writer with one secret value — a number the runtime also writes, a
// letter, JSON syntax — and checks that every events.jsonl line and
// report.json stay valid JSON, that the stream reads back whole with its
// numbers and times intact, and that the secret's own appearances are
// masked.
func FuzzSecretValue(f *testing.F) {
	for _, s := range []string{"1280", "2026", "800", "a", "t", "seq", "kind", `":`, `\`, `"`, "{", "}", ",", "null", "true", "0", ":", "-", "T", "Z", ".", " ", "\n", "[REDACTED]", "E", "ok", "screens", "é", "\u2028", "hunter2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, secret string) {
		if secret == "" {
			return // nothing to hide: the redactor ignores it
		}
		red := redact.New(secret)
		dir := filepath.Join(t.TempDir(), "r")
		w, err := Create(dir, red.String)
		if err != nil {
			t.Fatal(err)
		}
		bus := events.NewBus(red.String, w.Event)
		published := []events.Event{
			{Data: events.RunStarted{Scenario: "pin " + secret, File: "s.yaml", SHA256: "ab12", Mode: "goal", Goal: "type " + secret, Plan: []string{secret}, DeadlineS: 600, ReserveS: 30, Tools: []string{"type_text"}}},
			{Data: events.DisplayStarted{Display: ":99", Owned: true, Width: 1280, Height: 800}},
			{Data: events.AppLaunched{PID: 2026, Command: []string{"app", "--pin=" + secret}}},
			{Data: events.ScreenCaptured{Width: 1280, Height: 800, Settled: true}, Screen: "screens/0001.png"},
			{Kind: events.KindStepEnded, Step: 1, Tool: "type_text", Args: map[string]any{"text": secret, "n": 1280.0}, Source: events.SourceModel, Status: events.StatusOK, Message: "typed " + secret, Screen: "screens/0001.png", DurationMS: 2026},
			{Kind: events.KindQuestion, Question: &events.Question{ID: "q1", Text: "is " + secret + " right?"}},
			{Kind: events.KindConcern, Message: secret},
			{Kind: events.KindCheck, Check: &events.Check{Name: "fatal_pattern", OK: false, Evidence: "crash " + secret}},
			{Data: events.LoopEnded{Iterations: 1280}, Message: "ended " + secret},
			{Kind: events.KindVerdict, Verdict: &events.Decision{Verdict: events.VerdictAppFailed, Outcome: "completed", Reasons: []string{"because " + secret}}},
			{Data: events.RunEnded{Report: dir}},
		}
		bus.Publish(events.Event{Kind: events.KindLog, Message: "start"})
		for _, e := range published {
			bus.Publish(e)
		}
		if err := w.WriteReport(); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}

		raw, err := os.ReadFile(filepath.Join(dir, "events.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(raw))
		for n := 1; sc.Scan(); n++ {
			if !json.Valid(sc.Bytes()) {
				t.Fatalf("secret %q: events.jsonl line %d is not JSON: %s", secret, n, sc.Bytes())
			}
		}
		evs, err := events.ReadFile(filepath.Join(dir, "events.jsonl"))
		if err != nil || len(evs) != len(published)+1 {
			t.Fatalf("secret %q: read %d events, %v; want %d", secret, len(evs), err, len(published)+1)
		}
		for i, e := range evs {
			if e.Seq != int64(i+1) || !e.T.Equal(evs[0].T) && e.T.Before(evs[0].T) {
				t.Fatalf("secret %q: event %d has seq %d, time %v", secret, i, e.Seq, e.T)
			}
		}
		mask := red.String
		if s, _ := evs[2].Data.(events.DisplayStarted); s.Width != 1280 || s.Height != 800 {
			t.Errorf("secret %q: session.started = %+v", secret, s)
		}
		if a, _ := evs[3].Data.(events.AppLaunched); a.PID != 2026 || a.Command[1] != mask("--pin="+secret) {
			t.Errorf("secret %q: app.launched = %+v", secret, a)
		}
		if step := evs[5]; step.Message != mask("typed "+secret) || step.Args["text"] != redact.Mask || step.Args["n"] != 1280.0 || step.DurationMS != 2026 || step.Screen != "screens/0001.png" {
			t.Errorf("secret %q: step.ended = %+v", secret, step)
		}
		if strings.Contains(strings.ReplaceAll(evs[7].Message, redact.Mask, ""), secret) {
			t.Errorf("secret %q: concern %q keeps it", secret, evs[7].Message)
		}

		raw, err = os.ReadFile(filepath.Join(dir, "report.json"))
		if err != nil {
			t.Fatal(err)
		}
		var rep Report
		if err := json.Unmarshal(raw, &rep); err != nil {
			t.Fatalf("secret %q: report.json is not valid: %v\n%s", secret, err, raw)
		}
		if rep.Schema != Schema || rep.Verdict != events.VerdictAppFailed || rep.Timing.DeadlineS != 600 || rep.Display.Width != 1280 || rep.Loop.Iterations != 1280 || len(rep.Steps) != 1 || rep.Steps[0].DurationMS != 2026 {
			t.Errorf("secret %q: report.json lost structure: %s", secret, raw)
		}
		if !rep.Timing.Started.Equal(evs[1].T) {
			t.Errorf("secret %q: report.json's start %v, want %v", secret, rep.Timing.Started, evs[1].T)
		}
		if rep.Goal != mask("type "+secret) || rep.Reasons[0] != mask("because "+secret) || rep.Checks.Evidence["fatal_pattern"] != mask("crash "+secret) {
			t.Errorf("secret %q: report.json's texts are not masked: %s", secret, raw)
		}
	})
}

// TestTypedPrefixesNeverWritten: a page that logs its input while a secret
// is typed a few characters at a time logs every prefix of it. None of
// MinFragment characters or more reaches events.jsonl or report.json
// (what replay --print reads), alone or inside a longer text.
func TestTypedPrefixesNeverWritten(t *testing.T) {
	t.Parallel()
	const secret = "Tr0ub4dor&3-correct"
	red := redact.New(secret)
	dir := filepath.Join(t.TempDir(), "r")
	w, err := Create(dir, red.String)
	if err != nil {
		t.Fatal(err)
	}
	bus := events.NewBus(red.String, w.Event)
	bus.Publish(events.Event{Data: events.RunStarted{Scenario: "prefixes", File: "s.yaml", Mode: "goal", DeadlineS: 60}})
	for n := 1; n <= len(secret); n++ {
		bus.Publish(events.Event{Data: events.ConsoleMessage{Level: "log", Source: "console", Text: "input changed: " + secret[:n]}})
	}
	bus.Publish(events.Event{Kind: events.KindStepEnded, Step: 1, Tool: "type_text", Args: map[string]any{"text": secret[:9]}, Source: events.SourceModel, Status: events.StatusOK, Message: "typed " + secret[:12] + "…"})
	bus.Publish(events.Event{Kind: events.KindVerdict, Verdict: &events.Decision{Verdict: events.VerdictPass, Outcome: "completed"}})
	if err := w.WriteReport(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"events.jsonl", "report.json"} {
		raw, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		for n := 6; n <= len(secret); n++ { // redact.MinFragment
			if strings.Contains(string(raw), secret[:n]) {
				t.Errorf("%s holds %q, a prefix of the secret", name, secret[:n])
			}
		}
		if name == "events.jsonl" && !strings.Contains(string(raw), `"input changed: Tr0ub"`) {
			t.Errorf("%s lost a five-character prefix, which is ordinary text", name)
		}
	}
}
