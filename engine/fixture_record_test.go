package engine

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
	mt "github.com/kasmrt/kasmrt/engine/model/modeltest"
	"github.com/kasmrt/kasmrt/inbox"
)

// recordedRunDir is where the console's and the transcript's tests read
// their recorded run from.
const recordedRunDir = "../tui/testdata/recorded-run"

// recordedScenario is loopXterm with the 256-colour palette painted in
// the terminal first, so the screens are images with many colours (the
// sixel test in the console's package tells an image from text that way).
const recordedScenario = `name: loop xterm
app:
  command: [xterm, -geometry, 60x12+20+20, -e, sh, -c, 'i=0; while [ $i -lt 256 ]; do printf "\033[48;5;%dm  " $i; i=$((i+1)); done; printf "\033[0m\n"; exec sh']
goal: Print the greeting in the terminal.
plan:
  - Observe the screen.
  - Type the greeting with type_text.
  - Press Return.
provides:
  greeting: echo hello
`

// TestRecordConsoleFixture records the run the console's golden files and
// the transcript's tests are made from: a real goal run against xterm in an
// embedded Xvfb, with the model test server scripting one of everything
// the console shows — a refusal, a malformed call, a grounded click whose
// judge is unavailable (a concern), a question answered while the operator
// pauses, a message to the operator and the model's verdict. Regenerate
// the recording, then the golden files, with
//
//	KASMRT_RECORD_FIXTURE=1 go test -count=1 -run TestRecordConsoleFixture ./engine/
//	go test -count=1 ./tui/ -update
func TestRecordConsoleFixture(t *testing.T) {
	if os.Getenv("KASMRT_RECORD_FIXTURE") == "" {
		t.Skip("records tui/testdata/recorded-run only when KASMRT_RECORD_FIXTURE is set")
	}
	op := loopOp("  respond: true\n", "  profile: openai-compatible\n") +
		"inbox:\n  session_token: local-console\n  answer_timeout_s: 10\n"
	script := []mt.Exchange{
		mt.Call("click", `{"target": "center"}`),
		mt.Call("clik", `{"target": "center"}`),
		loopObserve,
		mt.Call("click_grounded", `{"description": "the terminal window", "expect": "the terminal has focus"}`),
		mt.Func(loopLocateCentre(t, false)),
		mt.Text("It probably worked."),
		mt.Call("ask_human", `{"question": "Which greeting should I type?"}`),
		loopObserve,
		mt.Call("type_text", `{"ref": "greeting"}`),
		loopObserve,
		mt.Call("press_key", `{"key": "Return"}`),
		mt.Call("respond", `{"message": "The greeting is printed."}`),
		mt.Call("record_verdict", `{"verdict": "goal-met", "reason": "hello is printed"}`).WithUsage(map[string]any{"prompt_tokens": 900, "completion_tokens": 30}),
	}
	r := loopRun(t, loopCase{scenario: recordedScenario, operator: op, script: script, sink: func(run *Runner, e events.Event) {
		switch e.Kind {
		case events.KindQuestion:
			id := e.Question.ID
			go func() {
				if err := run.Steer(events.Steer{Action: events.SteerPause}); err != nil {
					t.Errorf("pause: %v", err)
				}
				// Which greeting is a choice the model must read.
				if err := run.AnswerMarked(id, "the provided one", inbox.MarkShareable); err != nil {
					t.Errorf("answer: %v", err)
				}
			}()
		case events.KindAnswer:
			go func() {
				if err := run.Steer(events.Steer{Action: events.SteerResume}); err != nil {
					t.Errorf("resume: %v", err)
				}
			}()
		}
	}})
	if r.rep.Verdict != events.VerdictPassConcerns {
		t.Fatalf("verdict %s (%q), want pass-with-concerns; steps %+v", r.rep.Verdict, r.rep.Reasons, loopSteps(r.rep))
	}
	if err := os.RemoveAll(recordedRunDir); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(recordedRunDir, os.DirFS(r.dir)); err != nil {
		t.Fatal(err)
	}
	// The application's output is not part of what the console shows.
	if err := os.Remove(filepath.Join(recordedRunDir, "app.log")); err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded %d events into %s", len(r.events), recordedRunDir)
}
