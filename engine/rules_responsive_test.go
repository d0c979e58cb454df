package engine

import (
	"slices"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
	mt "github.com/kasmrt/kasmrt/engine/model/modeltest"
)

// rulesAppHangingAfter is rulesApp that counts as hung after timeout of
// silence.
func rulesAppHangingAfter(timeout string) string {
	return strings.Replace(rulesApp, "  command: [fake-app]\n", "  command: [fake-app]\n  hang_timeout_s: "+timeout+"\n", 1)
}

// TestRulesAppResponsive runs the responsiveness check on the double: an
// application that answers holds app_responsive; one that stops answering
// after an action ends the run there, app-failed (app-hung), in a script
// and in the agentic loop alike, with an app.hung event; one whose windows
// take no part in _NET_WM_PING is not judged.
func TestRulesAppResponsive(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		machine    func() *fakeMachine
		scenario   string
		script     []mt.Exchange
		verdict    events.Verdict
		outcome    events.Outcome
		responsive *bool
		steps      int
		reason     string
	}{
		{
			name:     "an application that answers holds the check",
			machine:  func() *fakeMachine { return &fakeMachine{pings: true} },
			scenario: rulesAppHangingAfter("0.3") + "steps:\n  - press_key: a\n  - observe_screen: {}\n",
			verdict:  events.VerdictPass, outcome: OutcomeCompleted, responsive: new(true), steps: 2,
		},
		{
			name: "an application that stops answering after a key ends the script",
			machine: func() *fakeMachine {
				f := &fakeMachine{pings: true}
				f.hangOn("key a")
				return f
			},
			scenario: rulesAppHangingAfter("0.3") + "steps:\n  - press_key: a\n  - observe_screen: {}\n",
			verdict:  events.VerdictAppFailed, outcome: OutcomeAppHung, responsive: new(false), steps: 1,
			reason: "did not answer _NET_WM_PING within 300ms (app.hang_timeout_s)",
		},
		{
			name: "an application that stops answering after the model's key ends the loop",
			machine: func() *fakeMachine {
				f := &fakeMachine{pings: true}
				f.hangOn("key a")
				return f
			},
			scenario: rulesAppHangingAfter("0.3") + "goal: Press a.\n",
			script:   []mt.Exchange{mt.Call("observe_screen", `{}`), mt.Call("press_key", `{"key": "a"}`), loopGoalMet},
			verdict:  events.VerdictAppFailed, outcome: OutcomeAppHung, responsive: new(false), steps: 2,
			reason: "stopped answering",
		},
		{
			name:     "an application whose windows take no part is not judged",
			machine:  func() *fakeMachine { f := &fakeMachine{}; f.hangOn("key a"); return f },
			scenario: rulesAppHangingAfter("0.3") + "steps:\n  - press_key: a\n  - observe_screen: {}\n",
			verdict:  events.VerdictPass, outcome: OutcomeCompleted, steps: 2,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			lc := loopCase{scenario: c.scenario, machine: c.machine(), script: c.script}
			if c.script == nil {
				lc.operator = "runner: {}\n"
			}
			r := loopRun(t, lc)
			if r.res.Verdict != c.verdict || r.res.Outcome != c.outcome {
				t.Errorf("verdict %s (%s), want %s (%s); reasons %q", r.res.Verdict, r.res.Outcome, c.verdict, c.outcome, r.res.Reasons)
			}
			if got := r.rep.Checks.AppResponsive; (got == nil) != (c.responsive == nil) || got != nil && *got != *c.responsive {
				t.Errorf("checks.app_responsive = %v, want %v (evidence %q)", fmtBool(got), fmtBool(c.responsive), r.rep.Checks.Evidence)
			}
			if len(r.rep.Steps) != c.steps {
				t.Errorf("%d steps ran, want %d", len(r.rep.Steps), c.steps)
			}
			if why := strings.Join(r.rep.Reasons, " "); !strings.Contains(why, c.reason) {
				t.Errorf("reasons = %q, want one containing %q", r.rep.Reasons, c.reason)
			}
			hung := slices.ContainsFunc(r.events, func(e events.Event) bool { return e.Kind == events.KindAppHung })
			if want := c.outcome == OutcomeAppHung; hung != want || want && r.rep.Hung == nil {
				t.Errorf("app.hung event %v, report.json hung %+v; want them when the app hung", hung, r.rep.Hung)
			}
		})
	}
}

func fmtBool(b *bool) string {
	if b == nil {
		return "unset"
	}
	if *b {
		return "true"
	}
	return "false"
}
