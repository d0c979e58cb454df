package engine

import (
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
)

// seeingZenity is a zenity question whose question text, TEXT, a step
// waits to be read before it clicks TARGET.
const seeingZenity = `name: zenity targets
app:
  command: [zenity, --question, "--title=Proceed?", "--text=TEXT", --width=320]
  env: {GSETTINGS_BACKEND: memory}
  window: {pid: true, title: "Proceed?"}
  startup_timeout_s: 15
  success_exit_codes: [0]
click_targets:
  TARGETS
wait_conditions:
  question_not_shown: {text_absent: "TEXT", timeout_s: 20}
steps:
  - wait_while: question_not_shown
  - click: target
`

// Text and name targets resolve on a real GTK dialog to the control a
// person means, and absence and ambiguity are resolution errors that list
// what was found, without pixel coordinates.
func TestTextAndNameTargets(t *testing.T) {
	t.Parallel()
	scriptNeed(t, "Xvfb", "zenity", "tesseract", "dbus-daemon")
	tests := []struct {
		name, text, target string
		verdict            events.Verdict
		outcome            events.Outcome
		reasons            []string
	}{
		// No exits 1 and Yes 0: the status says which button was clicked.
		{"name and role", "Continue the test?", `{name: "No", role: button}`,
			events.VerdictAppFailed, OutcomeAppExited, []string{"exited with status 1"}},
		{"text", "Continue the test?", `{text: "Yes"}`,
			events.VerdictPass, OutcomeCompleted, nil},
		{"text absent", "Continue the test?", `{text: "Maybe"}`,
			events.VerdictTestError, OutcomeStepError, []string{`no text "Maybe"; read: `, "Continue the test?"}},
		{"text read twice", "Yes means yes", `{text: "yes", within: {x: 0, y: 0, width: 400, height: 300}}`,
			events.VerdictTestError, OutcomeStepError, []string{`the text "yes" is read 3 times`, "narrow the target"}},
		{"text read three times, near a name", "Yes means yes", `{text: "yes", near: yes_control}`,
			events.VerdictPass, OutcomeCompleted, nil},
		{"name of another role", "Continue the test?", `{name: "No", role: check box}`,
			events.VerdictTestError, OutcomeStepError, []string{`among controls of role "check box"`, `no control named "No"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sc := strings.ReplaceAll(seeingZenity, "TEXT", tt.text)
			sc = strings.Replace(sc, "TARGETS", "target: "+tt.target+"\n  yes_control: {name: \"Yes\", role: button}", 1)
			if tt.verdict == events.VerdictPass || tt.outcome == OutcomeAppExited {
				// Pressing Yes or No ends zenity; wait for that exit rather
				// than race it with the final checks, which on a busy
				// machine can see the window gone before the process.
				sc = strings.Replace(sc, "success_exit_codes: [0]", "expect_exit: {codes: [0]}", 1)
			}
			o := scriptRun(t, scriptRunSpec{scenario: sc})
			outcome := tt.outcome
			if tt.outcome == OutcomeAppExited && o.res.Outcome == OutcomeCompleted {
				// The exit can come after the click's step has ended;
				// expect_exit then judges it once the steps are done.
				outcome = OutcomeCompleted
			}
			o.want(t, tt.verdict, outcome, tt.reasons...)
			if tt.verdict == events.VerdictPass && !strings.Contains(o.rep.Checks.Evidence["expected_exit"], "status 0") {
				t.Errorf("expected_exit evidence %q: the click did not press Yes", o.rep.Checks.Evidence["expected_exit"])
			}
			for _, s := range o.rep.Steps {
				if loopPixelPair.MatchString(s.Message) {
					t.Errorf("step %d's message shows pixel coordinates: %q", s.N, s.Message)
				}
			}
		})
	}
}

// With the model unavailable, a check_expectation that quotes text is judged by
// reading the window; one that quotes nothing stays unjudged, a concern
// (TestRulesUnquotedExpectationNeedsTheModel, on the double).
func TestCheckExpectationByOCR(t *testing.T) {
	t.Parallel()
	scriptNeed(t, "Xvfb", "zenity", "tesseract")
	// The model's endpoint refuses every connection: the model is
	// unavailable.
	const unreachable = "model:\n  endpoint: http://127.0.0.1:9/v1\n  retry: 0\n  timeout: 2\n"
	tests := []struct {
		name, expectation string
		operator          string
		verdict           events.Verdict
		outcome           events.Outcome
		message           string
	}{
		{"quoted text shown", `the dialog asks “Continue the test?”`, unreachable, events.VerdictPass, OutcomeCompleted,
			`true: judged by OCR: the window shows "Continue the test?"`},
		{"quoted text not shown", `the dialog says "Saved"`, unreachable, events.VerdictAppFailed, OutcomeStepFailed,
			`is false: judged by OCR: the text "Saved" is not read in the window`},
		// With no model configured at all the check is still on the
		// script's tool list and judged.
		{"quoted text shown, no model configured", `the dialog asks "Continue the test?"`, "", events.VerdictPass, OutcomeCompleted,
			`true: judged by OCR: the window shows "Continue the test?"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sc := strings.ReplaceAll(seeingZenity, "TEXT", "Continue the test?")
			sc = strings.Replace(sc, "TARGETS", "unused: {text: Nothing}", 1)
			sc = strings.Replace(sc, "  - click: target\n", "  - check_expectation: {expectation: '"+tt.expectation+"'}\n", 1)
			o := scriptRun(t, scriptRunSpec{scenario: sc, operator: tt.operator})
			o.want(t, tt.verdict, tt.outcome)
			if s := o.step(t, 2); !strings.Contains(s.Message, tt.message) {
				t.Errorf("check step %s %q, want %q", s.Status, s.Message, tt.message)
			}
		})
	}
}
