package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/scenarios"
)

// TestGalleryExamples runs the real-application examples of
// scenarios/examples/ against their Debian packages, as an author would
// run them, and checks that every step held. `go test -count=10 -run
// TestGalleryExamples ./engine/` repeats them (docs/benchmarks.md records
// such a run).
func TestGalleryExamples(t *testing.T) {
	t.Parallel()
	cases := []struct {
		example string
		bins    []string
		// after checks what the run left, given the example's directory
		// (KASM_DEMO_DIR) and the tools events.
		after func(t *testing.T, demoDir string, tools []events.Event)
	}{
		{
			example: "gtk4-calculator.yaml",
			bins:    []string{"gnome-calculator", "xclip", "dbus-daemon"},
			after: func(t *testing.T, _ string, tools []events.Event) {
				if len(tools) == 0 || !strings.Contains(tools[0].Message, "(GTK 4") {
					t.Errorf("tools events %+v: want GNOME Calculator's GTK 4 controls", tools)
				}
			},
		},
		{
			// A GTK dialog driven by the text a person reads and by an
			// accessible name: Yes ends it with status 0.
			example: "zenity-read.yaml",
			bins:    []string{"zenity", "tesseract", "dbus-daemon"},
			after: func(t *testing.T, _ string, tools []events.Event) {
				if len(tools) == 0 || !strings.Contains(tools[0].Message, ": No, Yes") {
					t.Errorf("tools events %+v: want zenity's controls, No among them", tools)
				}
			},
		},
		{
			// A visual baseline, compared once the dialog holds still,
			// with its button and icon masked.
			example: "zenity-baseline.yaml",
			bins:    []string{"zenity", "dbus-daemon"},
			after: func(t *testing.T, _ string, tools []events.Event) {
				if len(tools) == 0 || !strings.Contains(tools[0].Message, "OK") {
					t.Errorf("tools events %+v: want zenity's OK button, which the check masks", tools)
				}
			},
		},
		{
			example: "athena-xedit.yaml",
			bins:    []string{"xedit"},
			after: func(t *testing.T, demoDir string, _ []events.Event) {
				b, err := os.ReadFile(filepath.Join(demoDir, "note.txt"))
				if err != nil || strings.TrimSpace(string(b)) != "hello from kasmrt" {
					t.Errorf("note.txt = %q, %v; want the typed line saved", b, err)
				}
			},
		},
	}
	for _, c := range cases {
		t.Run(c.example, func(t *testing.T) {
			t.Parallel()
			scriptNeed(t, append(c.bins, "Xvfb")...)
			demoDir := t.TempDir()
			files, res, dir := galleryRun(t, c.example, demoDir)
			if res.Verdict != events.VerdictPass || res.Outcome != OutcomeCompleted {
				t.Errorf("verdict %s (%s), want pass (completed); reasons %q", res.Verdict, res.Outcome, res.Reasons)
			}
			rep, _ := scriptReadReport(t, dir)
			evs, err := events.ReadFile(filepath.Join(dir, "events.jsonl"))
			if err != nil {
				t.Fatalf("events.jsonl: %v", err)
			}
			if len(rep.Steps) != len(files.Scenario.Steps) {
				t.Errorf("%d steps in the report, the example has %d", len(rep.Steps), len(files.Scenario.Steps))
			}
			for i, s := range rep.Steps {
				if s.Status != events.StatusOK {
					t.Errorf("step %d %s: %s %q", i+1, s.Tool, s.Status, s.Message)
				}
			}
			var tools []events.Event
			for _, e := range evs {
				if e.Kind == events.KindTools {
					tools = append(tools, e)
				}
			}
			for _, b := range rep.Baselines {
				if b.Result != events.BaselineMatched {
					t.Errorf("screenshot %s: %s (%d of %d pixels differ)", b.Name, b.Result, b.DiffPixels, b.Pixels)
				}
			}
			if c.after != nil {
				c.after(t, demoDir, tools)
			}
		})
	}
}

// galleryRun runs an example of scenarios/examples/ as an author would,
// with KASM_DEMO_DIR set to demoDir, and returns its files, its result
// and its report directory.
func galleryRun(t *testing.T, example, demoDir string) (*scenarios.Files, Result, string) {
	t.Helper()
	env := map[string]string{"KASM_DEMO_DIR": demoDir}
	lookup := func(name string) (string, bool) {
		v, ok := env[name]
		return v, ok
	}
	files, err := scenarios.Load(filepath.Join("../scenarios/examples", example), "", lookup)
	if err != nil {
		t.Fatalf("load the example: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "report")
	runner, err := New(files, Options{ReportDir: dir, Display: "-", Getenv: func(name string) string { return env[name] }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := runner.Run(ctx)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return files, res, dir
}
