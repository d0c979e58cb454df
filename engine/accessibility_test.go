package engine

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
)

// TestClickElement drives zenity through its accessible controls on a
// session bus the run starts itself.
func TestClickElement(t *testing.T) {
	t.Parallel()
	scriptNeed(t, "zenity", "dbus-daemon")
	const zenity = "name: a11y\napp:\n  command: [zenity, --question, \"--text=Proceed?\"]\n  success_exit_codes: [0]\n"
	cases := []struct {
		name, control string
		verdict       events.Verdict
		outcome       events.Outcome
		message       string
	}{
		{"yes ends the app successfully", "Yes", events.VerdictPass, OutcomeCompleted, `clicked the push button "Yes" with the pointer at its centre`},
		{"no is a failing exit", "No", events.VerdictAppFailed, OutcomeAppExited, `clicked the push button "No"`},
		{"unknown control", "Maybe", events.VerdictTestError, OutcomeStepError, "Yes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			o := scriptRun(t, scriptRunSpec{scenario: zenity + "steps:\n  - observe_screen: {}\n  - click_element: {name: " + c.control + "}\n"})
			o.want(t, c.verdict, c.outcome)
			if s := o.step(t, 2); !strings.Contains(s.Message, c.message) {
				t.Errorf("step 2: %s %q, want it to mention %q", s.Status, s.Message, c.message)
			}
			if !slices.Contains(o.rep.Tools, "click_element") {
				t.Errorf("the tool list %v lacks click_element though zenity publishes controls", o.rep.Tools)
			}
		})
	}
}

// TestClickElementWithoutControls: xterm publishes no controls, so
// click_element is not on the list and a scripted call cannot resolve.
func TestClickElementWithoutControls(t *testing.T) {
	t.Parallel()
	o := scriptRun(t, scriptRunSpec{scenario: "name: no a11y\napp:\n  command: [xterm, -e, sleep, 3600]\nsteps:\n  - click_element: {name: OK}\n"})
	o.want(t, events.VerdictTestError, OutcomeStepError)
	if s := o.step(t, 1); s.Status != events.StatusMalformed && s.Status != events.StatusError {
		t.Errorf("step 1: %s %q", s.Status, s.Message)
	}
	if slices.Contains(o.rep.Tools, "click_element") {
		t.Errorf("click_element offered for xterm: %v", o.rep.Tools)
	}
}

// toolsEvents returns the tools events of a run, in order.
func (o scriptOutcome) toolsEvents() []events.Event {
	var out []events.Event
	for _, e := range o.events {
		if e.Kind == events.KindTools {
			out = append(out, e)
		}
	}
	return out
}

// TestClickElementAcrossToolkits drives a Debian application of each
// toolkit by accessible names, clicked with the pointer, found by asking the accessibility registry,
// and checks what the clicks did with a declared tool: Qt 5 (published
// because the runtime sets QT_LINUX_ACCESSIBILITY_ALWAYS_ON) and Chromium
// (ACCESSIBILITY_ENABLED from the runtime, --force-renderer-accessibility
// from the command). GTK 3 is TestClickElement's zenity; GTK 4 (its own
// AT-SPI backend, no atk-bridge) is the gnome-calculator example of
// TestGalleryExamples, the same clicks and clipboard check.
func TestClickElementAcrossToolkits(t *testing.T) {
	t.Parallel()
	const sumIsNine = "tools:\n  result_is:\n    run: shell\n    parameters:\n      value:\n        values: {nine: 'xclip -o -selection clipboard > clipboard.txt; test \"$(cat clipboard.txt)\" = 9'}\n    timeout_s: 5\n"
	cases := []struct {
		name    string
		bins    []string
		app     string
		steps   []string
		tools   string
		toolkit string
	}{
		{
			name: "qt5 speedcrunch",
			bins: []string{"speedcrunch", "xclip"},
			// speedcrunch keeps its settings (the keypad shown or not) in
			// HOME: a fresh one makes every run start alike.
			app: "  command: [speedcrunch]\n  window: {class: speedcrunch}\n  env: {HOME: $DIR}\n",
			steps: []string{"click_element: {name: View}", "click_element: {name: Keypad}",
				"click_element: {name: \"7\"}", "click_element: {name: \"+\"}", "click_element: {name: \"2\"}", "click_element: {name: \"=\"}",
				"click_element: {name: Edit}", "click_element: {name: Copy Last Result}", "result_is: {value: nine}"},
			tools:   sumIsNine,
			toolkit: "Qt 5",
		},
		{
			// GTK 4 reports each control's place relative to its window,
			// even on X11: the stage moves it onto the screen, so the
			// pointer presses the same button twice (its accessibility
			// action dropped the second press).
			name: "gtk4 calculator",
			bins: []string{"gnome-calculator", "xclip", "tesseract"},
			app:  "  command: [gnome-calculator]\n  window: {class: gnome-calculator}\n  startup_timeout_s: 30\n",
			steps: []string{"click_element: {name: \"7\"}", "click_element: {name: \"7\"}", "click_element: {name: \"+\"}",
				"click_element: {name: \"7\"}", "click_element: {name: \"7\"}", "click_element: {name: \"=\"}",
				"wait_while: {condition: no_result}", "press_key: ctrl+c", "result_is: {value: sum}"},
			tools: "tools:\n  result_is:\n    run: shell\n    parameters:\n      value:\n        values: {sum: 'xclip -o -selection clipboard > clipboard.txt; test \"$(cat clipboard.txt)\" = 154'}\n    timeout_s: 5\n" +
				"wait_conditions:\n  no_result:\n    text_absent: \"154\"\n    timeout_s: 10\n",
			toolkit: "GTK 4",
		},
		{
			// Chromium's singleton socket must fit a unix socket path: the
			// run's own TMPDIR under a test's report directory is too long.
			name: "chromium app window",
			bins: []string{"chromium", "xwininfo"},
			app: "  command: [chromium, --no-sandbox, --disable-gpu, --no-first-run, --disable-background-networking, --disable-component-update, --disable-sync,\n" +
				"    --force-renderer-accessibility, --user-data-dir=$DIR/profile,\n" +
				"    \"--app=data:text/html,<title>Probe</title><button onclick=\\\"document.title='Pressed'\\\">Press me</button>\"]\n" +
				"  window: {class: chromium}\n  env: {TMPDIR: /tmp}\n  startup_timeout_s: 30\n",
			steps:   []string{"click_element: {name: Press me}", "title_is: {value: pressed}"},
			tools:   "tools:\n  title_is:\n    run: shell\n    parameters:\n      value:\n        values: {pressed: 'for i in 1 2 3 4 5 6 7 8 9 10; do xwininfo -root -tree | grep -q \"\\\"Pressed\\\"\" && exit 0; sleep 0.2; done; exit 1'}\n    timeout_s: 5\n",
			toolkit: "Chromium",
		},
	}
	// One application at a time: three toolkits walking their trees on two
	// busy cores at once slow each walk past click_element's bound.
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			scriptNeed(t, append(c.bins, "dbus-daemon")...)
			scenario := "name: " + c.name + "\napp:\n" + c.app + "steps:\n  - " + strings.Join(c.steps, "\n  - ") + "\n" + c.tools
			o := scriptRun(t, scriptRunSpec{scenario: scenario})
			o.want(t, events.VerdictPass, OutcomeCompleted)
			if !slices.Contains(o.rep.Tools, "click_element") {
				t.Errorf("the tool list %v lacks click_element", o.rep.Tools)
			}
			tools := o.toolsEvents()
			if len(tools) == 0 || !strings.Contains(tools[0].Message, "("+c.toolkit) {
				t.Errorf("tools events %+v do not name the toolkit %q", tools, c.toolkit)
			}
			for i := range c.steps {
				s := o.step(t, i+1)
				if s.Status != events.StatusOK {
					clip, _ := os.ReadFile(filepath.Join(o.info.dir, "clipboard.txt"))
					t.Errorf("step %d %s: %s %q (clipboard %q)", i+1, s.Tool, s.Status, s.Message, clip)
				}
				// Menus and their items too: the pointer reaches every
				// control these toolkits show.
				if s.Tool == "click_element" && !strings.Contains(s.Message, "with the pointer at its centre") {
					t.Errorf("step %d: %q, want the control clicked with the pointer", i+1, s.Message)
				}
			}
		})
	}
}

// TestNoClickElementSaysWhy: when the run offers no click_element, the
// tools event says why (it reaches the headless output and the console),
// and a scripted click_element step fails with the same reason. An app
// that registers but shows no controls (Chromium without
// --force-renderer-accessibility) must be waited out for its whole startup
// timeout, so that case is TestRulesNoControlsSaysWhy's, on the double.
func TestNoClickElementSaysWhy(t *testing.T) {
	t.Parallel()
	const step = "steps:\n  - click_element: {name: OK}\n"
	cases := []struct {
		name     string
		bins     []string
		scenario string
		operator string
		env      map[string]string
		reason   string
	}{
		{
			name:     "no accessibility bridge",
			bins:     []string{"xterm"},
			scenario: "name: xterm\napp:\n  command: [xterm, +ls, -e, sleep, 3600]\n" + step,
			reason:   "did not connect to the accessibility bus within 300ms (nor to the session bus",
		},
		{
			name:     "accessibility off",
			bins:     []string{"zenity"},
			scenario: "name: off\napp:\n  command: [zenity, --info, --text=Hi]\n" + step,
			operator: "session:\n  accessibility: false\n",
			reason:   "accessibility is off (session.accessibility: false)",
		},
		{
			// An isolated run has a session bus of its own; one that shares
			// the runtime's depends on it.
			name:     "bus not running",
			bins:     []string{"zenity"},
			scenario: "name: no bus\napp:\n  command: [zenity, --info, --text=Hi]\n" + step,
			operator: "session:\n  isolate: false\n",
			env:      map[string]string{"DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/kasmrt-test-bus"},
			reason:   "the accessibility bus is not running",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			scriptNeed(t, append(c.bins, "dbus-daemon")...)
			o := scriptRun(t, scriptRunSpec{scenario: c.scenario, operator: c.operator, env: c.env})
			o.want(t, events.VerdictTestError, OutcomeStepError)
			if slices.Contains(o.rep.Tools, "click_element") {
				t.Errorf("click_element offered: %v", o.rep.Tools)
			}
			tools := o.toolsEvents()
			if len(tools) != 1 {
				t.Fatalf("%d tools events, want 1 saying why: %+v", len(tools), tools)
			}
			d, _ := tools[0].Data.(events.ToolList)
			why := d.NoClickElement
			if !strings.Contains(why, c.reason) || !strings.HasPrefix(tools[0].Message, "click_element is not offered: ") ||
				!strings.Contains(tools[0].Message, c.reason) {
				t.Errorf("tools event %q (no_click_element %q), want the reason %q", tools[0].Message, why, c.reason)
			}
			if s := o.step(t, 1); !strings.Contains(s.Message, "click_element is not offered: ") || !strings.Contains(s.Message, c.reason) {
				t.Errorf("step 1: %s %q, want the reason %q", s.Status, s.Message, c.reason)
			}
		})
	}
}
