package engine

import (
	"errors"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/drivers/proc"
	"github.com/kasmrt/kasmrt/engine/events"
)

// TestRulesStageFailures checks how the engine judges what kept the stage
// from being set (engine/launch.go): a part that did not start is the
// test's error, an application that died or never opened its page failed,
// and every reason says what to check. No step runs and the model is never
// asked.
func TestRulesStageFailures(t *testing.T) {
	t.Parallel()
	quick := strings.Replace(rulesGoal, "  command: [fake-app]\n", "  command: [fake-app]\n  startup_timeout_s: 0.3\n", 1)
	browserQuick := rulesBrowser + "goal: Log in.\n"
	// served is an app that serves the page the browser opens.
	const served = "name: served\napp:\n  command: [fake-server]\n  startup_timeout_s: 0.3\n" +
		"browser:\n  mode: launch\n  start_url: http://app.test/\n  headless: true\ngoal: Log in.\n"
	cases := []struct {
		name, scenario   string
		machine          *fakeMachine
		verdict, outcome string
		reason           string
	}{
		{"the X server does not start", rulesGoal, &fakeMachine{sessionErr: errors.New("Xvfb: no free display")},
			events.VerdictTestError, OutcomeLaunchFailed, "start the X session: Xvfb: no free display"},
		{"the X server refuses the connection", rulesGoal, &fakeMachine{dialErr: errors.New("connection refused")},
			events.VerdictTestError, OutcomeLaunchFailed, "connect to the X session: connection refused"},
		{"the app's program does not start", rulesGoal, &fakeMachine{startErr: errors.New("fork/exec fake-app: no such file or directory")},
			events.VerdictTestError, OutcomeLaunchFailed, "fork/exec fake-app: no such file or directory"},
		{"the shell cannot find the app's program", rulesGoal, &fakeMachine{exitAtLaunch: &proc.Status{Code: 127}, noWindow: true},
			events.VerdictTestError, OutcomeLaunchFailed, "the application could not start: "},
		{"the app exits with an ordinary status before its window", rulesGoal, &fakeMachine{exitAtLaunch: &proc.Status{Code: 1}, noWindow: true},
			events.VerdictAppFailed, OutcomeAppExited, "the application exited with status 1 before its window appeared"},
		{"the browser does not start", browserQuick, &fakeMachine{browserErr: errors.New("exec: chromium: not found")},
			events.VerdictTestError, OutcomeLaunchFailed, "start the browser"},
		{"the start page never opens", served, &fakeMachine{navigateErr: errors.New("net::ERR_CONNECTION_REFUSED")},
			events.VerdictAppFailed, OutcomeStartup, "open the start page: it did not load within 300ms"},
		{"the serving app exits before the start page opens", served,
			&fakeMachine{navigateErr: errors.New("net::ERR_CONNECTION_REFUSED"), exitAtLaunch: &proc.Status{Code: 1}},
			events.VerdictAppFailed, OutcomeAppExited, "the application exited with status 1 before the start page opened"},
		{"no window matches", quick, &fakeMachine{noWindow: true},
			events.VerdictAppFailed, OutcomeStartup, "no window matching"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := loopRun(t, loopCase{scenario: c.scenario, machine: c.machine, env: map[string]string{"APP_PASSWORD": "pw"}})
			loopWant(t, r, c.verdict, c.outcome, 0, 0)
			if why := strings.Join(r.rep.Reasons, " "); !strings.Contains(why, c.reason) {
				t.Errorf("reasons = %q, want one containing %q", r.rep.Reasons, c.reason)
			}
			if len(r.reqs) != 0 || len(r.rep.Steps) != 0 {
				t.Errorf("%d model requests and %d steps, want none", len(r.reqs), len(r.rep.Steps))
			}
			for _, e := range r.events {
				if e.Kind == events.KindLog && strings.Contains(e.Message, "no screen") {
					t.Errorf("log %q: the double's screen can always be captured", e.Message)
				}
			}
		})
	}
}
