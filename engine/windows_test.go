package engine

import (
	"fmt"
	"image/color"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
)

// TestQuitAsLastStepNeverRaces quits zenity with its own key (Return
// presses OK) as the last step. Like an app that saves its state on the
// way out, the process outlives its window (by 0.4 s here), so the window
// check may look between the two; with app.expect_exit the run passes.
// TestRulesQuitAsLastStep (on the double) pins each order of the two
// endings; `go test -count=20 -run TestQuitAsLastStepNeverRaces ./engine/`
// repeats this real one.
func TestQuitAsLastStepNeverRaces(t *testing.T) {
	t.Parallel()
	scriptNeed(t, "zenity", "openbox")
	o := scriptRun(t, scriptRunSpec{scenario: `name: quit race
app:
  command: [sh, -c, 'zenity --info --text="Quit me" && sleep 0.4']
  window: {class: zenity}
  expect_exit: {codes: [0], within_s: 10}
steps:
  - observe_screen: {}
  - press_key: Return
`})
	if o.res.Verdict != events.VerdictPass {
		t.Fatalf("verdict %s (%s): %q", o.res.Verdict, o.res.Outcome, o.res.Reasons)
	}
	if c := o.check("expected_exit"); c == nil || !c.OK {
		t.Fatalf("expected_exit check %+v", c)
	}
}

// TestExpectExit covers the endings app.expect_exit decides: an app that
// exits as expected passes and its checks still run afterwards; one that
// keeps running, or exits with another code, fails the run.
func TestExpectExit(t *testing.T) {
	t.Parallel()
	scriptNeed(t, "zenity", "openbox")
	cases := []struct {
		name, command, steps string
		verdict              events.Verdict
		outcome              events.Outcome
		evidence             string
	}{
		{name: "exits and is checked after", command: "[sh, -c, 'zenity --question --text=Go; echo $? > answer.txt']",
			steps:   "  - observe_screen: {}\n  - press_key: Return\n  - wait_while: answering\n  - answered: {}\n",
			verdict: events.VerdictPass, outcome: OutcomeCompleted, evidence: "exited with status 0"},
		{name: "keeps running", command: "[zenity, --info, --text=Stay]",
			steps:   "  - observe_screen: {}\n",
			verdict: events.VerdictAppFailed, outcome: OutcomeCompleted, evidence: "still running 1s after the last step"},
		// The wait lets the process end within the steps: the dialog is
		// gone, and the step settled, a moment before zenity exits.
		{name: "exits with another code", command: "[zenity, --question, --text=No]",
			steps:   "  - observe_screen: {}\n  - press_key: Escape\n  - wait: 1\n",
			verdict: events.VerdictAppFailed, outcome: OutcomeAppExited, evidence: "expects exit codes [0]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			o := scriptRun(t, scriptRunSpec{scenario: `name: expect exit
app:
  command: ` + c.command + `
  window: {class: zenity}
  expect_exit: {codes: [0], within_s: 1}
wait_conditions:
  answering: {file_missing: answer.txt, timeout_s: 10}
tools:
  answered:
    run: shell
    command: grep -qx 0 answer.txt
steps:
` + c.steps})
			o.want(t, c.verdict, c.outcome)
			ch := o.check("expected_exit")
			if ch == nil || !strings.Contains(ch.Evidence, c.evidence) {
				t.Errorf("expected_exit check %+v, want evidence with %q", ch, c.evidence)
			}
		})
	}
}

// TestSwitchWindow names a dialog the app opens: switch_window waits for
// it and gives it the focus, so the keys typed next reach it, and a name
// whose window never opens fails with the windows there are.
func TestSwitchWindow(t *testing.T) {
	t.Parallel()
	scriptNeed(t, "xterm", "zenity", "openbox")
	o := scriptRun(t, scriptRunSpec{scenario: `name: switch window
app:
  command: [xterm, -class, KasmMain, -T, kasm main, -e, sh, -c,
    'zenity --entry --title="Kasm Prompt" --text=Name > entry.tmp; mv entry.tmp entry.txt; exec sleep 3600']
  window: {class: KasmMain}
windows:
  prompt: {title: Kasm Prompt}
  missing: {title: Never Opens}
provides:
  name: Grace
wait_conditions:
  answering: {file_missing: entry.txt, timeout_s: 10}
steps:
  - switch_window: prompt
  - observe_screen: {}
  - type_text: name
  - press_key: Return
  - wait_while: answering
  - entered: {}
  - switch_window: missing
tools:
  entered:
    run: shell
    command: grep -qx Grace entry.txt
`})
	o.want(t, events.VerdictTestError, OutcomeStepError, "step 7 (switch_window)")
	for n := 1; n <= 6; n++ {
		if s := o.step(t, n); s.Status != events.StatusOK {
			t.Errorf("step %d (%s): %s %s", n, s.Tool, s.Status, s.Message)
		}
	}
	if msg := o.step(t, 2).Message; !strings.Contains(msg, `"Kasm Prompt" (focused)`) || !strings.Contains(msg, `"kasm main"`) {
		t.Errorf("observe_screen does not list the app's windows with the focused one: %q", msg)
	}
	if msg := o.step(t, 7).Message; !strings.Contains(msg, `title containing "Never Opens"`) || !strings.Contains(msg, `"kasm main"`) {
		t.Errorf("a missing window's failure should say what was looked for and what is open: %q", msg)
	}
	if !strings.Contains(strings.Join(o.rep.Tools, ","), "switch_window") {
		t.Errorf("switch_window is not on the tool list %v", o.rep.Tools)
	}
}

// TestIsolatedEnvironment checks what the app and the declared tools see:
// a HOME, XDG directories, TMPDIR and a session bus of the run's own, none
// of them the runtime's: the home under the report directory, the runtime
// and temporary directories short (they hold sockets) and gone at the end.
func TestIsolatedEnvironment(t *testing.T) {
	t.Parallel()
	scriptNeed(t, "xterm", "openbox", "dbus-daemon")
	vars := []string{"HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR", "TMPDIR"}
	var script strings.Builder
	for _, v := range vars {
		script.WriteString(`echo ` + v + `=$` + v + ` >> env.txt; `)
	}
	script.WriteString(`echo DBUS=$DBUS_SESSION_BUS_ADDRESS >> env.txt; exec sleep 3600`)
	o := scriptRun(t, scriptRunSpec{scenario: `name: isolated
app:
  command: [xterm, -class, KasmIso, -e, sh, -c, '` + script.String() + `']
  window: {class: KasmIso}
tools:
  tool_home:
    run: shell
    command: 'echo "TOOL_HOME=$HOME" >> env.txt'
steps:
  - tool_home: {}
`})
	o.want(t, events.VerdictPass, OutcomeCompleted)
	b, err := os.ReadFile(filepath.Join(o.info.dir, "env.txt"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		k, v, _ := strings.Cut(line, "=")
		got[k] = v
	}
	for _, v := range vars {
		switch v {
		case "XDG_RUNTIME_DIR", "TMPDIR":
			if !strings.HasPrefix(got[v], filepath.Join(os.TempDir(), "kasmrt-run-")) || len(got[v]) > 40 {
				t.Errorf("%s = %q, want a short directory of the run's own", v, got[v])
			}
			if _, err := os.Stat(got[v]); !os.IsNotExist(err) {
				t.Errorf("%s %s outlived the run (%v)", v, got[v], err)
			}
		default:
			if !strings.HasPrefix(got[v], o.info.reportDir+"/") || got[v] == os.Getenv(v) {
				t.Errorf("%s = %q, want a directory of the run's own under %s", v, got[v], o.info.reportDir)
			}
		}
	}
	if got["TOOL_HOME"] != got["HOME"] {
		t.Errorf("the declared tool's HOME %q is not the app's %q", got["TOOL_HOME"], got["HOME"])
	}
	if got["DBUS"] == "" || got["DBUS"] == os.Getenv("DBUS_SESSION_BUS_ADDRESS") {
		t.Errorf("DBUS_SESSION_BUS_ADDRESS = %q, want a bus of the run's own", got["DBUS"])
	}
	if _, err := os.Stat(filepath.Join(o.info.reportDir, "home", ".config")); err != nil {
		t.Errorf("the run's HOME is not kept with the report: %v", err)
	}
}

// latePainter builds the test app that maps its window late and paints it
// later still (testdata/latepaint).
var latePainter = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "kasmrt-latepaint")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "latepaint")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/latepaint").CombinedOutput(); err != nil {
		return "", fmt.Errorf("build latepaint: %v\n%s", err, out)
	}
	return bin, nil
})

// TestObserveAfterLatePaint observes the screen as the first step, right
// after the window appears: the window mapped late and stayed black for
// a second and a half before painting, and the run waited for the paint,
// so the screen observed shows the painted window, not a black frame.
func TestObserveAfterLatePaint(t *testing.T) {
	t.Parallel()
	scriptNeed(t, "openbox")
	bin, err := latePainter()
	if err != nil {
		t.Fatal(err)
	}
	o := scriptRun(t, scriptRunSpec{scenario: `name: late paint
app:
  command: [` + bin + `]
  env: {LATEPAINT_MAP_MS: "500", LATEPAINT_PAINT_MS: "1500"}
  window: {class: LatePaint}
  startup_timeout_s: 10
steps:
  - observe_screen: {}
`})
	o.want(t, events.VerdictPass, OutcomeCompleted)
	box := o.window(t)
	img := readScreen(t, filepath.Join(o.info.reportDir, o.step(t, 1).Screen))
	colours := map[color.RGBA]bool{}
	for y := box.Y; y < box.Y+box.H; y += 4 {
		for x := box.X; x < box.X+box.W; x += 4 {
			colours[color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)] = true
		}
	}
	if len(colours) < 2 {
		t.Errorf("the window observed first is blank (%v): the run did not wait for it to paint", colours)
	}
}

// TestSessionHomeOverride keeps one HOME across runs with session.home:
// the second run finds what the first left there, and with isolate: false
// the app and its tools have the runtime's own HOME.
func TestSessionHomeOverride(t *testing.T) {
	t.Parallel()
	scriptNeed(t, "xterm", "openbox", "dbus-daemon")
	home := t.TempDir()
	const scenario = `name: shared home
app:
  command: [xterm, -class, KasmHome]
  window: {class: KasmHome}
tools:
  leave_mark:
    run: shell
    command: 'touch "$HOME/mark"'
  mark_seen:
    run: shell
    command: 'test -e "$HOME/mark"'
  tell_home:
    run: shell
    command: 'echo "$HOME" > home.txt'
`
	shared := "session:\n  home: " + home + "\n"
	scriptRun(t, scriptRunSpec{scenario: scenario + "steps:\n  - leave_mark: {}\n", operator: shared})
	o := scriptRun(t, scriptRunSpec{scenario: scenario + "steps:\n  - mark_seen: {}\n", operator: shared})
	o.want(t, events.VerdictPass, OutcomeCompleted)

	o = scriptRun(t, scriptRunSpec{scenario: scenario + "steps:\n  - tell_home: {}\n", operator: "session:\n  isolate: false\n"})
	b, err := os.ReadFile(filepath.Join(o.info.dir, "home.txt"))
	if want, _ := os.UserHomeDir(); err != nil || strings.TrimSpace(string(b)) != want {
		t.Errorf("with isolate: false the tool's HOME is %q (%v), want the runtime's %q", b, err, want)
	}
	if _, err := os.Stat(filepath.Join(o.info.reportDir, "home")); !os.IsNotExist(err) {
		t.Errorf("with isolate: false the run still made a home (%v)", err)
	}
}
