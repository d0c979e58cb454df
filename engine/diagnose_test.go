package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
	mt "github.com/kasmrt/kasmrt/engine/model/modeltest"
	"github.com/kasmrt/kasmrt/engine/report"
)

// wantStepScreen checks that a step has a screen in report.json and in its
// step.ended event, and that the file exists.
func wantStepScreen(t *testing.T, reportDir string, evs []events.Event, s report.Step) {
	t.Helper()
	if s.Screen == "" {
		t.Errorf("step %d (%s, %s) has no screen in report.json: %q", s.N, s.Tool, s.Status, s.Message)
		return
	}
	if _, err := os.Stat(filepath.Join(reportDir, s.Screen)); err != nil {
		t.Errorf("step %d's screen: %v", s.N, err)
	}
	for _, e := range evs {
		if e.Kind == events.KindStepEnded && e.Step == s.N && e.Screen != s.Screen {
			t.Errorf("step %d's step.ended event has screen %q, report.json %q", s.N, e.Screen, s.Screen)
		}
	}
}

// TestFailedScriptStepHasScreen checks that failed scripted steps, an
// assertion and a step that could not run, carry the screen as it was.
func TestFailedScriptStepHasScreen(t *testing.T) {
	t.Parallel()
	scriptNeed(t, "xterm")
	tests := []struct {
		name, steps, tools, verdict string
		failing                     int
	}{
		{
			name:    "declared check fails",
			steps:   "  - observe_screen: {}\n  - verify: {}\n",
			tools:   "tools:\n  verify: {run: shell, command: 'echo nope >&2; exit 1'}\n",
			verdict: events.VerdictAppFailed, failing: 2,
		},
		{
			name:    "unknown key",
			steps:   "  - press_key: ctrl+nosuchkey\n",
			verdict: events.VerdictTestError, failing: 1,
		},
		{
			name:    "wait condition never clears",
			steps:   "  - wait_while: gone\n",
			tools:   "wait_conditions:\n  gone: {file_missing: $DIR/never, timeout_s: 0.3}\n",
			verdict: events.VerdictTestError, failing: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := scriptRun(t, scriptRunSpec{scenario: "name: failing step" + scriptXtermPlain + "steps:\n" + tc.steps + tc.tools})
			if o.res.Verdict != tc.verdict {
				t.Fatalf("verdict %s (%v), want %s", o.res.Verdict, o.res.Reasons, tc.verdict)
			}
			s := o.step(t, tc.failing)
			if s.Status == events.StatusOK {
				t.Fatalf("step %d succeeded: %q", tc.failing, s.Message)
			}
			wantStepScreen(t, o.info.reportDir, o.events, s)
		})
	}
}

// TestRefusedModelCallHasScreen checks that a call the guards refuse gets
// a screen too, and that taking it does not count as an observation: the
// next input is refused again until the model observes.
func TestRefusedModelCallHasScreen(t *testing.T) {
	t.Parallel()
	r := loopRun(t, loopCase{script: []mt.Exchange{
		mt.Call("press_key", `{"key": "Return"}`),
		mt.Call("press_key", `{"key": "Return"}`),
		mt.Call("no_such_tool", `{}`),
		loopObserve,
		loopGoalMet,
	}})
	loopWantSteps(t, r.rep,
		loopStep{"press_key", events.StatusRefused, "observe_screen"},
		loopStep{"press_key", events.StatusRefused, "observe_screen"},
		loopStep{"no_such_tool", events.StatusMalformed, "unknown tool"},
		loopStep{"observe_screen", events.StatusOK, "observed"},
		loopStep{"record_verdict", events.StatusOK, "goal-met"},
	)
	for _, s := range r.rep.Steps[:3] {
		wantStepScreen(t, r.dir, r.events, s)
	}
	// The evidence is for the report, not for the model: the refused calls'
	// tool messages carry no image.
	for i, req := range r.reqs[1:3] {
		if imgs, err := req.Images(); err != nil || len(imgs) != 0 {
			t.Errorf("request %d has %d images (%v), want none before the first observation", i+2, len(imgs), err)
		}
	}
	if strings.Contains(r.rep.Steps[0].Message, "no screen") {
		t.Errorf("step 1 says %q", r.rep.Steps[0].Message)
	}
}
