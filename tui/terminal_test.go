package tui

import (
	"errors"
	"fmt"
	"image"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/internal/testkit"
)

// TestReplayInTmux runs the built kasmrt replay in a real terminal (tmux),
// sends keys and reads the screen back with capture-pane.
func TestReplayInTmux(t *testing.T) {
	t.Parallel()
	testkit.Need(t, "tmux")
	bin := kasmrt.Path(t)
	dir := t.TempDir()
	evs := sampleEvents()
	writeReport(t, dir, evs, true)
	term := testkit.StartTerminal(t, "console", 120, 40, bin, "replay", dir, "--graphics", "blocks")
	at := func(i int) string { return fmt.Sprintf("event %d/%d", i+1, len(evs)) }
	var refusals []int
	for i, e := range evs {
		if isRefusal(e) {
			refusals = append(refusals, i)
		}
	}
	last := at(len(evs) - 1)
	term.Screen(last)
	term.Screen("pass-with-concerns (completed)")
	steps := []struct{ keys, want string }{
		{"<", at(0)},
		{"r", at(refusals[0])},
		{"r", at(refusals[1])},
		{"g", "grounding step 4 attempt 1"},
		{"b", "before | after"},
		{"f", "timeline · refusals only"},
		{"?", "alt+hjkl"},
		{"Escape", "timeline · refusals only"},
		{"End", last},
	}
	for _, s := range steps {
		term.Keys(s.keys)
		term.Screen(s.want)
	}
	term.Keys("q")
	term.WaitExit("q")
}

// TestReplayMouseInTmux drives the built kasmrt replay in a real terminal
// with the mouse as a terminal reports it (SGR mouse sequences) and with
// the keys of the detail and why views and the failed-step jump.
func TestReplayMouseInTmux(t *testing.T) {
	t.Parallel()
	testkit.Need(t, "tmux")
	bin := kasmrt.Path(t)
	dir := t.TempDir()
	writeWhyReport(t, dir)
	const cols, rows = 120, 40
	term := testkit.StartTerminal(t, "console", cols, rows, bin, "replay", dir, "--graphics", "blocks")
	term.Screen("pass-with-concerns")
	// The console asked the terminal for clicks and the wheel in SGR form,
	// and not for every movement of the pointer.
	if out, err := term.Run("display", "-p", "-t", "console", "#{mouse_button_flag} #{mouse_all_flag} #{mouse_sgr_flag}"); err != nil || strings.TrimSpace(out) != "1 0 1" {
		t.Fatalf("mouse modes (button, all motion, SGR) = %q (%v), want 1 0 1", out, err)
	}
	timeline := inner(computeLayout(layoutInput{Width: cols, Height: rows}).Timeline)
	// A click on step 3's row (the fourth) moves the replay there; a
	// second click opens its detail.
	term.Mouse(0, timeline.Min.X+5, timeline.Min.Y+3)
	term.Screen("event 23/56")
	term.Mouse(0, timeline.Min.X+5, timeline.Min.Y+3)
	term.Screen("─step 3─")
	term.Screen("observed the screen (640x400)")
	// The wheel over the timeline moves a row at a time.
	term.Mouse(65, timeline.Min.X+5, timeline.Min.Y+3)
	term.Screen("─step 4─")
	term.Keys("w")
	term.Screen("why · turn 4")
	term.Screen("The prompt is there; typing the greeting.")
	term.Keys("e")
	term.Screen("why · turn 5")
	term.Screen("user: Operator note: the prompt")
	term.Keys("Escape")
	term.Screen("─verdict─")
	term.Keys("Escape")
	term.WaitExit("esc with no detail open")
}

// TestReplayCommand checks --print and the exit code for a bad report
// directory.
func TestReplayCommand(t *testing.T) {
	t.Parallel()
	bin := kasmrt.Path(t)
	dir := t.TempDir()
	evs := sampleEvents()
	writeReport(t, dir, evs, false)
	// Tear the last line, as a killed run leaves it.
	path := filepath.Join(dir, "events.jsonl")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data[:len(data)-20], 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "replay", dir, "--print").Output()
	if err != nil {
		t.Fatalf("replay --print: %v", err)
	}
	for _, want := range []string{
		`step 1 click {"target":"center"} → REFUSED`,
		"call observe_screen (or check_expectation) first",
		`step 2 clik {"target":"center"} → MALFORMED`,
		`grounding step 4 attempt 1: "the terminal window"`,
		"QUESTION q1: Which greeting should I type?",
		"answer q1 by console: the provided one",
		"operator pause",
		`CONCERN: the grounded click on "the terminal window" is unverified`,
		"model says: The greeting is printed.",
		"verdict pass-with-concerns (completed)",
		"iterations           11/25",
		// model.request's size, which the transcript once read under a
		// key no producer wrote.
		requestLine(t, evs, 4),
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("transcript lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "run ended") {
		t.Error("the torn last line (run.ended) was not dropped")
	}
	for _, args := range [][]string{
		{"replay", filepath.Join(dir, "missing"), "--print"},
		{"replay", t.TempDir(), "--print"}, // no events.jsonl
		{"replay", dir, "--graphics", "holograms"},
	} {
		err := exec.Command(bin, args...).Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 3 {
			t.Errorf("kasmrt %s: %v, want exit 3", strings.Join(args, " "), err)
		}
	}
}

// TestReplaySixelInXterm runs kasmrt replay --graphics sixel in an xterm
// with sixel graphics (VT340 emulation) on a real Xvfb and checks, with the
// runtime's own X11 capture, that the screen pane shows the image: many
// colours where a text pane would show two or three.
func TestReplaySixelInXterm(t *testing.T) {
	t.Parallel()
	xt := startSixelXterm(t, "120x40+0+0", "XTerm")
	// The screen pane starts at cell (3, 2); with the 6×13 "fixed" font a
	// region of 40×10 cells inside it is 240×130 pixels.
	xt.waitImage(t, "the screen pane", image.Rect(2*6, 3*13, 2*6+240, 3*13+130), 24)
}

// requestLine is the transcript's line for the model request of turn n,
// with the size the recorded event carries (which must be there).
func requestLine(t *testing.T, evs []events.Event, turn int) string {
	t.Helper()
	for _, e := range evs {
		if d, ok := e.Data.(events.ModelRequest); ok && d.Iteration == turn {
			if d.ImageBytes == 0 || d.Messages == 0 {
				t.Fatalf("turn %d's request carries no size: %+v", turn, d)
			}
			return fmt.Sprintf("model request: turn %d, %d messages, %d images (%d bytes)", turn, d.Messages, d.Images, d.ImageBytes)
		}
	}
	t.Fatalf("no model.request for turn %d", turn)
	return ""
}

// TestLiveInspectInTmux runs a real scripted run (xterm in its own Xvfb)
// under `kasmrt run --tui` in a real terminal and, while a step is still
// running, selects the step before it: the console shows that step's
// screen and detail and marks itself inspecting, the run goes on, and G
// follows it again.
func TestLiveInspectInTmux(t *testing.T) {
	t.Parallel()
	testkit.Need(t, "tmux")
	testkit.Need(t, "Xvfb")
	testkit.Need(t, "xterm")
	bin := kasmrt.Path(t)
	dir := t.TempDir()
	scenario := filepath.Join(dir, "inspect.yaml")
	if err := os.WriteFile(scenario, []byte("name: inspect live\napp:\n  command: [xterm, -e, sleep, 3600]\nsteps:\n  - observe_screen: {}\n  - wait: 20\n  - observe_screen: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	term := testkit.StartTerminal(t, "console", 120, 40, "DISPLAY=", bin, "run", scenario, "--tui", "--graphics", "blocks", "--report", filepath.Join(dir, "report"))
	term.Screen("2 wait")
	term.Screen("following")
	term.Keys("k")
	term.Screen("INSPECTING")
	term.Screen("step 1 · screen")
	term.Keys("Enter")
	term.Screen("─step 1─")
	term.Screen("observed the screen")
	// The wait is still running behind the inspected step.
	if out := term.Screen("2 wait"); !strings.Contains(out, "running") {
		t.Fatalf("the run's current step is not shown running while a past one is inspected:\n%s", out)
	}
	term.Keys("G")
	term.Screen("following")
	term.Keys("x")
	term.Screen("abort the run?")
	term.Keys("y")
	term.Screen("test-error (aborted)")
	term.Keys("q")
	term.WaitExit("q after the verdict")
}
