package engine

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
	mt "github.com/kasmrt/kasmrt/engine/model/modeltest"
)

// whyRunDir is where the console's tests of its step detail, why view and
// failed-step jumps read their recorded run from.
const whyRunDir = "../tui/testdata/why-run"

// whyScenario is loopXterm with a declared check that fails, so the run
// has a step of each failed kind: refused, malformed and error.
const whyScenario = loopXterm + `tools:
  greeting_printed:
    description: Check that the greeting is on the screen.
    run: shell
    parameters:
      what: {values: {greeting: "false"}}
`

// TestRecordWhyFixture records a real goal run against xterm in an
// embedded Xvfb whose model requests carry what the model was sent: a
// refused click, an unknown tool, an operator's note, a declared check
// that fails, and the model's verdict. Regenerate it, then the golden
// files, with
//
//	KASMRT_RECORD_FIXTURE=1 go test -count=1 -run TestRecordWhyFixture ./engine/
//	go test -count=1 ./tui/ -update
func TestRecordWhyFixture(t *testing.T) {
	if os.Getenv("KASMRT_RECORD_FIXTURE") == "" {
		t.Skip("records tui/testdata/why-run only when KASMRT_RECORD_FIXTURE is set")
	}
	script := []mt.Exchange{
		mt.Call("click", `{"target": "center"}`),
		mt.Call("observe", `{}`),
		mt.Call("observe_screen", `{}`).WithText("I will look at the screen first."),
		mt.Call("type_text", `{"ref": "greeting"}`).WithText("The prompt is there; typing the greeting."),
		mt.Call("press_key", `{"key": "Return"}`),
		mt.Call("greeting_printed", `{"what": "greeting"}`).WithText("Checking that the greeting was printed."),
		mt.Call("record_verdict", `{"verdict": "goal-not-met", "reason": "the check failed"}`),
	}
	r := loopRun(t, loopCase{scenario: whyScenario, script: script, sink: func(run *Runner, e events.Event) {
		if e.Kind == events.KindStepEnded && e.Tool == "type_text" {
			go func() {
				if err := run.Steer(events.Steer{Action: events.SteerNote, Value: "the prompt is at the top left"}); err != nil {
					t.Errorf("note: %v", err)
				}
			}()
		}
	}})
	if err := os.RemoveAll(whyRunDir); err != nil {
		t.Fatal(err)
	}
	// The application's output and the run's home are not part of what
	// the console shows.
	if err := os.CopyFS(filepath.Join(whyRunDir, "screens"), os.DirFS(filepath.Join(r.dir, "screens"))); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"events.jsonl", "report.json"} {
		data, err := os.ReadFile(filepath.Join(r.dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(whyRunDir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("recorded %d events (%s, %v) into %s", len(r.events), r.rep.Verdict, r.rep.Reasons, whyRunDir)
}
