package scenarios

import (
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var updateRecorded = flag.Bool("update-recorded", false, "rewrite testdata/recorded.golden.yaml")

// recordSource is a goal scenario with a secret by reference: a recording
// against it keeps its app, values and targets as written and replaces
// its goal with the steps.
const recordSource = `# The app under test.
name: form
app:
  command: [zenity, --entry, "--title=Sign in", "--text=Password"]
  window: {title: Sign in}
provides:
  password:
    secret: {env: REC_PASSWORD}
  user: ada
click_targets:
  ok_pixels: {x: 10, y: 20}
goal: sign in
success:
  window_title: {contains: Sign}
`

func recordedSample() Recording {
	yes, no := true, false
	return Recording{
		Source: []byte(recordSource),
		Header: "Recorded by kasmrt record from form.yaml.",
		Windows: map[string]WindowMatch{
			"confirm": {Class: "Zenity", Title: "Are you sure?"},
		},
		ClickTargets: map[string]ClickTarget{
			"ok":       {Name: "OK", Role: "push button", Description: "the OK button"},
			"no_thing": {Text: "No: thanks", Description: "words read there"},
		},
		Steps: []RecordedStep{
			{Tool: "type_text", Args: map[string]any{"ref": "password"}, Saw: []string{`window "Sign in" (focused)`}},
			{Tool: "press_key", Args: map[string]any{"key": "Return"},
				Expect: &Expect{WindowTitle: &TitleCheck{Equals: "Are you sure?"},
					ScreenText: &ScreenTextCheck{Contains: "yes: 1 # not a comment"},
					Controls:   map[string]ControlCheck{"true": {Present: &yes, Enabled: &yes, Checked: &no}}},
				Saw: []string{"text near the pointer: \"yes: 1\"\x1b[31m"}},
			{Tool: "switch_window", Args: map[string]any{"name": "confirm"},
				Expect: &Expect{Screenshot: &ScreenshotCheck{Name: "step3", MaxDiffRatio: 0.01, MaskRegions: []Region{{X: 1, Y: 2, Width: 30, Height: 4}}}}},
			{Tool: "click", Args: map[string]any{"target": "ok"}},
		},
	}
}

// TestRecordingWriteRoundTrips writes a recording, loads it back with the
// loader and finds the same steps, checks and names, the goal gone and no
// secret's value written.
func TestRecordingWriteRoundTrips(t *testing.T) {
	rec := recordedSample()
	out, err := rec.Write()
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "recorded.golden.yaml")
	if *updateRecorded {
		if err := os.WriteFile(golden, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != string(want) {
		t.Errorf("written scenario differs from %s (go test -run %s -update-recorded):\n%s", golden, t.Name(), out)
	}
	const secret = "hunter2-secret"
	if strings.Contains(string(out), secret) {
		t.Fatal("the secret's value was written")
	}
	path := filepath.Join(t.TempDir(), "new.yaml")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	lookup := func(name string) (string, bool) {
		if name == "REC_PASSWORD" {
			return secret, true
		}
		return "", false
	}
	files, err := Load(path, "", lookup)
	if err != nil {
		t.Fatalf("the written scenario does not load: %v\n%s", err, out)
	}
	sc := files.Scenario
	if sc.Goal != "" || sc.Success != nil {
		t.Errorf("goal %q and success %v were kept", sc.Goal, sc.Success)
	}
	if len(sc.Steps) != len(rec.Steps) {
		t.Fatalf("%d steps loaded, want %d", len(sc.Steps), len(rec.Steps))
	}
	for i, st := range sc.Steps {
		w := rec.Steps[i]
		if st.Tool != w.Tool || !reflect.DeepEqual(st.Args, w.Args) {
			t.Errorf("step %d: %s %v, want %s %v", i+1, st.Tool, st.Args, w.Tool, w.Args)
		}
	}
	e := sc.Steps[1].Expect
	if e == nil || e.WindowTitle == nil || e.WindowTitle.Equals != "Are you sure?" ||
		e.ScreenText == nil || e.ScreenText.Contains != "yes: 1 # not a comment" ||
		e.Controls["true"].Checked == nil || *e.Controls["true"].Checked {
		t.Errorf("step 2's checks did not round-trip: %+v", e)
	}
	if c := sc.Steps[2].Expect; c == nil || c.Screenshot == nil || c.Screenshot.Name != "step3" || c.Screenshot.MaxDiffRatio != 0.01 ||
		!reflect.DeepEqual(c.Screenshot.MaskRegions, []Region{{X: 1, Y: 2, Width: 30, Height: 4}}) {
		t.Errorf("step 3's screenshot check did not round-trip: %+v", c)
	}
	if w := sc.Windows["confirm"]; w.Class != "Zenity" || w.Title != "Are you sure?" {
		t.Errorf("window confirm = %+v", w)
	}
	if ct := sc.ClickTargets["ok"]; ct.Name != "OK" || ct.Role != "push button" {
		t.Errorf("click target ok = %+v", ct)
	}
	if ct := sc.ClickTargets["ok_pixels"]; ct.X != 10 || ct.Y != 20 {
		t.Errorf("the source's click target was not kept: %+v", ct)
	}
	if ct := sc.ClickTargets["no_thing"]; ct.Text != "No: thanks" {
		t.Errorf("click target no_thing = %+v", ct)
	}
}

// TestLoadRecordingNeedsNoGoalOrSteps loads a scenario with only an app
// for recording, which Load refuses, and still refuses other problems
// with their file, line and key.
func TestLoadRecordingNeedsNoGoalOrSteps(t *testing.T) {
	dir := t.TempDir()
	bare := filepath.Join(dir, "bare.yaml")
	if err := os.WriteFile(bare, []byte("name: bare\napp:\n  command: [xterm]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(bare, "", nil); err == nil {
		t.Fatal("Load took a scenario with neither goal nor steps")
	}
	if _, err := LoadRecording(bare, "", nil); err != nil {
		t.Fatalf("LoadRecording: %v", err)
	}
	goal := filepath.Join(dir, "goal.yaml")
	if err := os.WriteFile(goal, []byte("name: g\napp:\n  command: [xterm]\ngoal: do it\nplan: [a]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	files, err := LoadRecording(goal, "", func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatalf("LoadRecording of a goal without a model: %v", err)
	}
	if files.Scenario.Goal != "" || files.Scenario.Plan != nil {
		t.Errorf("the goal was kept: %q %v", files.Scenario.Goal, files.Scenario.Plan)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: b\napp:\n  command: [xterm]\n  startup_timeout_s: soon\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = LoadRecording(bad, "", nil)
	if err == nil || !strings.Contains(err.Error(), "bad.yaml:4") || !strings.Contains(err.Error(), "startup_timeout_s") {
		t.Fatalf("a bad scenario: %v, want its file, line and key", err)
	}
}
