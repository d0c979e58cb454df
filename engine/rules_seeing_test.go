package engine

import (
	"fmt"
	"image"
	"image/draw"
	"strings"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/drivers/atspi"
	"github.com/kasmrt/kasmrt/drivers/ocr"
	"github.com/kasmrt/kasmrt/engine/events"
)

// seeingDialog is the double as a question dialog: the question's text
// on the window and two buttons, Yes and No, each labelled on the screen
// and named over AT-SPI.
func seeingDialog(t *testing.T, question string) *fakeMachine {
	t.Helper()
	screen := image.NewRGBA(image.Rect(0, 0, 640, 400))
	draw.Draw(screen, fakeWindowBox(), image.White, image.Point{}, draw.Src)
	maskDrawText(t, screen, image.Pt(40, 70), question)
	maskDrawText(t, screen, image.Pt(66, 221), "Yes")
	maskDrawText(t, screen, image.Pt(170, 221), "No")
	return &fakeMachine{frames: []*image.RGBA{screen},
		controls: []atspi.Control{fakeControl("Yes", "push button", 40, 200), fakeControl("No", "push button", 140, 200)}}
}

// seeingScenario is the dialog's scenario with click targets and steps.
func seeingScenario(targets, steps string) string {
	return "name: rules seeing\napp:\n  command: [fake-app]\nclick_targets:\n" + targets +
		"wait_conditions:\n  question_not_shown: {text_absent: \"Continue the test?\", timeout_s: 2}\n" +
		"  question_shown: {text_visible: \"Continue the test?\", timeout_s: 1}\n" +
		"  saved_shown: {text_visible: \"Saved\", timeout_s: 1}\nsteps:\n" + steps
}

// TestRulesTextAndNameTargets resolves text and name targets on the
// double's dialog: a text target clicks the word OCR reads, a name target
// the control's centre; absence and ambiguity are resolution errors that
// say what was found, a region narrows where text is read, a near target
// picks the nearest reading, and a role narrows the names.
func TestRulesTextAndNameTargets(t *testing.T) {
	t.Parallel()
	scriptNeed(t, ocr.Command)
	yes, no := fakeControl("Yes", "push button", 40, 200).Extents, fakeControl("No", "push button", 140, 200).Extents
	cases := []struct {
		name, question, target string
		bridge                 bool
		status                 events.Status
		message                string
		within                 image.Rectangle
	}{
		{"text", "Continue the test?", `{text: "Yes"}`, true, events.StatusOK, "", yes},
		{"name and role", "Continue the test?", `{name: "No", role: button}`, true, events.StatusOK, "", no},
		{"text absent", "Continue the test?", `{text: "Maybe"}`, true, events.StatusError, `no text "Maybe"; read: `, image.Rectangle{}},
		{"text read three times", "Yes means yes", `{text: "yes"}`, true, events.StatusError, `the text "yes" is read 3 times`, image.Rectangle{}},
		{"text read twice in a region", "Yes means yes", `{text: "yes", within: {x: 0, y: 20, width: 400, height: 60}}`, true, events.StatusError,
			`the text "yes" is read 2 times`, image.Rectangle{}},
		{"a region outside the screen", "Yes means yes", `{text: "yes", within: {x: 700, y: 0, width: 50, height: 50}}`, true, events.StatusError,
			"the region to read is outside the screen", image.Rectangle{}},
		{"text read three times, near a name", "Yes means yes", `{text: "yes", near: yes_control}`, true, events.StatusOK, "", yes},
		{"text read once, near a name not there", "Continue the test?", `{text: "Yes", near: missing_control}`, true, events.StatusOK, "", yes},
		{"text read three times, near a point on its line", "Yes means yes", `{text: "yes", near: line_end}`, true, events.StatusOK, "", image.Rect(120, 50, 175, 80)},
		{"text read three times, near a point", "Yes means yes", `{text: "yes", near: corner}`, true, events.StatusOK, "", image.Rect(20, 20, 420, 100)},
		{"name of another role", "Continue the test?", `{name: "No", role: check box}`, true, events.StatusError,
			`among controls of role "check box"`, image.Rectangle{}},
		{"a name without a bridge", "Continue the test?", `{name: "No"}`, false, events.StatusError,
			"the application's accessible controls are not known: ", image.Rectangle{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := seeingDialog(t, c.question)
			if !c.bridge {
				f.controls = nil
			}
			sc := seeingScenario("  target: "+c.target+"\n  yes_control: {name: \"Yes\", role: button}\n  missing_control: {name: \"Maybe\"}\n  corner: {x: 0, y: 0}\n  line_end: {x: 150, y: 45}\n",
				"  - wait_while: question_not_shown\n  - click: target\n")
			if !strings.Contains(c.question, "Continue") {
				sc = strings.Replace(sc, "  - wait_while: question_not_shown\n", "", 1)
			}
			r := loopRun(t, loopCase{scenario: sc, operator: "runner: {}\n", machine: f})
			st := r.rep.Steps[len(r.rep.Steps)-1]
			if st.Tool != "click" || st.Status != c.status || !strings.Contains(st.Message, c.message) {
				t.Fatalf("click step %s %q, want %s with %q", st.Status, st.Message, c.status, c.message)
			}
			if loopPixelPair.MatchString(st.Message) {
				t.Errorf("the step's message shows pixel coordinates: %q", st.Message)
			}
			ins := f.inputs()
			if c.status != events.StatusOK {
				if len(ins) != 0 {
					t.Errorf("inputs %q after a failed resolution", ins)
				}
				return
			}
			var p image.Point
			if len(ins) != 1 || !fakeClickAt(ins[0], &p) || !p.In(c.within) {
				t.Errorf("inputs %q, want one click within %v", ins, c.within)
			}
		})
	}
}

// fakeClickAt parses a click the double recorded.
func fakeClickAt(in string, p *image.Point) bool {
	var x, y int
	if n, err := fmt.Sscanf(in, "click %d,%d", &x, &y); err != nil || n != 2 {
		return false
	}
	*p = image.Pt(x, y)
	return true
}

// TestRulesTextWaitTimesOutWhileReading: a text condition whose wait
// runs out while the window is being read (a slow screen here, slow OCR
// on a loaded machine) says the condition still holds, as a wait that
// ran out between two readings does — not that reading failed.
func TestRulesTextWaitTimesOutWhileReading(t *testing.T) {
	t.Parallel()
	scriptNeed(t, ocr.Command)
	f := seeingDialog(t, "Continue the test?")
	// Each reading takes 0.4 s of the condition's 1 s, so the time runs
	// out during the third reading at the latest.
	f.captureDelay = 400 * time.Millisecond
	r := loopRun(t, loopCase{scenario: seeingScenario("  unused: {text: Nothing}\n", "  - wait_while: question_shown\n"),
		operator: "runner: {}\n", machine: f})
	if len(r.rep.Steps) != 1 {
		t.Fatalf("steps %+v, want one", r.rep.Steps)
	}
	st := r.rep.Steps[0]
	if st.Status != events.StatusError || !strings.Contains(st.Message, "question_shown still holds after ") {
		t.Errorf("wait_while %s %q, want an error saying question_shown still holds", st.Status, st.Message)
	}
}

// TestRulesTextConditionsAndOCRJudgement: wait_while's text conditions
// read the window, and check_expectation quoting text is judged by OCR
// when there is no model: true when every quoted text is read, a failed
// check when one is not.
func TestRulesTextConditionsAndOCRJudgement(t *testing.T) {
	t.Parallel()
	scriptNeed(t, ocr.Command)
	cases := []struct {
		name, steps string
		status      events.Status
		message     string
	}{
		{"the text is shown", "  - wait_while: question_not_shown\n", events.StatusOK, ""},
		{"the text is not shown", "  - wait_while: saved_shown\n", events.StatusOK, ""},
		{"the text stays shown", "  - wait_while: question_shown\n", events.StatusError, "question_shown still holds after "},
		{"a quoted text read", "  - check_expectation: {expectation: 'the dialog asks \"Continue the test?\" and offers \"No\"'}\n", events.StatusOK,
			`true: judged by OCR: the window shows "Continue the test?" and "No"`},
		{"a quoted text not read", "  - check_expectation: {expectation: 'the dialog says \"Saved\"'}\n", events.StatusError,
			`is false: judged by OCR: the text "Saved" is not read in the window`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := loopRun(t, loopCase{scenario: seeingScenario("  unused: {text: Nothing}\n", c.steps), operator: "runner: {}\n",
				machine: seeingDialog(t, "Continue the test?")})
			if len(r.rep.Steps) != 1 || r.rep.Steps[0].Status != c.status || !strings.Contains(r.rep.Steps[0].Message, c.message) {
				t.Fatalf("steps %+v, want one %s with %q", r.rep.Steps, c.status, c.message)
			}
		})
	}
}
