package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/internal/testkit"
	"github.com/kasmrt/kasmrt/scenarios"
)

// TestRecordRefusesBadInput refuses, before anything launches, a scenario
// with a problem (its file, line and key named), a missing --out, an
// --out that exists without --overwrite, and a stdout that is not a
// terminal: exit 3, no report written.
func TestRecordRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := testkit.WriteFile(t, dir, "bad.yaml", "name: bad\napp:\n  command: [xterm]\n  startup_timeout_s: soon\n")
	good := testkit.WriteFile(t, dir, "good.yaml", "name: good\napp:\n  command: [xterm]\n")
	taken := testkit.WriteFile(t, dir, "taken.yaml", "keep me\n")
	reports := filepath.Join(dir, "reports")
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"a bad scenario", []string{bad, "--out", filepath.Join(dir, "new.yaml")}, []string{"bad.yaml:4", "app.startup_timeout_s"}},
		{"no --out", []string{good}, []string{"--out"}},
		{"--out exists", []string{good, "--out", taken}, []string{"taken.yaml exists", "--overwrite", "nothing was launched"}},
		{"no terminal", []string{good, "--out", filepath.Join(dir, "new.yaml")}, []string{"record needs a terminal", "nothing was launched"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"record"}, tt.args...)
			args = append(args, "--report", reports)
			code, _, stderr := kasmrt(t, args...)
			if code != exitBadInput {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, exitBadInput, stderr)
			}
			wantIn(t, "stderr", stderr, tt.want)
			if _, err := os.Stat(reports); err == nil {
				t.Errorf("a report directory was made: something launched")
			}
		})
	}
	if b, _ := os.ReadFile(taken); string(b) != "keep me\n" {
		t.Errorf("the existing --out was changed: %q", b)
	}
}

// TestRecordInTmux records a scenario against Mousepad in the embedded
// Xvfb through the console in a real terminal: a value typed by ref with
// the title change it made accepted as its check, a menu opened through
// its named control with an item's appearance as the check, a key chord
// that closes it, then a window and a click target named on the spot (by
// class and title, by accessible name) and used, the last step with the
// window's look accepted as a screenshot check. The written scenario
// loads, keeps the secret-free ref, its baseline is written beside it,
// and its headless replay passes (exit 0).
func TestRecordInTmux(t *testing.T) {
	t.Parallel()
	need(t, "tmux", "Xvfb", "mousepad", "tesseract")
	dir := t.TempDir()
	src := testkit.WriteFile(t, dir, "src.yaml", `name: mousepad recorded
app:
  command: [mousepad, --disable-server]
  window: {class: Mousepad}
  startup_timeout_s: 30
provides:
  line: Typed while recording
`)
	out := filepath.Join(dir, "new.yaml")
	term := testkit.StartTerminal(t, "record", 160, 48, "DISPLAY=", "sh", "-c",
		`"$0" record "$1" --out "$2" --graphics none --report "$3" --replay-report "$4"; echo "EXIT=$?"; sleep 3600`,
		kasmrtBinary(t), src, out, filepath.Join(dir, "rec"), filepath.Join(dir, "replay"))

	term.Screen(`click_element "Edit"`)
	term.Type("type_text line")
	term.Keys("Enter")
	accept(t, term, `the window title became "*Untitled 1 - Mousepad"`)
	term.Keys("Enter")
	term.Screen("step 1 recorded")

	term.Type(`click_element "edit"`)
	term.Keys("Enter")
	accept(t, term, `the menu item "Paste" appeared`)
	term.Keys("Enter")
	term.Screen("step 2 recorded")

	term.Type("press_key")
	term.Keys("Enter")
	term.Screen("type the chord")
	term.Type("Escape")
	term.Keys("Enter")
	accept(t, term, `the menu item "Paste" is gone`)
	term.Keys("Enter")
	term.Screen("step 3 recorded")

	// A window and a click target named on the spot: the input offers
	// the name the recorder proposes, enter takes it.
	term.Type("name window")
	term.Keys("Enter")
	term.Screen("untitled_1_mousepad")
	term.Keys("Enter")
	term.Screen("checks for switch_window")
	term.Keys("Enter")
	term.Screen("step 4 recorded")

	term.Type(`name click target "edit"`)
	term.Keys("Enter")
	term.Screen("name it (")
	term.Keys("Enter")
	accept(t, term, `the menu item "Paste" appeared`)
	term.Keys("Enter")
	term.Screen("step 5 recorded")

	term.Type("press_key")
	term.Keys("Enter")
	term.Screen("type the chord")
	term.Type("Escape")
	term.Keys("Enter")
	term.Screen("checks for press_key")
	accept(t, term, `the window looks like this (screenshot step6,`)
	term.Keys("Enter")
	term.Screen("step 6 recorded")

	term.Type("finish")
	term.Keys("Enter")
	screen := term.Screen("EXIT=")
	wantIn(t, "the terminal", screen, []string{"wrote " + out + ": 6 step(s)", "wrote 1 baseline(s)", "replay passed: pass", "EXIT=0"})

	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	files, err := scenarios.Load(out, "", nil)
	if err != nil {
		t.Fatalf("the recorded scenario does not load: %v\n%s", err, data)
	}
	steps := files.Scenario.Steps
	if len(steps) != 6 {
		t.Fatalf("%d steps recorded, want 6:\n%s", len(steps), data)
	}
	for i, want := range []string{"type_text", "click_element", "press_key", "switch_window", "click", "press_key"} {
		if steps[i].Tool != want {
			t.Errorf("step %d is %s, want %s", i+1, steps[i].Tool, want)
		}
	}
	if e := steps[0].Expect; e == nil || e.WindowTitle == nil || e.WindowTitle.Equals != "*Untitled 1 - Mousepad" {
		t.Errorf("step 1's check: %+v\n%s", e, data)
	}
	if e := steps[1].Expect; e == nil || e.Controls["Paste"].Present == nil || !*e.Controls["Paste"].Present {
		t.Errorf("step 2's check: %+v\n%s", e, data)
	}
	if steps[0].Args["ref"] != "line" || strings.Contains(string(data), "Typed while recording") && !strings.Contains(string(data), "line: Typed while recording") {
		t.Errorf("step 1 types by ref only:\n%s", data)
	}
	if w := files.Scenario.Windows["untitled_1_mousepad"]; w.Class != "Mousepad" || w.Title != "*Untitled 1 - Mousepad" {
		t.Errorf("the window named on the spot: %+v\n%s", w, data)
	}
	if ct := files.Scenario.ClickTargets["edit"]; ct.Name != "Edit" || ct.X != 0 || ct.Y != 0 {
		t.Errorf("the click target named on the spot: %+v\n%s", ct, data)
	}
	if steps[3].Args["name"] != "untitled_1_mousepad" || steps[4].Args["target"] != "edit" {
		t.Errorf("steps 4 and 5 do not use the names: %v %v", steps[3].Args, steps[4].Args)
	}
	// The accepted screenshot check's baseline is written beside the
	// scenario, where the replay (which passed) compared the window with it.
	if e := steps[5].Expect; e == nil || e.Screenshot == nil || e.Screenshot.Name != "step6" {
		t.Errorf("step 6's check: %+v\n%s", e, data)
	}
	if _, err := os.Stat(filepath.Join(dir, "new.baselines", "step6.png")); err != nil {
		t.Errorf("the baseline was not written: %v", err)
	}
	wantIn(t, "the recorded scenario", string(data), []string{"# step 2", `# it said: clicked the menu "Edit"`})
}

// accept waits for the proposal whose label holds label and accepts it
// with its digit.
func accept(t *testing.T, term *testkit.Terminal, label string) {
	t.Helper()
	screen := term.Screen(label)
	for _, line := range strings.Split(screen, "\n") {
		if m := regexp.MustCompile(`^([1-9]) \[ \] (.*)$`).FindStringSubmatch(strings.TrimSpace(line)); m != nil && strings.Contains(m[2], label) {
			term.Keys(m[1])
			term.Screen("[x] " + m[2])
			return
		}
	}
	t.Fatalf("no proposal %q to accept:\n%s", label, screen)
}

// TestRecordPageInTmux records against a headless Chromium page: a
// cdp_click whose effect on another element is proposed as its check,
// accepted, and held on the headless replay; --overwrite replaces an
// earlier recording.
func TestRecordPageInTmux(t *testing.T) {
	t.Parallel()
	need(t, "tmux", "chromium")
	dir := t.TempDir()
	page := testkit.WriteFile(t, dir, "page.html", `<!doctype html><title>Page</title><h1 id=status>Waiting</h1>`+
		`<button id=go onclick="document.getElementById('status').textContent='Done, thanks'">Go</button>`)
	src := testkit.WriteFile(t, dir, "src.yaml", "name: page recorded\nbrowser:\n  start_url: file://"+page+
		"\n  headless: true\ncdp_targets:\n  button: \"#go\"\n  status: \"#status\"\n")
	// An earlier recording is there: --overwrite replaces it.
	out := testkit.WriteFile(t, dir, "new.yaml", "an earlier recording\n")
	term := testkit.StartTerminal(t, "record-page", 160, 48, "DISPLAY=", "sh", "-c",
		`"$0" record "$1" --out "$2" --overwrite --graphics none --report "$3" --replay-report "$4"; echo "EXIT=$?"; sleep 3600`,
		kasmrtBinary(t), src, out, filepath.Join(dir, "rec"), filepath.Join(dir, "replay"))
	term.Screen("cdp_click button")
	term.Type("cdp_click button")
	term.Keys("Enter")
	accept(t, term, `the page's status reads "Done, thanks"`)
	term.Keys("Enter")
	term.Screen("step 1 recorded")
	term.Type("finish")
	term.Keys("Enter")
	wantIn(t, "the terminal", term.Screen("EXIT="), []string{"replay passed: pass", "EXIT=0"})
	files, err := scenarios.Load(out, "", nil)
	if err != nil {
		t.Fatalf("the recorded scenario does not load: %v", err)
	}
	st := files.Scenario.Steps
	if len(st) != 1 || st[0].Tool != "cdp_click" || st[0].Expect == nil || st[0].Expect.CDP["status"].TextContains != "Done, thanks" {
		t.Errorf("recorded steps: %+v", st)
	}
}
