package engine

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kasmrt/kasmrt/drivers/cdp"
	"github.com/kasmrt/kasmrt/drivers/proc"
	"github.com/kasmrt/kasmrt/engine/events"
	mt "github.com/kasmrt/kasmrt/engine/model/modeltest"
	"github.com/kasmrt/kasmrt/engine/report"
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
		name, scenario string
		machine        *fakeMachine
		verdict        events.Verdict
		outcome        events.Outcome
		reason         string
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

// TestRulesBrowserConsole checks that the page's console reaches the run's
// stream as it is logged, redacted and cut before it is published, and
// that closing the browser counts every message, beyond those recorded.
func TestRulesBrowserConsole(t *testing.T) {
	t.Parallel()
	const secret = "hunter2-console-secret"
	f := &fakeMachine{console: []cdp.ConsoleMessage{
		{Level: "log", Source: "console", Text: "page ready"},
		{Level: "error", Source: "exception", Text: "TypeError: login failed for " + secret, URL: "http://app.test/app.js", Line: 3},
		{Level: "log", Source: "console", Text: strings.Repeat("é", 800)},
		// The cut at 1000 bytes would halve the secret, were it not
		// masked before the cut.
		{Level: "log", Source: "console", Text: strings.Repeat("x", 990) + secret},
	}}
	r := loopRun(t, loopCase{scenario: rulesBrowser + "steps:\n  - cdp_url: {}\n", operator: "runner: {}\n", machine: f,
		env: map[string]string{"APP_PASSWORD": secret}})
	loopWant(t, r, events.VerdictPass, OutcomeCompleted, 0, 0)
	var texts []string
	var summary *events.ConsoleSummary
	for _, e := range r.events {
		switch d := e.Data.(type) {
		case events.ConsoleMessage:
			texts = append(texts, d.Text)
		case events.ConsoleSummary:
			summary = &d
		}
	}
	if len(texts) != 4 || texts[0] != "page ready" || strings.Contains(texts[1], secret) || !strings.Contains(texts[1], "TypeError: login failed for ") {
		t.Fatalf("console texts = %q, want four, the secret masked", texts)
	}
	if !strings.HasSuffix(texts[2], "…") || len(texts[2]) > 1000+len("…") || !utf8.ValidString(texts[2]) {
		t.Errorf("a long message is %d bytes (valid UTF-8: %v), want it cut at 1000 on a character boundary", len(texts[2]), utf8.ValidString(texts[2]))
	}
	if strings.Contains(texts[3], secret[:8]) {
		t.Errorf("a message cut short shows part of the secret: %q", texts[3][980:])
	}
	if summary == nil || summary.Total != 4 || summary.Recorded != 4 || summary.Counts["log"] != 3 || summary.Counts["error"] != 1 {
		t.Errorf("summary = %+v, want 4 messages, 3 logs and an error", summary)
	}
}

// TestRulesPageScreenshot checks that a headless page, the screen of a
// browser-only run, is asked again when a capture fails, and only until
// one succeeds.
func TestRulesPageScreenshot(t *testing.T) {
	t.Parallel()
	f := &fakeMachine{shotFails: 2}
	r := loopRun(t, loopCase{scenario: rulesBrowser + "steps:\n  - observe_screen: {}\n", operator: "runner: {}\n", machine: f,
		env: map[string]string{"APP_PASSWORD": "pw"}})
	loopWant(t, r, events.VerdictPass, OutcomeCompleted, 0, 0)
	loopWantSteps(t, r.rep, loopStep{"observe_screen", "ok", ""})
	f.mu.Lock()
	defer f.mu.Unlock()
	// Two failures and a success for the step, one for the final capture.
	if f.shots != 4 {
		t.Errorf("%d screenshots asked for, want 4", f.shots)
	}
}

// TestRulesPageScreenKeptAsCaptured checks that a headless page's screen
// is written to the report as the browser encoded it, unless a secret went
// into the page: then the screen may be masked, and is encoded again.
func TestRulesPageScreenKeptAsCaptured(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, steps string
		asCaptured  bool
	}{
		{"nothing secret", "  - observe_screen: {}\n", true},
		{"a secret filled", "  - cdp_fill: {target: password, ref: password}\n  - observe_screen: {}\n", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := &fakeMachine{}
			r := loopRun(t, loopCase{scenario: rulesBrowser + "steps:\n" + c.steps, operator: "runner: {}\n", machine: f,
				env: map[string]string{"APP_PASSWORD": "pw"}})
			loopWant(t, r, events.VerdictPass, OutcomeCompleted, 0, 0)
			last := r.rep.Steps[len(r.rep.Steps)-1]
			saved, err := os.ReadFile(filepath.Join(r.dir, last.Screen))
			if err != nil {
				t.Fatal(err)
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			captured := slices.ContainsFunc(f.shotPNG, func(b []byte) bool { return bytes.Equal(b, saved) })
			if captured != c.asCaptured {
				t.Errorf("%s is the PNG the browser encoded: %v, want %v", last.Screen, captured, c.asCaptured)
			}
		})
	}
}

// TestRulesPageActionScreenNotDecoded checks that a headless page's
// settled screen after an action is kept as the browser encoded it and
// not decoded on the step's path when no secret went into the page, and
// that whoever does need its pixels meets a decode error. The double's
// capture after the click has a whole header but pixels that do not
// decode: a step that decoded its screen would fail.
func TestRulesPageActionScreenNotDecoded(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, scenario string
		script         []mt.Exchange
		// clickOK is whether the click's step succeeds; logged is what a
		// log of the run must say ("": no log may mention a decode).
		clickOK bool
		logged  string
	}{
		{name: "nothing secret", scenario: "steps:\n  - cdp_click: submit\n", clickOK: true},
		{name: "a secret filled: masking decodes", scenario: "steps:\n  - cdp_fill: {target: password, ref: password}\n  - cdp_click: submit\n"},
		{name: "the model's loop hashes the screen", scenario: "goal: Log in.\n",
			script: []mt.Exchange{mt.Call("cdp_click", `{"target": "submit"}`), loopGoalMet}, clickOK: true, logged: "decode screen"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := &fakeMachine{spoilAfterClick: true}
			lc := loopCase{scenario: rulesBrowser + c.scenario, machine: f, script: c.script, env: map[string]string{"APP_PASSWORD": "pw"}}
			if c.script == nil {
				lc.operator = "runner: {}\n"
			}
			r := loopRun(t, lc)
			var click *report.Step
			for i := range r.rep.Steps {
				if r.rep.Steps[i].Tool == "cdp_click" {
					click = &r.rep.Steps[i]
				}
			}
			if click == nil {
				t.Fatalf("no cdp_click step in %+v", r.rep.Steps)
			}
			if ok := click.Status == "ok"; ok != c.clickOK {
				t.Fatalf("cdp_click: %s %q, want ok %v", click.Status, click.Message, c.clickOK)
			}
			var logs []string
			for _, e := range r.events {
				if e.Kind == events.KindLog {
					logs = append(logs, e.Message)
				}
			}
			if c.logged == "" && slices.ContainsFunc(logs, func(l string) bool { return strings.Contains(l, "decode") }) {
				t.Errorf("logs %q, want none of a decode: nothing needed the screen's pixels", logs)
			}
			if c.logged != "" && !slices.ContainsFunc(logs, func(l string) bool { return strings.Contains(l, c.logged) }) {
				t.Errorf("logs %q, want one saying %q", logs, c.logged)
			}
			if !c.clickOK {
				if !strings.Contains(click.Message, "decode") {
					t.Errorf("cdp_click: %q, want the decode's error", click.Message)
				}
				return
			}
			saved, err := os.ReadFile(filepath.Join(r.dir, click.Screen))
			if err != nil {
				t.Fatal(err)
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			if !slices.ContainsFunc(f.shotPNG, func(b []byte) bool { return bytes.Equal(b, saved) }) {
				t.Errorf("%s is not the PNG the browser encoded", click.Screen)
			}
			announced := false
			for _, e := range r.events {
				sc, ok := e.Data.(events.ScreenCaptured)
				if !ok || e.Screen != click.Screen {
					continue
				}
				announced = true
				if sc.Width != f.width || sc.Height != f.height {
					t.Errorf("%s captured as %dx%d, want the page's %dx%d", e.Screen, sc.Width, sc.Height, f.width, f.height)
				}
			}
			if !announced {
				t.Errorf("%s was never announced as captured", click.Screen)
			}
		})
	}
}

// TestRulesStrikeLeavesNothing checks that striking the stage after an
// ordinary run removes the application's private runtime and temporary
// directories and has nothing to complain about.
func TestRulesStrikeLeavesNothing(t *testing.T) {
	t.Parallel()
	f := &fakeMachine{}
	r := loopRun(t, loopCase{scenario: rulesApp + "steps:\n  - observe_screen: {}\n", operator: "runner: {}\n", machine: f})
	loopWant(t, r, events.VerdictPass, OutcomeCompleted, 0, 0)
	var runtime string
	for _, kv := range f.specs[0].Env {
		if v, ok := strings.CutPrefix(kv, "XDG_RUNTIME_DIR="); ok {
			runtime = v
		}
	}
	if runtime == "" {
		t.Fatalf("the app's environment %q has no runtime directory", f.specs[0].Env)
	}
	if _, err := os.Stat(filepath.Dir(runtime)); !os.IsNotExist(err) {
		t.Errorf("the run's scratch directory %s is still there (%v)", filepath.Dir(runtime), err)
	}
	for _, e := range r.events {
		if e.Kind == events.KindLog {
			t.Errorf("log %q after an ordinary run", e.Message)
		}
	}
}
