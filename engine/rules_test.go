package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/drivers/cdp"
	"github.com/kasmrt/kasmrt/drivers/desktop"
	"github.com/kasmrt/kasmrt/drivers/proc"
	"github.com/kasmrt/kasmrt/engine/events"
	mt "github.com/kasmrt/kasmrt/engine/model/modeltest"
)

// The tests in this file run the engine's rules (docs/architecture.md,
// "Test layers") on the machine double: the real model adapter talks HTTP
// to the model test server, the report is really written, declared tools
// really run in a shell, but the X session and the app are the double's.

// rulesApp is the scenario the rule tests start from: its command is never
// run (the double stands in for it).
const rulesApp = `name: rules
app:
  command: [fake-app]
provides:
  greeting: echo hello
  quit: exit
`

// rulesGoal is rulesApp with a goal, so the agentic loop runs.
const rulesGoal = rulesApp + "goal: Print the greeting.\n"

// fakeShell makes the double's app behave like a shell in a terminal for
// one line: typing "exit" and pressing Return ends it with status 0.
func fakeShell(f *fakeMachine, in string) {
	ins := f.inputs()
	if in == "key Return" && len(ins) >= 2 && ins[len(ins)-2] == "type exit" {
		f.exitApp(0)
	}
}

// rulesCase is one run on the double.
type rulesCase struct {
	loopTurnCase
	scenario string
	env      map[string]string
	// machine, when set, builds the double (and may capture it in the
	// script); the zero double otherwise.
	machine func() (*fakeMachine, []mt.Exchange)
}

func rulesRun(t *testing.T, cases []rulesCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f, script := &fakeMachine{}, c.script
			if c.machine != nil {
				var built []mt.Exchange
				if f, built = c.machine(); built != nil {
					script = built
				}
			}
			sc := c.scenario
			if sc == "" {
				sc = rulesGoal
			}
			r := loopRun(t, loopCase{scenario: sc, operator: c.operator, script: script, env: c.env, machine: f})
			loopWant(t, r, c.verdict, c.outcome, c.iterations, c.malforms)
			loopWantSteps(t, r.rep, c.steps...)
			if c.check != nil {
				c.check(t, r)
			}
		})
	}
}

// TestRulesVerdict checks the verdict rules end to end: deterministic
// checks decide, goal-met never upgrades a failure, goal-not-met alone is a
// concern, and escalate locks test-error whatever happens after it.
func TestRulesVerdict(t *testing.T) {
	t.Parallel()
	judge := func(met bool) mt.Exchange {
		return mt.Text(`{"met": ` + map[bool]string{true: "true", false: "false"}[met] + `, "reason": "the screen shows what it shows"}`)
	}
	// dieDuringTurn is a model reply that ends the app while the model
	// "thinks", after the check before the turn has passed.
	dieDuringTurn := func(f *fakeMachine, reply mt.Exchange) mt.Exchange {
		return mt.Func(func(mt.Request) mt.Exchange { f.exitApp(1); return reply })
	}
	rulesRun(t, []rulesCase{
		{loopTurnCase: loopTurnCase{
			name: "app exits mid-loop",
			script: []mt.Exchange{loopObserve, mt.Call("type_text", `{"ref": "quit"}`), loopObserve, mt.Call("press_key", `{"key": "Return"}`),
				loopGoalMet},
			verdict: events.VerdictAppFailed, outcome: OutcomeAppExited, iterations: 4,
			steps: []loopStep{{"observe_screen", "ok", ""}, {"type_text", "ok", ""}, {"observe_screen", "ok", ""}, {"press_key", "ok", ""}},
			check: func(t *testing.T, r loopResult) {
				if !strings.Contains(r.rep.Loop.Ended, "a deterministic check failed") {
					t.Errorf("loop.ended = %q", r.rep.Loop.Ended)
				}
				if r.rep.Checks.ProcessAlive == nil || *r.rep.Checks.ProcessAlive {
					t.Errorf("checks.process_alive = %v, want false", r.rep.Checks.ProcessAlive)
				}
				if !slices.Contains(r.rep.Reasons, "the application exited with status 0") {
					t.Errorf("reasons = %q", r.rep.Reasons)
				}
			},
		}, machine: func() (*fakeMachine, []mt.Exchange) { return &fakeMachine{on: fakeShell}, nil }},
		{loopTurnCase: loopTurnCase{
			name:    "goal-met never upgrades a failure",
			verdict: events.VerdictAppFailed, outcome: OutcomeAppExited, iterations: 2,
			steps: []loopStep{{"observe_screen", "ok", ""}, {"record_verdict", "ok", "recorded goal-met"}},
			check: func(t *testing.T, r loopResult) {
				if r.rep.ModelVerdict == nil || r.rep.ModelVerdict.Verdict != "goal-met" {
					t.Errorf("model_verdict = %+v", r.rep.ModelVerdict)
				}
				if !slices.Contains(r.rep.Reasons, "the model recorded goal-met, which never upgrades a failed check") {
					t.Errorf("reasons = %q", r.rep.Reasons)
				}
			},
		}, machine: func() (*fakeMachine, []mt.Exchange) {
			f := &fakeMachine{}
			return f, []mt.Exchange{loopObserve, dieDuringTurn(f, loopGoalMet)}
		}},
		{loopTurnCase: loopTurnCase{
			name:    "goal-not-met alone is a concern",
			script:  []mt.Exchange{loopObserve, mt.Call("record_verdict", `{"verdict": "goal-not-met", "reason": "no greeting"}`)},
			verdict: events.VerdictPassConcerns, outcome: OutcomeCompleted, iterations: 2,
			steps: []loopStep{{"observe_screen", "ok", ""}, {"record_verdict", "ok", "recorded goal-not-met"}},
			check: func(t *testing.T, r loopResult) {
				if !loopHasConcern(r.rep, "the model recorded goal-not-met: no greeting") {
					t.Errorf("concerns = %q", r.rep.Concerns)
				}
			},
		}},
		{loopTurnCase: loopTurnCase{
			name: "goal-not-met after a false check_expectation",
			script: []mt.Exchange{mt.Call("check_expectation", `{"expectation": "the terminal shows hello"}`), judge(false),
				mt.Call("record_verdict", `{"verdict": "goal-not-met", "reason": "no greeting"}`)},
			verdict: events.VerdictAppFailed, outcome: OutcomeCompleted, iterations: 2,
			steps: []loopStep{{"check_expectation", "ok", "false: the screen shows what it shows"}, {"record_verdict", "ok", "recorded goal-not-met"}},
			check: func(t *testing.T, r loopResult) {
				if !slices.Contains(r.rep.Reasons, "and a check_expectation during the loop came back false") {
					t.Errorf("reasons = %q", r.rep.Reasons)
				}
			},
		}},
		{loopTurnCase: loopTurnCase{
			name: "goal-met after a false check_expectation passes",
			script: []mt.Exchange{mt.Call("check_expectation", `{"expectation": "the terminal shows hello"}`), judge(false),
				loopGoalMet},
			verdict: loopUnverified, outcome: OutcomeCompleted, iterations: 2,
			steps: []loopStep{{"check_expectation", "ok", "false:"}, {"record_verdict", "ok", "recorded goal-met"}},
		}},
		{loopTurnCase: loopTurnCase{
			name:    "escalate locks test-error although the checks pass",
			script:  []mt.Exchange{loopObserve, mt.Call("escalate", `{"reason": "the dialog asks for a licence key"}`)},
			verdict: events.VerdictTestError, outcome: OutcomeEscalated, iterations: 2,
			steps: []loopStep{{"observe_screen", "ok", ""}, {"escalate", "ok", "escalated"}},
			check: func(t *testing.T, r loopResult) {
				if !slices.Equal(r.rep.Reasons, []string{"escalated: the dialog asks for a licence key"}) || !*r.rep.Checks.ProcessAlive {
					t.Errorf("reasons = %q, checks %+v", r.rep.Reasons, r.rep.Checks)
				}
			},
		}},
		{loopTurnCase: loopTurnCase{
			name:    "escalate locks test-error although the app then dies",
			verdict: events.VerdictTestError, outcome: OutcomeEscalated, iterations: 2,
			steps: []loopStep{{"observe_screen", "ok", ""}, {"escalate", "ok", ""}},
			check: func(t *testing.T, r loopResult) {
				if r.rep.Checks.ProcessAlive == nil || *r.rep.Checks.ProcessAlive {
					t.Errorf("checks.process_alive = %v, want false (the app died after the escalation)", r.rep.Checks.ProcessAlive)
				}
				if !slices.Equal(r.rep.Reasons, []string{"escalated: stuck"}) {
					t.Errorf("reasons = %q: an escalated run lists only why", r.rep.Reasons)
				}
			},
		}, machine: func() (*fakeMachine, []mt.Exchange) {
			f := &fakeMachine{}
			return f, []mt.Exchange{loopObserve, dieDuringTurn(f, mt.Call("escalate", `{"reason": "stuck"}`))}
		}},
		{loopTurnCase: loopTurnCase{
			name:    "the window lost mid-loop fails window_present",
			script:  []mt.Exchange{loopObserve, mt.Call("click", `{"target": "center"}`), loopGoalMet},
			verdict: events.VerdictAppFailed, outcome: OutcomeWindowLost, iterations: 2,
			steps: []loopStep{{"observe_screen", "ok", ""}, {"click", "ok", "clicked center"}},
			check: func(t *testing.T, r loopResult) {
				if c := r.rep.Checks; c.WindowPresent == nil || *c.WindowPresent || c.ProcessAlive == nil || !*c.ProcessAlive {
					t.Errorf("checks = %+v, want window_present false and process_alive true", c)
				}
				if !strings.Contains(strings.Join(r.rep.Reasons, " "), "window 0x400001: window gone") {
					t.Errorf("reasons = %q", r.rep.Reasons)
				}
			},
		}, machine: func() (*fakeMachine, []mt.Exchange) {
			return &fakeMachine{on: func(f *fakeMachine, in string) { f.loseWindow() }}, nil
		}},
		{loopTurnCase: loopTurnCase{
			name:    "an unmapped window fails window_present",
			script:  []mt.Exchange{loopObserve, mt.Call("press_key", `{"key": "Escape"}`), loopGoalMet},
			verdict: events.VerdictAppFailed, outcome: OutcomeWindowLost, iterations: 2,
			steps: []loopStep{{"observe_screen", "ok", ""}, {"press_key", "ok", "pressed Escape"}},
			check: func(t *testing.T, r loopResult) {
				if !strings.Contains(strings.Join(r.rep.Reasons, " "), "window 0x400001 is no longer mapped") {
					t.Errorf("reasons = %q", r.rep.Reasons)
				}
			},
		}, machine: func() (*fakeMachine, []mt.Exchange) {
			return &fakeMachine{on: func(f *fakeMachine, in string) { f.unmapWindow() }}, nil
		}},
		{loopTurnCase: loopTurnCase{
			name:    "a fatal log line fails fatal_pattern",
			script:  []mt.Exchange{loopObserve, mt.Call("press_key", `{"key": "Return"}`), loopGoalMet},
			verdict: events.VerdictAppFailed, outcome: OutcomeFatalLog, iterations: 2,
			steps: []loopStep{{"observe_screen", "ok", ""}, {"press_key", "ok", ""}},
			check: func(t *testing.T, r loopResult) {
				if c := r.rep.Checks; c.FatalPattern == nil || *c.FatalPattern != "Segmentation fault (core dumped)" {
					t.Errorf("checks = %+v, want fatal_pattern to show the line", c)
				}
				if !slices.Contains(r.rep.Reasons, "Segmentation fault (core dumped)") {
					t.Errorf("reasons = %q", r.rep.Reasons)
				}
			},
		}, scenario: strings.Replace(rulesGoal, "  command: [fake-app]\n", "  command: [fake-app]\n  fatal_patterns: [Segmentation fault]\n", 1),
			machine: func() (*fakeMachine, []mt.Exchange) {
				return &fakeMachine{on: func(f *fakeMachine, in string) { f.say("Segmentation fault (core dumped)") }}, nil
			}},
		{loopTurnCase: loopTurnCase{
			name:    "the X server going away is test-error, not the app's fault",
			script:  []mt.Exchange{loopObserve, mt.Call("press_key", `{"key": "Return"}`), loopGoalMet},
			verdict: events.VerdictTestError, outcome: OutcomeSessionLost, iterations: 2,
			steps: []loopStep{{"observe_screen", "ok", ""}, {"press_key", "error", "capture the screen: X connection closed"}},
			check: func(t *testing.T, r loopResult) {
				if !slices.Equal(r.rep.Reasons[:1], []string{"the X server went away"}) {
					t.Errorf("reasons = %q, want the cause first", r.rep.Reasons)
				}
			},
		}, machine: func() (*fakeMachine, []mt.Exchange) {
			return &fakeMachine{on: func(f *fakeMachine, in string) { f.loseSession() }}, nil
		}},
		{loopTurnCase: loopTurnCase{
			name:    "an app that exits with a success code ends the run normally",
			script:  []mt.Exchange{loopObserve, mt.Call("type_text", `{"ref": "quit"}`), loopObserve, mt.Call("press_key", `{"key": "Return"}`)},
			verdict: loopUnverified, outcome: OutcomeCompleted, iterations: 4,
			steps: []loopStep{{"observe_screen", "ok", ""}, {"type_text", "ok", ""}, {"observe_screen", "ok", ""}, {"press_key", "ok", ""}},
			check: func(t *testing.T, r loopResult) {
				if r.rep.Loop.Ended != "the application exited successfully" {
					t.Errorf("loop.ended = %q", r.rep.Loop.Ended)
				}
				if c := r.rep.Checks; c.ProcessAlive == nil || !*c.ProcessAlive || c.WindowPresent == nil || !*c.WindowPresent {
					t.Errorf("checks = %+v, want both passed on a success exit", c)
				}
			},
		}, scenario: strings.Replace(rulesGoal, "  command: [fake-app]\n", "  command: [fake-app]\n  success_exit_codes: [0]\n", 1),
			machine: func() (*fakeMachine, []mt.Exchange) { return &fakeMachine{on: fakeShell}, nil }},
	})
}

// TestRulesLaunch checks how a launch can end a run before any step: the
// app exits before its window appears, or no window ever matches.
func TestRulesLaunch(t *testing.T) {
	t.Parallel()
	rulesRun(t, []rulesCase{
		{loopTurnCase: loopTurnCase{
			name:    "the app exits before its window appears",
			verdict: events.VerdictAppFailed, outcome: OutcomeAppExited,
			check: func(t *testing.T, r loopResult) {
				if !slices.Contains(r.rep.Reasons, "the application killed by signal SEGV before its window appeared") {
					t.Errorf("reasons = %q", r.rep.Reasons)
				}
				if len(r.reqs) != 0 {
					t.Errorf("%d model requests, want none", len(r.reqs))
				}
			},
		}, machine: func() (*fakeMachine, []mt.Exchange) {
			// No window either: with one, the launch could as well see it
			// first, and the checks would then report the death.
			return &fakeMachine{exitAtLaunch: &procSEGV, noWindow: true}, nil
		}},
		{loopTurnCase: loopTurnCase{
			name:    "no window appears within the startup timeout",
			verdict: events.VerdictAppFailed, outcome: OutcomeStartup,
			check: func(t *testing.T, r loopResult) {
				if !strings.Contains(strings.Join(r.rep.Reasons, " "), "no window matching") {
					t.Errorf("reasons = %q", r.rep.Reasons)
				}
			},
		}, scenario: strings.Replace(rulesGoal, "  command: [fake-app]\n", "  command: [fake-app]\n  startup_timeout_s: 0.05\n", 1),
			machine: func() (*fakeMachine, []mt.Exchange) { return &fakeMachine{noWindow: true}, nil }},
	})
}

// TestRulesDefaultDeadline pins the default whole-run deadline and its
// reserve: nothing in the files or the environment sets them.
func TestRulesDefaultDeadline(t *testing.T) {
	t.Parallel()
	r := loopRun(t, loopCase{scenario: rulesGoal, script: []mt.Exchange{loopObserve, loopGoalMet}, machine: &fakeMachine{}})
	loopWant(t, r, loopUnverified, OutcomeCompleted, 2, 0)
	if r.rep.Timing.DeadlineS != 600 {
		t.Errorf("timing.deadline_s = %v, want the default 600", r.rep.Timing.DeadlineS)
	}
	limits := map[string]float64{}
	for _, b := range r.rep.Budgets {
		limits[b.Name] = b.Limit
	}
	if limits["deadline"] != 600 || limits["deadline_reserve"] != 30 {
		t.Errorf("budgets deadline %v reserve %v, want 600 and 30", limits["deadline"], limits["deadline_reserve"])
	}
}

// rulesProbe declares a tool with enum parameters: each value maps to a
// literal command the author wrote, and the model can only choose among
// the values.
const rulesProbe = rulesGoal + `tools:
  probe:
    description: Check a state of the app.
    run: shell
    parameters:
      state:
        values: {ready: echo ready, broken: echo not ready >&2; exit 4}
      where:
        values: {here: "true", there: "true"}
`

// TestRulesDeclaredTools runs a declared tool with enum parameters: the
// model is sent the enums, a value outside them is malformed, and each
// value runs its own command.
func TestRulesDeclaredTools(t *testing.T) {
	t.Parallel()
	probe := func(args string) mt.Exchange { return mt.Call("probe", args) }
	rulesRun(t, []rulesCase{{loopTurnCase: loopTurnCase{
		name: "enum parameters",
		script: []mt.Exchange{
			probe(`{"state": "ready", "where": "here"}`),
			probe(`{"state": "broken", "where": "there"}`),
			probe(`{"state": "rm -rf /", "where": "here"}`),
			probe(`{"state": "ready"}`),
			loopGoalMet,
		},
		operator: loopOperatorRetry,
		verdict:  loopUnverified, outcome: OutcomeCompleted, iterations: 5, malforms: 2,
		steps: []loopStep{
			{"probe", "ok", "probe succeeded: ready"},
			{"probe", "error", "probe exited with status 4: not ready"},
			{"probe", "malformed", `probe.state: "rm -rf /" is not one of broken, ready`},
			{"probe", "malformed", "probe needs where"},
			{"record_verdict", "ok", ""},
		},
		check: func(t *testing.T, r loopResult) {
			raw := string(r.reqs[0].Raw)
			if !strings.Contains(raw, `"enum":["broken","ready"]`) || !strings.Contains(raw, `"enum":["here","there"]`) {
				t.Errorf("the probe's schema sent lacks its enums:\n%s", raw)
			}
			if strings.Contains(raw, "not ready") {
				t.Error("a declared command reached the model")
			}
			if r.rep.Loop.ToolErrors != 1 {
				t.Errorf("loop.tool_errors = %d, want 1", r.rep.Loop.ToolErrors)
			}
		},
	}, scenario: rulesProbe}})
}

// TestRulesWaitWhile runs each kind of wait_while condition to its end:
// cleared, and still holding at its timeout.
func TestRulesWaitWhile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	marker := filepath.Join(dir, "ready")
	conditions := rulesGoal + `wait_conditions:
  busy: {screen_changing: true, timeout_s: 5}
  settling: {screen_changing: true}
  loading: {window_title: Loading, timeout_s: 0.3}
  not_saved: {file_missing: ` + marker + `, timeout_s: 0.3}
`
	waitWhile := func(cond string) mt.Exchange { return mt.Call("wait_while", `{"condition": "`+cond+`"}`) }
	busy := &fakeMachine{unsettled: 3}
	rulesRun(t, []rulesCase{
		{loopTurnCase: loopTurnCase{
			name:    "screen changing clears",
			script:  []mt.Exchange{waitWhile("busy"), loopGoalMet},
			verdict: loopUnverified, outcome: OutcomeCompleted, iterations: 2,
			steps: []loopStep{{"wait_while", "ok", "busy cleared after"}, {"record_verdict", "ok", ""}},
			check: func(t *testing.T, r loopResult) {
				busy.mu.Lock()
				defer busy.mu.Unlock()
				if busy.unsettled != 0 {
					t.Errorf("%d unsettled screens were never looked at: the wait ended while the screen still changed", busy.unsettled)
				}
			},
		}, scenario: conditions, machine: func() (*fakeMachine, []mt.Exchange) { return busy, nil }},
		{loopTurnCase: loopTurnCase{
			name:    "window title still holds at the timeout",
			script:  []mt.Exchange{waitWhile("loading"), loopGoalMet},
			verdict: loopUnverified, outcome: OutcomeCompleted, iterations: 2,
			steps: []loopStep{{"wait_while", "error", "loading still holds after"}, {"record_verdict", "ok", ""}},
			check: func(t *testing.T, r loopResult) {
				// Its own timeout, not the 30 s default: the bounds are far
				// apart so a loaded machine cannot blur them.
				if d := r.rep.Steps[0].DurationMS; d < 300 || d > 10_000 {
					t.Errorf("the wait gave up after %d ms; its timeout_s is 0.3", d)
				}
			},
		}, scenario: conditions, machine: func() (*fakeMachine, []mt.Exchange) { return &fakeMachine{title: "Loading… 40%"}, nil }},
		{loopTurnCase: loopTurnCase{
			name:    "a condition without timeout_s waits by the default",
			script:  []mt.Exchange{waitWhile("settling"), loopGoalMet},
			verdict: loopUnverified, outcome: OutcomeCompleted, iterations: 2,
			steps: []loopStep{{"wait_while", "ok", "settling cleared after"}, {"record_verdict", "ok", ""}},
		}, scenario: conditions, machine: func() (*fakeMachine, []mt.Exchange) { return &fakeMachine{unsettled: 2}, nil }},
		{loopTurnCase: loopTurnCase{
			name:    "window title that does not hold",
			script:  []mt.Exchange{waitWhile("loading"), loopGoalMet},
			verdict: loopUnverified, outcome: OutcomeCompleted, iterations: 2,
			steps: []loopStep{{"wait_while", "ok", "loading cleared after 0.0s"}, {"record_verdict", "ok", ""}},
		}, scenario: conditions, machine: func() (*fakeMachine, []mt.Exchange) { return &fakeMachine{title: "Editor"}, nil }},
		{loopTurnCase: loopTurnCase{
			name:    "file missing still holds at the timeout",
			script:  []mt.Exchange{waitWhile("not_saved"), loopGoalMet},
			verdict: loopUnverified, outcome: OutcomeCompleted, iterations: 2,
			steps: []loopStep{{"wait_while", "error", "not_saved still holds after"}, {"record_verdict", "ok", ""}},
		}, scenario: strings.Replace(conditions, "not_saved: {file_missing: "+marker, "not_saved: {file_missing: "+marker+".never", 1)},
		{loopTurnCase: loopTurnCase{
			name: "file missing clears when the file appears",
			script: []mt.Exchange{mt.Func(func(mt.Request) mt.Exchange {
				if err := os.WriteFile(marker, nil, 0o600); err != nil {
					t.Error(err)
				}
				return waitWhile("not_saved")
			}), loopGoalMet},
			verdict: loopUnverified, outcome: OutcomeCompleted, iterations: 2,
			steps: []loopStep{{"wait_while", "ok", "not_saved cleared after 0.0s"}, {"record_verdict", "ok", ""}},
		}, scenario: conditions},
	})
}

// TestRulesNotJudged takes the "not judged" path: once the model is off, a
// scripted check_expectation is recorded as not judged, with a concern,
// and the run goes on.
func TestRulesNotJudged(t *testing.T) {
	t.Parallel()
	scripted := rulesApp + `steps:
  - check_expectation: {expectation: the greeting is shown}
  - check_expectation: {expectation: the greeting is still shown}
  - press_key: Return
`
	r := loopRun(t, loopCase{scenario: scripted, operator: loopOp("", "  disable_after: 1\n"),
		script: []mt.Exchange{mt.Status(401)}, machine: &fakeMachine{}})
	loopWant(t, r, events.VerdictPassConcerns, OutcomeCompleted, 0, 0)
	loopWantSteps(t, r.rep,
		loopStep{"check_expectation", "ok", "unavailable: judge expectation"},
		loopStep{"check_expectation", "ok", "unavailable: not judged (the model is off for the rest of the run (not judged))"},
		loopStep{"press_key", "ok", "pressed Return"})
	if !loopHasConcern(r.rep, `check_expectation "the greeting is still shown" was not judged`) {
		t.Errorf("concerns = %q", r.rep.Concerns)
	}
	if len(r.reqs) != 1 {
		t.Errorf("%d model requests, want 1: nothing is sent once the model is off", len(r.reqs))
	}
}

// TestRulesScriptedToolList checks the tools a scripted run has: the
// built-ins every run has plus its declared tools, sorted, and without a
// model endpoint neither click_grounded nor check_expectation.
func TestRulesScriptedToolList(t *testing.T) {
	t.Parallel()
	scripted := rulesProbe[:strings.Index(rulesProbe, "goal:")] + rulesProbe[strings.Index(rulesProbe, "tools:"):] + `steps:
  - probe: {state: ready, where: here}
`
	r := loopRun(t, loopCase{scenario: scripted, operator: "runner: {}\n", machine: &fakeMachine{}})
	loopWant(t, r, events.VerdictPass, OutcomeCompleted, 0, 0)
	want := []string{"click", "escalate", "expect", "observe_screen", "press_key", "probe", "record_verdict", "type_text", "wait"}
	if !slices.Equal(r.rep.Tools, want) {
		t.Errorf("tools = %v, want %v", r.rep.Tools, want)
	}
}

// TestRulesInput checks what reaches the application: the resolved click
// point, the provided value (never its name), and an unknown key refused
// by the driver as the author's mistake.
func TestRulesInput(t *testing.T) {
	t.Parallel()
	f := &fakeMachine{}
	scripted := rulesApp + `click_targets:
  ok_button: {x: 30, y: 200}
steps:
  - click: ok_button
  - type_text: {ref: greeting}
  - press_key: ctrl+s
  - press_key: F35
  - press_key: Return
`
	r := loopRun(t, loopCase{scenario: scripted, operator: "runner: {}\n", machine: f})
	loopWant(t, r, events.VerdictTestError, OutcomeStepError, 0, 0)
	if got, want := f.inputs(), []string{"click 50,220", "type echo hello", "key ctrl+s"}; !slices.Equal(got, want) {
		t.Errorf("input = %q, want %q", got, want)
	}
	if why := strings.Join(r.rep.Reasons, " "); !strings.Contains(why, "step 4 (press_key) could not run: press F35") || !strings.Contains(why, "unknown key") {
		t.Errorf("reasons = %q", r.rep.Reasons)
	}
	if f.theApp().stops != 1 {
		t.Errorf("the app was stopped %d times, want once", f.theApp().stops)
	}
}

// procSEGV is how an app that crashed at once ended.
var procSEGV = proc.Status{Code: -1, Signal: syscall.SIGSEGV}

// rulesBrowser is a browser-only scenario: the browser is the application
// under test, headless, so the screens come from the page.
const rulesBrowser = `name: rules browser
browser:
  mode: launch
  start_url: http://app.test/login
  headless: true
provides:
  user: demo
  password: {secret: {env: APP_PASSWORD}}
cdp_targets:
  username: "input[name=username]"
  password: "input[name=password]"
  submit: "button[type=submit]"
  banner: "#welcome"
cdp_waits:
  banner_shown: {target: banner, state: visible, timeout_s: 5}
`

// TestRulesBrowser runs the cdp_* tools on the double's tab: values are
// filled by ref and reported by length only, targets are the author's
// names, and the secret reaches the page but no file.
func TestRulesBrowser(t *testing.T) {
	t.Parallel()
	const secret = "hunter2-correct-horse"
	f := &fakeMachine{page: map[string]cdp.ElementState{"#welcome": {Found: true, Visible: true, Text: "Welcome, demo"}},
		interactive: []cdp.Element{{Handle: "e1", Role: "button", Name: "Log in"}, {Handle: "e2", Role: "link", Name: "Help"}}}
	scripted := rulesBrowser + `steps:
  - cdp_fill: {target: username, ref: user}
  - cdp_fill: {target: password, ref: password}
  - cdp_click: submit
  - cdp_wait: banner_shown
  - cdp_query: banner
  - cdp_list_interactive: {filter: Log}
  - cdp_click_described: {text: Help}
  - cdp_url: {}
`
	r := loopRun(t, loopCase{scenario: scripted, operator: "runner: {}\n", machine: f, env: map[string]string{"APP_PASSWORD": secret}})
	loopWant(t, r, events.VerdictPass, OutcomeCompleted, 0, 0)
	loopWantSteps(t, r.rep,
		loopStep{"cdp_fill", "ok", `filled username with the value "user" (4 characters)`},
		loopStep{"cdp_fill", "ok", `filled password with the secret value "password" (21 characters)`},
		loopStep{"cdp_click", "ok", "clicked submit"},
		loopStep{"cdp_wait", "ok", "banner_shown"},
		loopStep{"cdp_query", "ok", `banner: found, visible, text "Welcome, demo"`},
		loopStep{"cdp_list_interactive", "ok", "Log in"},
		loopStep{"cdp_click_described", "ok", "Help"},
		loopStep{"cdp_url", "ok", "http://app.test/login"},
	)
	if got := f.browser.tab.filled["input[name=password]"]; got != secret {
		t.Errorf("the password field got %q, want the secret", got)
	}
	want := []string{"navigate http://app.test/login", "fill input[name=username]", "fill input[name=password]", "click button[type=submit]", "click e2"}
	if got := f.inputs(); !slices.Equal(got, want) {
		t.Errorf("input = %q, want %q", got, want)
	}
	for _, name := range []string{"events.jsonl", "report.json"} {
		raw, err := os.ReadFile(filepath.Join(r.dir, name))
		if err != nil || strings.Contains(string(raw), secret) {
			t.Errorf("%s carries the secret (or %v)", name, err)
		}
	}
	if r.rep.Checks.ProcessAlive == nil || !*r.rep.Checks.ProcessAlive || r.rep.Checks.WindowPresent != nil {
		t.Errorf("checks = %+v: process_alive follows the browser, a headless one has no window", r.rep.Checks)
	}
}

// TestRulesBrowserDies checks that the browser standing in for the app is
// followed by process_alive: when it exits mid-loop the run is app-failed.
func TestRulesBrowserDies(t *testing.T) {
	t.Parallel()
	f := &fakeMachine{on: func(f *fakeMachine, in string) {
		if in == "click button[type=submit]" {
			f.browser.exit()
		}
	}}
	r := loopRun(t, loopCase{scenario: rulesBrowser + "goal: Log in.\n", machine: f, env: map[string]string{"APP_PASSWORD": "pw"},
		script: []mt.Exchange{mt.Call("cdp_click", `{"target": "submit"}`), loopGoalMet}})
	loopWant(t, r, events.VerdictAppFailed, OutcomeAppExited, 1, 0)
	loopWantSteps(t, r.rep, loopStep{"cdp_click", "ok", "clicked submit"})
	if r.rep.Checks.ProcessAlive == nil || *r.rep.Checks.ProcessAlive {
		t.Errorf("checks = %+v, want process_alive false", r.rep.Checks)
	}
	if names := r.reqs[0].ToolNames(); !slices.Contains(names, "cdp_click") || !slices.Contains(names, "cdp_url") || slices.Contains(names, "click_element") {
		t.Errorf("tools sent = %v, want the cdp_* tools of an attached tab", names)
	}
}

// TestRulesStuck checks the progress hints: the same call repeated on an
// unchanged screen, and actions that leave the screen as it was, each give
// the model a note and the report a concern; calls the guards stopped do
// not count.
func TestRulesStuck(t *testing.T) {
	t.Parallel()
	probe := func(where string) mt.Exchange { return mt.Call("probe", `{"state": "ready", "where": "`+where+`"}`) }
	rulesRun(t, []rulesCase{
		{loopTurnCase: loopTurnCase{
			name:    "the same call three times",
			script:  []mt.Exchange{loopObserve, mt.Call("teleport", `{}`), loopObserve, loopObserve, loopGoalMet},
			verdict: events.VerdictPassConcerns, outcome: OutcomeCompleted, iterations: 5, malforms: 1,
			steps: []loopStep{{"observe_screen", "ok", ""}, {"teleport", "malformed", ""}, {"observe_screen", "ok", ""},
				{"observe_screen", "ok", ""}, {"record_verdict", "ok", ""}},
			check: func(t *testing.T, r loopResult) {
				if !slices.Equal(r.rep.Concerns, []string{"the loop looked stuck: the same call repeated with no change on the screen", nothingVerified}) {
					t.Errorf("concerns = %q", r.rep.Concerns)
				}
				if got := loopLastText(r.reqs[4]); !strings.Contains(got, "Note: you made the same call (observe_screen) 3 times in a row and the screen did not change. Try something else.") {
					t.Errorf("the hint did not reach the model:\n%s", got)
				}
				if got := loopLastText(r.reqs[3]); strings.Contains(got, "Note:") {
					t.Errorf("a hint came after two calls:\n%s", got)
				}
			},
		}, machine: func() (*fakeMachine, []mt.Exchange) { return &fakeMachine{still: true}, nil }},
		{loopTurnCase: loopTurnCase{
			name:    "actions that leave the screen unchanged",
			script:  []mt.Exchange{probe("here"), probe("there"), probe("here"), probe("there"), probe("here"), loopGoalMet},
			verdict: events.VerdictPassConcerns, outcome: OutcomeCompleted, iterations: 6,
			steps: []loopStep{{"probe", "ok", ""}, {"probe", "ok", ""}, {"probe", "ok", ""}, {"probe", "ok", ""},
				{"probe", "ok", ""}, {"record_verdict", "ok", ""}},
			check: func(t *testing.T, r loopResult) {
				if !slices.Equal(r.rep.Concerns, []string{"the loop looked stuck: several actions in a row left the screen unchanged", nothingVerified}) {
					t.Errorf("concerns = %q", r.rep.Concerns)
				}
				if got := loopLastText(r.reqs[5]); !strings.Contains(got, "Note: your last 4 actions left the screen unchanged. Reconsider your approach.") {
					t.Errorf("the hint did not reach the model:\n%s", got)
				}
				if got := loopLastText(r.reqs[4]); strings.Contains(got, "Note:") {
					t.Errorf("a hint came after three actions:\n%s", got)
				}
			},
		}, scenario: rulesProbe, machine: func() (*fakeMachine, []mt.Exchange) { return &fakeMachine{still: true}, nil }},
		{loopTurnCase: loopTurnCase{
			name:    "a changing screen is progress",
			script:  []mt.Exchange{loopObserve, mt.Call("press_key", `{"key": "a"}`), loopObserve, mt.Call("press_key", `{"key": "a"}`), loopObserve, mt.Call("press_key", `{"key": "a"}`), loopGoalMet},
			verdict: loopUnverified, outcome: OutcomeCompleted, iterations: 7,
			steps: []loopStep{{"observe_screen", "ok", ""}, {"press_key", "ok", ""}, {"observe_screen", "ok", ""}, {"press_key", "ok", ""},
				{"observe_screen", "ok", ""}, {"press_key", "ok", ""}, {"record_verdict", "ok", ""}},
			check: func(t *testing.T, r loopResult) {
				for i, req := range r.reqs {
					if strings.Contains(loopLastText(req), "Note:") {
						t.Errorf("request %d carries a hint although every action changed the screen", i+1)
					}
				}
			},
		}},
	})
}

// TestRulesModelName checks that the operator's model.name is the model
// the requests ask for, and that without one the profile's own is kept.
func TestRulesModelName(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"", "my-served-model"} {
		t.Run("name="+name, func(t *testing.T) {
			t.Parallel()
			op := loopOperator
			if name != "" {
				op = loopOp("", "  name: "+name+"\n")
			}
			r := loopRun(t, loopCase{scenario: rulesGoal, operator: op, script: []mt.Exchange{loopGoalMet}, machine: &fakeMachine{}})
			loopWant(t, r, loopUnverified, OutcomeCompleted, 1, 0)
			got := r.reqs[0].Model()
			if name != "" && got != name || name == "" && (got == "" || got == "my-served-model") {
				t.Errorf("the request asks for model %q (operator model.name %q)", got, name)
			}
		})
	}
}

// TestRulesToolList checks the operator's tools.disabled and the tools a
// launch may add (what `kasmrt validate` lists as pending).
func TestRulesToolList(t *testing.T) {
	t.Parallel()
	t.Run("disabled built-ins are not offered", func(t *testing.T) {
		t.Parallel()
		op := loopOperator + "tools:\n  disabled: [press_key, wait]\n"
		r := loopRun(t, loopCase{scenario: rulesProbe, operator: op, script: []mt.Exchange{mt.Call("press_key", `{"key": "a"}`), loopGoalMet}, machine: &fakeMachine{}})
		loopWant(t, r, loopUnverified, OutcomeCompleted, 2, 1)
		loopWantSteps(t, r.rep, loopStep{"press_key", "malformed", `unknown tool "press_key"`}, loopStep{"record_verdict", "ok", ""})
		names := r.reqs[0].ToolNames()
		if slices.Contains(names, "press_key") || slices.Contains(names, "wait") || !slices.Contains(names, "probe") || !slices.Contains(names, "click") {
			t.Errorf("tools sent = %v, want no press_key or wait, with the declared probe", names)
		}
	})
	t.Run("pending tools", func(t *testing.T) {
		t.Parallel()
		cases := []struct {
			name, scenario string
			want           []string
		}{
			{"an app may publish named controls", rulesApp + "steps:\n  - observe_screen: {}\n", []string{"click_element"}},
			// The targets' and waits' tools follow from the files alone.
			{"a browser brings its tab's tools", rulesBrowser + "steps:\n  - observe_screen: {}\n",
				[]string{"cdp_click_described", "cdp_list_interactive", "cdp_url"}},
		}
		for _, c := range cases {
			files := loadRunFiles(t, t.TempDir(), c.scenario, "", map[string]string{"APP_PASSWORD": "pw"})
			var got []string
			for _, spec := range PendingTools(files) {
				got = append(got, spec.Name)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("%s: pending %v, want %v", c.name, got, c.want)
			}
		}
	})
}

// TestRulesScript checks how a script ends: a failing check step is the
// app's failure, an app that finishes its job early leaves a concern for
// the steps that did not run.
func TestRulesScript(t *testing.T) {
	t.Parallel()
	steps := func(s string) string {
		return rulesProbe[:strings.Index(rulesProbe, "goal:")] + rulesProbe[strings.Index(rulesProbe, "tools:"):] + "steps:\n" + s
	}
	rulesRun(t, []rulesCase{
		{loopTurnCase: loopTurnCase{
			name:    "a failing declared tool fails the step",
			verdict: events.VerdictAppFailed, outcome: OutcomeStepFailed,
			steps: []loopStep{{"probe", "ok", "ready"}, {"probe", "error", "not ready"}},
			check: func(t *testing.T, r loopResult) {
				if !slices.Contains(r.rep.Reasons, "step 2 (probe) failed: probe exited with status 4: not ready") {
					t.Errorf("reasons = %q", r.rep.Reasons)
				}
			},
		}, scenario: steps("  - probe: {state: ready, where: here}\n  - probe: {state: broken, where: here}\n  - press_key: Return\n")},
		{loopTurnCase: loopTurnCase{
			name:    "an app done early leaves a concern",
			verdict: events.VerdictPassConcerns, outcome: OutcomeCompleted,
			steps: []loopStep{{"type_text", "ok", ""}, {"press_key", "ok", ""}},
			check: func(t *testing.T, r loopResult) {
				if !slices.Equal(r.rep.Concerns, []string{"the application exited successfully after step 2; 2 later steps did not run"}) {
					t.Errorf("concerns = %q", r.rep.Concerns)
				}
			},
		}, scenario: strings.Replace(steps("  - type_text: {ref: quit}\n  - press_key: Return\n  - press_key: a\n  - press_key: b\n"),
			"  command: [fake-app]\n", "  command: [fake-app]\n  success_exit_codes: [0]\n", 1),
			machine: func() (*fakeMachine, []mt.Exchange) { return &fakeMachine{on: fakeShell}, nil }},
		{loopTurnCase: loopTurnCase{
			name:    "an app done at the last step leaves none",
			verdict: events.VerdictPass, outcome: OutcomeCompleted,
			steps: []loopStep{{"type_text", "ok", ""}, {"press_key", "ok", ""}},
		}, scenario: strings.Replace(steps("  - type_text: {ref: quit}\n  - press_key: Return\n"),
			"  command: [fake-app]\n", "  command: [fake-app]\n  success_exit_codes: [0]\n", 1),
			machine: func() (*fakeMachine, []mt.Exchange) { return &fakeMachine{on: fakeShell}, nil }},
		{loopTurnCase: loopTurnCase{
			name:    "a click with no window to aim at",
			verdict: events.VerdictTestError, outcome: OutcomeStepError,
			steps: []loopStep{{"click", "error", "the application window is not known"}},
		}, scenario: rulesBrowser + "steps:\n  - click: center\n", env: map[string]string{"APP_PASSWORD": "pw"}},
	})
}

// rulesSlowTools declares tools that time out, flood their output, and
// fail, to test how a declared tool's run is reported.
const rulesSlowTools = rulesGoal + `tools:
  slow:
    description: Never finishes in time.
    run: shell
    command: sleep 5
    timeout_s: 0.2
  flood:
    description: Writes more than is kept.
    run: shell
    command: head -c 100000 /dev/zero | tr '\0' x
  broken:
    description: Always fails.
    run: shell
    command: echo broken >&2; exit 2
  fine:
    description: Always succeeds.
    run: shell
    command: "true"
  display:
    description: Says which display it runs on.
    run: shell
    command: echo "display=$DISPLAY"
`

// TestRulesDeclaredRuns checks how declared tools end: killed at their
// timeout, output cut and said so, and failures counted in a row only.
func TestRulesDeclaredRuns(t *testing.T) {
	t.Parallel()
	call := func(name string) mt.Exchange { return mt.Call(name, `{}`) }
	rulesRun(t, []rulesCase{
		{loopTurnCase: loopTurnCase{
			name:    "a timeout kills the tool",
			script:  []mt.Exchange{call("slow"), loopGoalMet},
			verdict: loopUnverified, outcome: OutcomeCompleted, iterations: 2,
			steps: []loopStep{{"slow", "error", "slow timed out after 200ms and was killed"}, {"record_verdict", "ok", ""}},
		}, scenario: rulesSlowTools},
		{loopTurnCase: loopTurnCase{
			name:    "a flood is cut and said so",
			script:  []mt.Exchange{call("flood"), loopGoalMet},
			verdict: loopUnverified, outcome: OutcomeCompleted, iterations: 2,
			steps: []loopStep{{"flood", "ok", "[stdout cut at 65536 bytes]"}, {"record_verdict", "ok", ""}},
			check: func(t *testing.T, r loopResult) {
				if n := len(r.rep.Steps[0].Message); n > 2200 {
					t.Errorf("the flood's message is %d bytes, want the last 2,000 of its output and the note", n)
				}
			},
		}, scenario: rulesSlowTools},
		{loopTurnCase: loopTurnCase{
			name:    "a declared tool runs on the session's display",
			script:  []mt.Exchange{call("display"), loopGoalMet},
			verdict: loopUnverified, outcome: OutcomeCompleted, iterations: 2,
			steps: []loopStep{{"display", "ok", "display succeeded: display=:fake"}, {"record_verdict", "ok", ""}},
		}, scenario: rulesSlowTools},
		{loopTurnCase: loopTurnCase{
			// Two failures with a success between them: the bound of two
			// in a row is not reached (the consecutive count), the report
			// counts both (the total), and the tool_errors budget shows the
			// one since the success. Mixing the two counts up breaks one
			// of the three.
			name:     "a success resets the failures in a row",
			operator: loopOp("  max_tool_errors: 2\n", ""),
			script:   []mt.Exchange{call("broken"), call("fine"), call("broken"), loopGoalMet},
			verdict:  loopUnverified, outcome: OutcomeCompleted, iterations: 4,
			steps: []loopStep{{"broken", "error", "broken exited with status 2: broken"}, {"fine", "ok", "fine succeeded"},
				{"broken", "error", ""}, {"record_verdict", "ok", ""}},
			check: func(t *testing.T, r loopResult) {
				if r.rep.Loop.ToolErrors != 2 {
					t.Errorf("loop.tool_errors = %d, want 2 in all", r.rep.Loop.ToolErrors)
				}
				used := -1.0
				for _, b := range r.rep.Budgets {
					if b.Name == "tool_errors" {
						used = b.Used
					}
				}
				if used != 1 {
					t.Errorf("the tool_errors budget used %v, want 1: the failures since the last success (budgets %+v)", used, r.rep.Budgets)
				}
			},
		}, scenario: rulesSlowTools},
	})
}

// TestRulesWait checks the wait tool's endings other than its time: the
// app exiting and the X server going away.
func TestRulesWait(t *testing.T) {
	t.Parallel()
	wait := mt.Call("wait", `{"seconds": 20}`)
	rulesRun(t, []rulesCase{
		{loopTurnCase: loopTurnCase{
			name:    "the app exits during the wait",
			verdict: events.VerdictAppFailed, outcome: OutcomeAppExited, iterations: 1,
			steps: []loopStep{{"wait", "ok", "the application exited"}},
		}, machine: func() (*fakeMachine, []mt.Exchange) {
			f := &fakeMachine{}
			return f, []mt.Exchange{mt.Func(func(mt.Request) mt.Exchange { go f.exitApp(3); return wait })}
		}},
		{loopTurnCase: loopTurnCase{
			name:    "the X server goes away during the wait",
			verdict: events.VerdictTestError, outcome: OutcomeSessionLost, iterations: 1,
			steps: []loopStep{{"wait", "error", "the X server went away"}},
		}, machine: func() (*fakeMachine, []mt.Exchange) {
			f := &fakeMachine{}
			return f, []mt.Exchange{mt.Func(func(mt.Request) mt.Exchange { go f.loseSession(); return wait })}
		}},
	})
}

// TestRulesInterrupted checks a step the operator's abort cuts short: an
// action that completed anyway is not reported as done, and a wait keeps
// its own account of the interruption; Ctrl-C ends the run as interrupted,
// not as an abort or the deadline.
func TestRulesInterrupted(t *testing.T) {
	t.Parallel()
	t.Run("an action finished after the abort", func(t *testing.T) {
		t.Parallel()
		var run *Runner
		f := &fakeMachine{on: func(f *fakeMachine, in string) {
			if in == "key a" {
				run.Steer(events.Steer{Action: events.SteerAbort})
			}
		}}
		r := loopRun(t, loopCase{scenario: rulesApp + "steps:\n  - press_key: a\n  - press_key: b\n", operator: "runner: {}\n",
			machine: f, before: func(r *Runner) { run = r }})
		loopWant(t, r, events.VerdictTestError, OutcomeAborted, 0, 0)
		loopWantSteps(t, r.rep, loopStep{"press_key", "error", "press_key was interrupted: context canceled"})
		if got := f.inputs(); !slices.Equal(got, []string{"key a"}) {
			t.Errorf("input = %q: nothing may run after the abort", got)
		}
	})
	t.Run("a wait cut short", func(t *testing.T) {
		t.Parallel()
		r := loopRun(t, loopCase{scenario: rulesGoal, machine: &fakeMachine{},
			script: []mt.Exchange{mt.Call("wait", `{"seconds": 20}`), loopGoalMet},
			sink: func(run *Runner, e events.Event) {
				if e.Kind == events.KindStepStarted && e.Tool == "wait" {
					go run.Steer(events.Steer{Action: events.SteerAbort})
				}
			}})
		loopWant(t, r, events.VerdictTestError, OutcomeAborted, 1, 0)
		loopWantSteps(t, r.rep, loopStep{"wait", "error", "wait interrupted: context canceled"})
	})
	t.Run("Ctrl-C mid-step", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		r := loopRun(t, loopCase{ctx: ctx, scenario: rulesApp + "steps:\n  - observe_screen: {}\n  - wait: 20\n", operator: "runner: {}\n", machine: &fakeMachine{},
			sink: func(_ *Runner, e events.Event) {
				if e.Kind == events.KindStepStarted && e.Tool == "wait" {
					cancel()
				}
			}})
		loopWant(t, r, events.VerdictTestError, OutcomeInterrupted, 0, 0)
		if len(r.rep.Reasons) == 0 || !strings.HasPrefix(r.rep.Reasons[0], "the run was interrupted (") {
			t.Errorf("reasons = %q, want the interruption first", r.rep.Reasons)
		}
	})
	// A judgement the run's own stop cut short is the interruption, not a
	// judge that was unavailable: no concern says so.
	for _, tool := range []string{"check_expectation", "click_grounded"} {
		t.Run("Ctrl-C while the judge looks at "+tool, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			stop := mt.Func(func(mt.Request) mt.Exchange {
				cancel(errors.New("interrupt signal received"))
				return mt.Delay(10*time.Second, mt.Text(`{"met": true, "reason": "late"}`))
			})
			script := []mt.Exchange{loopObserve, mt.Call("check_expectation", `{"expectation": "the greeting is shown"}`), stop}
			if tool == "click_grounded" {
				script = []mt.Exchange{loopObserve, mt.Call("click_grounded", `{"description": "the OK button", "expect": "the dialog closes"}`),
					mt.Text(`{"point": [220, 140]}`), stop}
			}
			r := loopRun(t, loopCase{ctx: ctx, machine: &fakeMachine{}, script: script})
			loopWant(t, r, events.VerdictTestError, OutcomeInterrupted, 2, 0)
			if len(r.rep.Concerns) != 0 {
				t.Errorf("concerns = %q, want none: the run's stop is not the judge's failing", r.rep.Concerns)
			}
		})
	}
	// A goal loop stopped while the model thinks says why it ended as the
	// verdict does: a Ctrl-C or an abort is not the run's time running out.
	for _, c := range []struct {
		name    string
		outcome events.Outcome
		ended   string
	}{
		{"Ctrl-C while the model thinks", OutcomeInterrupted, "the run was interrupted (interrupt signal received)"},
		{"an abort while the model thinks", OutcomeAborted, "the operator aborted the run"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			var run *Runner
			r := loopRun(t, loopCase{ctx: ctx, machine: &fakeMachine{}, script: []mt.Exchange{loopObserve, mt.Func(func(mt.Request) mt.Exchange {
				if c.outcome == OutcomeAborted {
					go run.Steer(events.Steer{Action: events.SteerAbort})
				} else {
					cancel(errors.New("interrupt signal received"))
				}
				return mt.Delay(10*time.Second, loopGoalMet)
			})}, before: func(r *Runner) { run = r }})
			loopWant(t, r, events.VerdictTestError, c.outcome, 2, 0)
			if r.rep.Loop.Ended != c.ended {
				t.Errorf("loop.ended = %q, want %q", r.rep.Loop.Ended, c.ended)
			}
		})
	}
}

// TestRulesScriptDriverEndings checks how a scripted step's driver trouble
// is named: the X server gone is the cause even when the step failed
// first, and a window that refuses focus is logged without failing input.
func TestRulesScriptDriverEndings(t *testing.T) {
	t.Parallel()
	t.Run("the X server lost during a step", func(t *testing.T) {
		t.Parallel()
		f := &fakeMachine{on: func(f *fakeMachine, in string) { f.loseSession() }}
		r := loopRun(t, loopCase{scenario: rulesApp + "steps:\n  - press_key: a\n  - press_key: b\n", operator: "runner: {}\n", machine: f})
		loopWant(t, r, events.VerdictTestError, OutcomeSessionLost, 0, 0)
		loopWantSteps(t, r.rep, loopStep{"press_key", "error", "X connection closed"})
	})
	t.Run("the X server dying after its app is still the cause", func(t *testing.T) {
		t.Parallel()
		// The server dies while the script waits: nothing else would look
		// at it before the grace the engine gives it.
		f := &fakeMachine{}
		r := loopRun(t, loopCase{scenario: rulesApp + "steps:\n  - wait: 5\n  - press_key: b\n", operator: "runner: {}\n", machine: f,
			sink: func(_ *Runner, e events.Event) {
				if e.Kind == events.KindStepStarted && e.Tool == "wait" {
					go f.crashSession()
				}
			}})
		loopWant(t, r, events.VerdictTestError, OutcomeSessionLost, 0, 0)
	})
	t.Run("a settle wait that fails is a driver failure", func(t *testing.T) {
		t.Parallel()
		f := &fakeMachine{settleErr: errors.New("GetImage: BadDrawable")}
		r := loopRun(t, loopCase{scenario: rulesApp + "wait_conditions:\n  busy: {screen_changing: true, timeout_s: 5}\nsteps:\n  - wait_while: busy\n",
			operator: "runner: {}\n", machine: f})
		loopWant(t, r, events.VerdictTestError, OutcomeStepError, 0, 0)
		loopWantSteps(t, r.rep, loopStep{"wait_while", "error", "BadDrawable"})
		if d := r.rep.Steps[0].DurationMS; d > 4000 {
			t.Errorf("the failed wait took %d ms: the error must end it, not its 5 s timeout", d)
		}
	})
	t.Run("focus refused", func(t *testing.T) {
		t.Parallel()
		f := &fakeMachine{focusErr: errors.New("BadMatch (focus)")}
		r := loopRun(t, loopCase{scenario: rulesApp + "steps:\n  - press_key: a\n", operator: "runner: {}\n", machine: f})
		loopWant(t, r, events.VerdictPass, OutcomeCompleted, 0, 0)
		logged := false
		for _, e := range loopEvents(r, events.KindLog) {
			logged = logged || strings.Contains(e.Message, "focus the application window: BadMatch (focus)")
		}
		if !logged {
			t.Error("the refused focus was not logged")
		}
	})
	t.Run("focus on a window just gone is not logged", func(t *testing.T) {
		t.Parallel()
		f := &fakeMachine{focusErr: desktop.ErrWindowGone}
		r := loopRun(t, loopCase{scenario: rulesApp + "steps:\n  - press_key: a\n", operator: "runner: {}\n", machine: f})
		stepping := false
		for _, e := range r.events {
			stepping = stepping || e.Kind == events.KindStepStarted
			if stepping && e.Kind == events.KindLog && strings.Contains(e.Message, "focus the application window") {
				t.Errorf("logged %q during the step: a window that is gone is the checks' to report", e.Message)
			}
		}
	})
}
