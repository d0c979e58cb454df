package engine

import (
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
		name, control    string
		verdict, outcome string
		message          string
	}{
		{"yes ends the app successfully", "Yes", events.VerdictPass, OutcomeCompleted, `clicked the push button "Yes" through its accessibility action`},
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
