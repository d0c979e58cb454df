package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/engine/events"
	mt "github.com/kasmrt/kasmrt/engine/model/modeltest"
)

// TestLoopValidCalls drives xterm through the loop with well-formed calls:
// the model observes, types, observes, presses Return and records goal-met;
// the runtime's checks pass, so the run passes.
func TestLoopValidCalls(t *testing.T) {
	t.Parallel()
	r := loopRun(t, loopCase{script: []mt.Exchange{
		mt.Call("observe_screen", `{}`),
		mt.Call("type_text", `{"ref": "greeting"}`),
		mt.Call("observe_screen", `{}`),
		mt.Call("press_key", `{"key": "Return"}`),
		mt.Call("record_verdict", `{"verdict": "goal-met", "reason": "hello is printed"}`).WithUsage(map[string]any{"prompt_tokens": 200}),
	}})
	loopWant(t, r, loopUnverified, OutcomeCompleted, 5, 0)
	loopWantSteps(t, r.rep,
		loopStep{"observe_screen", "ok", "observed the screen (640x400)"},
		loopStep{"type_text", "ok", `typed the value "greeting" (10 characters)`},
		loopStep{"observe_screen", "ok", "observed"},
		loopStep{"press_key", "ok", "pressed Return"},
		loopStep{"record_verdict", "ok", "recorded goal-met"},
	)
	if mv := r.rep.ModelVerdict; mv == nil || mv.Verdict != "goal-met" || mv.Reason != "hello is printed" {
		t.Errorf("model_verdict = %+v", mv)
	}
	if !strings.Contains(r.rep.Loop.Ended, "goal-met") {
		t.Errorf("loop.ended = %q", r.rep.Loop.Ended)
	}
	if got := r.rep.Usage.Total; got["prompt_tokens"] != 600 || got["completion_tokens"] != 50 || got["total_tokens"] != 550 {
		t.Errorf("usage.total = %v, want prompt 4×100+200, completion 5×10, total 5×110", got)
	}
	if len(r.reqs) != 5 {
		t.Fatalf("%d requests, want 5", len(r.reqs))
	}
	first := r.reqs[0]
	names := first.ToolNames()
	if !slices.IsSorted(names) || !slices.Contains(names, "click_grounded") || !slices.Contains(names, "observe_screen") {
		t.Errorf("tools sent = %v, want sorted with click_grounded", names)
	}
	msgs := first.Messages()
	if len(msgs) != 2 || msgs[0]["role"] != "system" || msgs[1]["role"] != "user" {
		t.Fatalf("first request messages: %v", first)
	}
	user := loopContentText(msgs[1])
	for _, want := range []string{"Goal: Print the greeting in the terminal.", "1. Observe the screen.", "2. Type the greeting with type_text.", "greeting, quit"} {
		if !strings.Contains(user, want) {
			t.Errorf("first user message lacks %q:\n%s", want, user)
		}
	}
	if strings.Contains(string(first.Raw), "echo hello") {
		t.Error("the provided value reached the model")
	}
	// The screen the model observed is in the next request.
	if imgs, err := r.reqs[1].Images(); err != nil || len(imgs) != 1 {
		t.Errorf("request 2 has %d images (%v), want the observed screen", len(imgs), err)
	}
}

// loopTurnCase is one table row of the turn-handling tests.
type loopTurnCase struct {
	name                 string
	operator             string
	script               []mt.Exchange
	verdict              events.Verdict
	outcome              events.Outcome
	iterations, malforms int
	steps                []loopStep
	check                func(t *testing.T, r loopResult)
}

var loopOperatorRetry = strings.Replace(loopOperator, "runner:\n", "runner:\n  max_retries_per_step: 5\n", 1)

func loopRunTurnCases(t *testing.T, cases []loopTurnCase) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := loopRun(t, loopCase{operator: c.operator, script: c.script, machine: &fakeMachine{}})
			loopWant(t, r, c.verdict, c.outcome, c.iterations, c.malforms)
			loopWantSteps(t, r.rep, c.steps...)
			if c.check != nil {
				c.check(t, r)
			}
		})
	}
}

var (
	loopObserve = mt.Call("observe_screen", `{}`)
	loopGoalMet = mt.Call("record_verdict", `{"verdict": "goal-met", "reason": "done"}`)
	loopOKSteps = []loopStep{{"observe_screen", "ok", "observed"}, {"record_verdict", "ok", "recorded goal-met"}}
)

// TestLoopTurns covers every way a model turn can go wrong: several calls,
// unknown tools, bad arguments, input before observing, and calls written
// as text.
func TestLoopTurns(t *testing.T) {
	t.Parallel()
	loopRunTurnCases(t, []loopTurnCase{
		{
			name:    "several calls in one turn",
			script:  []mt.Exchange{mt.Calls(loopObserve, mt.Call("press_key", `{"key": "a"}`)), loopObserve, loopGoalMet},
			verdict: loopUnverified, outcome: OutcomeCompleted, iterations: 3, malforms: 1,
			steps: append([]loopStep{
				{"observe_screen", "malformed", "2 calls in one turn; none was executed. Make exactly one tool call per turn."},
				{"press_key", "malformed", "2 calls in one turn; none was executed"},
			}, loopOKSteps...),
			check: func(t *testing.T, r loopResult) {
				var answered []string
				for _, m := range r.reqs[1].Messages() {
					if m["role"] == "tool" && strings.Contains(loopContentText(m), "Make exactly one tool call per turn") {
						answered = append(answered, m["tool_call_id"].(string))
					}
				}
				if !slices.Equal(answered, []string{"call_1", "call_2"}) {
					t.Errorf("one-call errors answered %v, want call_1 and call_2", answered)
				}
				if n := len(loopScreens(r)); n != 1 {
					t.Errorf("%d screens captured, want 1: nothing of the rejected turn ran", n)
				}
			},
		},
		{
			name:    "unknown tool",
			script:  []mt.Exchange{mt.Call("teleport", `{"to": "mars"}`), loopObserve, loopGoalMet},
			verdict: loopUnverified, outcome: OutcomeCompleted, iterations: 3, malforms: 1,
			steps: append([]loopStep{{"teleport", "malformed", `unknown tool "teleport"; the tools available are: check_expectation, click, click_grounded, escalate, observe_screen, press_key, record_verdict, type_text, wait`}}, loopOKSteps...),
			check: func(t *testing.T, r loopResult) {
				if !strings.Contains(loopLastText(r.reqs[1]), `unknown tool "teleport"; the tools available are: check_expectation, click`) {
					t.Errorf("the model was not told the tool list:\n%s", loopLastText(r.reqs[1]))
				}
			},
		},
		{
			name:     "bad arguments",
			operator: loopOperatorRetry,
			script: []mt.Exchange{
				loopObserve,
				mt.Call("press_key", `{}`),
				mt.Call("press_key", `{"key": 7}`),
				mt.Call("record_verdict", `{"verdict": "maybe", "reason": "unsure"}`),
				mt.Call("wait", `{"seconds": 31}`),
				mt.Call("wait", `{"seconds": 0}`),
				loopGoalMet,
			},
			verdict: loopUnverified, outcome: OutcomeCompleted, iterations: 7, malforms: 4,
			steps: []loopStep{
				{"observe_screen", "ok", "observed"},
				{"press_key", "malformed", "key"},
				{"press_key", "malformed", "key"},
				{"record_verdict", "malformed", "verdict"},
				{"wait", "malformed", "seconds"},
				{"wait", "ok", "waited 0s"},
				{"record_verdict", "ok", "recorded goal-met"},
			},
		},
		{
			name: "input before observing",
			script: []mt.Exchange{
				mt.Call("click_grounded", `{"description": "the prompt", "expect": "the cursor moves"}`),
				mt.Call("click", `{"target": "center"}`),
				mt.Call("type_text", `{"ref": "greeting"}`),
				loopObserve,
				mt.Call("type_text", `{"ref": "greeting"}`),
				mt.Call("press_key", `{"key": "Return"}`),
				loopObserve,
				mt.Call("click", `{"target": "center"}`),
				loopGoalMet,
			},
			verdict: loopUnverified, outcome: OutcomeCompleted, iterations: 9, malforms: 0,
			steps: []loopStep{
				{"click_grounded", "refused", "click_grounded refused: the screen changed since the last observation"},
				{"click", "refused", "click refused: the screen changed since the last observation; call observe_screen (or check_expectation) first"},
				{"type_text", "refused", "call observe_screen"},
				{"observe_screen", "ok", "observed"},
				{"type_text", "ok", "typed"},
				{"press_key", "refused", "call observe_screen"},
				{"observe_screen", "ok", "observed"},
				{"click", "ok", "clicked center"},
				{"record_verdict", "ok", "recorded goal-met"},
			},
		},
		{
			name: "tool calls as text",
			script: []mt.Exchange{
				mt.Text("I will look first.\n<tool_call>\n{\"name\": \"observe_screen\", \"arguments\": {}}\n</tool_call>"),
				mt.Text("Done.\n```json\n{\"name\": \"record_verdict\", \"arguments\": {\"verdict\": \"goal-met\", \"reason\": \"done\"}}\n```"),
			},
			verdict: loopUnverified, outcome: OutcomeCompleted, iterations: 2, malforms: 0,
			steps: loopOKSteps,
			check: func(t *testing.T, r loopResult) {
				if r.rep.Loop.Rescued != 2 {
					t.Errorf("loop.rescued = %d, want 2", r.rep.Loop.Rescued)
				}
			},
		},
		{
			name:    "empty reply",
			script:  []mt.Exchange{mt.Empty(), mt.Text("I think it is fine."), loopObserve, loopGoalMet},
			verdict: loopUnverified, outcome: OutcomeCompleted, iterations: 4, malforms: 2,
			steps: loopOKSteps,
			check: func(t *testing.T, r loopResult) {
				if !strings.Contains(loopLastText(r.reqs[1]), "Your reply had no tool call. Reply with exactly one call to one of: check_expectation, click,") {
					t.Errorf("request 2 does not nudge the model:\n%s", loopLastText(r.reqs[1]))
				}
			},
		},
		{
			name:    "truncated JSON and garbage",
			script:  []mt.Exchange{mt.Garbage(`{"id": "x", "choices": [{"message": {"role": "assis`), mt.Garbage("<html>bad gateway</html>"), loopObserve, loopGoalMet},
			verdict: loopUnverified, outcome: OutcomeCompleted, iterations: 4, malforms: 2,
			steps: loopOKSteps,
		},
	})
}

// loopScreens returns the screens the run captured, from its events.
func loopScreens(r loopResult) []string {
	var out []string
	for _, e := range r.events {
		// A diagnostic screen documents a failed call; it is not one that ran.
		if d, _ := e.Data.(events.ScreenCaptured); e.Kind == events.KindScreen && !d.Diagnostic {
			out = append(out, e.Screen)
		}
	}
	return out
}

// loopOp returns the base operator file with lines added to its runner
// and model sections.
func loopOp(runner, model string) string {
	op := strings.Replace(loopOperator, "runner:\n", "runner:\n"+runner, 1)
	return strings.Replace(op, "model:\n", "model:\n"+model, 1)
}

func loopRepeat(n int, ex mt.Exchange) []mt.Exchange {
	out := make([]mt.Exchange, n)
	for i := range out {
		out[i] = ex
	}
	return out
}

func loopEvents(r loopResult, kind events.Kind) []events.Event {
	var out []events.Event
	for _, e := range r.events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// TestLoopModelFailures covers the endpoint's failures: retried statuses,
// timeouts, statuses that fail at once, and model.disable_after.
func TestLoopModelFailures(t *testing.T) {
	t.Parallel()
	retry8 := "  retry: 8\n"
	loopRunTurnCases(t, []loopTurnCase{
		{
			name:     "429 then success",
			operator: strings.Replace(loopOperator, "  retry: 0\n", "  retry: 2\n", 1),
			script:   []mt.Exchange{mt.Status(429, 2*time.Second), loopObserve, loopGoalMet},
			verdict:  loopUnverified, outcome: OutcomeCompleted, iterations: 2,
			steps: loopOKSteps,
			check: func(t *testing.T, r loopResult) {
				retries := loopEvents(r, events.KindModelRetry)
				if len(retries) != 1 || retries[0].Data.(events.ModelRetry).Status != 429 {
					t.Errorf("model.retry events = %+v, want one for the 429", retries)
				} else if d := retries[0].Data.(events.ModelRetry).DelayMS; d != 2000 {
					t.Errorf("retry delay = %v, want Retry-After's 2000 ms", d)
				}
				if n := len(loopEvents(r, events.KindModelFailed)); n != 0 {
					t.Errorf("%d model.failed events, want 0", n)
				}
				if len(r.reqs) != 3 {
					t.Errorf("%d requests, want 3", len(r.reqs))
				}
			},
		},
		{
			name:     "500 nine times is one failed call",
			operator: strings.Replace(loopOperator, "  retry: 0\n", retry8, 1),
			script:   append(loopRepeat(9, mt.Status(500)), loopObserve, loopGoalMet),
			verdict:  loopUnverified, outcome: OutcomeCompleted, iterations: 3,
			steps: loopOKSteps,
			check: func(t *testing.T, r loopResult) {
				failed := loopEvents(r, events.KindModelFailed)
				if len(failed) != 1 || !strings.Contains(failed[0].Message, "model turn (9 attempts): model endpoint replied HTTP 500") {
					t.Errorf("model.failed events = %+v", failed)
				}
				if n := len(loopEvents(r, events.KindModelRetry)); n != 8 {
					t.Errorf("%d retries, want 8", n)
				}
				if len(r.reqs) != 11 {
					t.Errorf("%d requests, want 11", len(r.reqs))
				}
			},
		},
		{
			name:     "500 nine times with disable_after 1 degrades",
			operator: strings.Replace(loopOperator, "  retry: 0\n", retry8+"  disable_after: 1\n", 1),
			script:   loopRepeat(9, mt.Status(500)),
			verdict:  events.VerdictPassConcerns, outcome: OutcomeDegraded, iterations: 1,
			check: func(t *testing.T, r loopResult) {
				if r.rep.ModelVerdict != nil {
					t.Errorf("model_verdict = %+v, want null", r.rep.ModelVerdict)
				}
				if !loopHasConcern(r.rep, "model.disable_after = 1") || !strings.Contains(r.rep.Loop.Ended, "degraded: the model is off") {
					t.Errorf("concerns %q, loop.ended %q", r.rep.Concerns, r.rep.Loop.Ended)
				}
				if n := len(loopEvents(r, events.KindModelDisabled)); n != 1 {
					t.Errorf("%d model.disabled events, want 1", n)
				}
			},
		},
		{
			name:     "two failed calls reach the default disable_after",
			operator: loopOperator,
			script:   []mt.Exchange{mt.Status(503), mt.Status(502)},
			verdict:  events.VerdictPassConcerns, outcome: OutcomeDegraded, iterations: 2,
			check: func(t *testing.T, r loopResult) {
				if !loopHasConcern(r.rep, "failed 2 calls in a row (model.disable_after = 2)") {
					t.Errorf("concerns %q", r.rep.Concerns)
				}
			},
		},
		{
			name:     "timeout then success",
			operator: strings.Replace(loopOperator, "  retry: 0\n  timeout: 5\n", "  retry: 1\n  timeout: 1\n", 1),
			script:   []mt.Exchange{mt.Delay(3*time.Second, loopObserve), loopObserve, loopGoalMet},
			verdict:  loopUnverified, outcome: OutcomeCompleted, iterations: 2,
			steps: loopOKSteps,
			check: func(t *testing.T, r loopResult) {
				retries := loopEvents(r, events.KindModelRetry)
				if len(retries) != 1 || !strings.Contains(retries[0].Message, "timed out") {
					t.Errorf("model.retry events = %+v, want one timeout", retries)
				}
			},
		},
		{
			name:     "400 fails at once",
			operator: strings.Replace(loopOperator, "  retry: 0\n", retry8, 1),
			script:   []mt.Exchange{mt.Status(400), loopObserve, loopGoalMet},
			verdict:  loopUnverified, outcome: OutcomeCompleted, iterations: 3,
			steps: loopOKSteps,
			check: func(t *testing.T, r loopResult) {
				failed := loopEvents(r, events.KindModelFailed)
				if len(failed) != 1 || !strings.Contains(failed[0].Message, "(1 attempts): model endpoint replied HTTP 400") {
					t.Errorf("model.failed events = %+v", failed)
				}
				if len(r.reqs) != 3 {
					t.Errorf("%d requests, want 3: a 400 is not retried", len(r.reqs))
				}
			},
		},
	})
}

// loopXtermTools is loopXterm with declared shell tools: one that always
// fails and one with a budget of one call.
const loopXtermTools = loopXterm + `tools:
  broken_probe:
    description: A check that always fails.
    run: shell
    command: echo probe failed >&2; exit 3
  one_shot:
    description: A check that may run once.
    run: shell
    command: echo fine
    budget: 1
`

// TestLoopBudgets reaches every bound of the budgets rule (docs/architecture.md) and checks the
// state each one ends in.
func TestLoopBudgets(t *testing.T) {
	t.Parallel()
	wait := func(s string) mt.Exchange { return mt.Call("wait", `{"seconds": `+s+`}`) }
	cases := []struct {
		loopTurnCase
		scenario string
		env      map[string]string
	}{
		{loopTurnCase: loopTurnCase{
			name:     "max_iterations",
			operator: loopOp("  max_iterations: 3\n", ""),
			script:   []mt.Exchange{loopObserve, wait("0"), loopObserve},
			verdict:  events.VerdictPassConcerns, outcome: OutcomeNoModelVerdict, iterations: 3,
			steps: []loopStep{{"observe_screen", "ok", ""}, {"wait", "ok", "waited 0s"}, {"observe_screen", "ok", ""}},
			check: func(t *testing.T, r loopResult) {
				if r.rep.ModelVerdict != nil || !loopHasConcern(r.rep, "the loop used its 3 model calls without a model verdict") {
					t.Errorf("model_verdict %+v, concerns %q", r.rep.ModelVerdict, r.rep.Concerns)
				}
			},
		}},
		{loopTurnCase: loopTurnCase{
			name:     "agentic_max_iterations overrides the operator",
			operator: loopOp("  max_iterations: 10\n", ""),
			script:   []mt.Exchange{loopObserve, wait("0")},
			verdict:  events.VerdictPassConcerns, outcome: OutcomeNoModelVerdict, iterations: 2,
			steps: []loopStep{{"observe_screen", "ok", ""}, {"wait", "ok", ""}},
		}, scenario: loopXterm + "agentic_max_iterations: 2\n"},
		{loopTurnCase: loopTurnCase{
			name:    "max_retries_per_step",
			script:  []mt.Exchange{mt.Call("teleport", `{}`), loopObserve, mt.Call("press_key", `{}`), mt.Empty()},
			verdict: events.VerdictPassConcerns, outcome: OutcomeDegraded, iterations: 4, malforms: 3,
			steps: []loopStep{{"teleport", "malformed", "unknown tool"}, {"observe_screen", "ok", ""}, {"press_key", "malformed", "key"}},
			check: func(t *testing.T, r loopResult) {
				if !strings.Contains(r.rep.Loop.Ended, "degraded: 3 malformed replies (runner.max_retries_per_step = 3); the last: a reply without a tool call") {
					t.Errorf("loop.ended = %q", r.rep.Loop.Ended)
				}
				if r.rep.Checks.ProcessAlive == nil || !*r.rep.Checks.ProcessAlive {
					t.Errorf("checks = %+v: the deterministic checks decide a degraded run", r.rep.Checks)
				}
			},
		}},
		{loopTurnCase: loopTurnCase{
			name:     "max_tool_errors",
			operator: loopOp("  max_tool_errors: 2\n", ""),
			script:   []mt.Exchange{mt.Call("broken_probe", `{}`), mt.Call("broken_probe", `{}`)},
			verdict:  events.VerdictPassConcerns, outcome: OutcomeDegraded, iterations: 2,
			steps: []loopStep{{"broken_probe", "error", "broken_probe exited with status 3: probe failed"}, {"broken_probe", "error", "probe failed"}},
			check: func(t *testing.T, r loopResult) {
				if r.rep.Loop.ToolErrors != 2 || !strings.Contains(r.rep.Loop.Ended, "2 declared-tool failures in a row (runner.max_tool_errors = 2)") {
					t.Errorf("loop = %+v", r.rep.Loop)
				}
			},
		}, scenario: loopXtermTools},
		{loopTurnCase: loopTurnCase{
			name:    "declared tool budget",
			script:  []mt.Exchange{mt.Call("one_shot", `{}`), mt.Call("one_shot", `{}`), loopGoalMet},
			verdict: loopUnverified, outcome: OutcomeCompleted, iterations: 3,
			steps: []loopStep{{"one_shot", "ok", "one_shot succeeded: fine"}, {"one_shot", "error", "one_shot has used its budget of 1 calls"}, {"record_verdict", "ok", ""}},
			check: func(t *testing.T, r loopResult) {
				var used float64 = -1
				for _, b := range r.rep.Budgets {
					if b.Name == "tool:one_shot" {
						used = b.Used
					}
				}
				if used != 1 {
					t.Errorf("budget tool:one_shot used %v, want 1 (budgets %+v)", used, r.rep.Budgets)
				}
			},
		}, scenario: loopXtermTools},
		{loopTurnCase: loopTurnCase{
			// The first wait leaves the second most of the budget to cut
			// short, however late a busy machine wakes the first.
			name:     "max_hold_s",
			operator: loopOp("  max_hold_s: 1\n", ""),
			script:   []mt.Exchange{wait("0.1"), wait("20")},
			verdict:  events.VerdictPassConcerns, outcome: OutcomeDegraded, iterations: 2,
			steps: []loopStep{{"wait", "ok", "waited 0.1s"}, {"wait", "error", "wait interrupted"}},
			check: func(t *testing.T, r loopResult) {
				if !strings.Contains(r.rep.Loop.Ended, "the waiting tools used the 1s budget (runner.max_hold_s)") {
					t.Errorf("loop.ended = %q", r.rep.Loop.Ended)
				}
			},
		}},
		{loopTurnCase: loopTurnCase{
			name:     "wait_tool_max_s",
			operator: loopOp("  wait_tool_max_s: 0.1\n", ""),
			script:   []mt.Exchange{wait("0.15"), wait("0.1"), loopGoalMet},
			verdict:  loopUnverified, outcome: OutcomeCompleted, iterations: 3, malforms: 1,
			steps: []loopStep{{"wait", "malformed", "seconds"}, {"wait", "ok", "waited 0.1s"}, {"record_verdict", "ok", ""}},
			check: func(t *testing.T, r loopResult) {
				if !strings.Contains(string(r.reqs[0].Raw), `"maximum":0.1`) {
					t.Errorf("the wait schema sent does not carry the bound:\n%s", r.reqs[0].Raw)
				}
			},
		}},
		{loopTurnCase: loopTurnCase{
			name:    "deadline",
			script:  []mt.Exchange{loopObserve, mt.Delay(20*time.Second, loopGoalMet)},
			verdict: events.VerdictTestError, outcome: OutcomeDeadline, iterations: 2,
			steps: []loopStep{{"observe_screen", "ok", ""}},
			check: func(t *testing.T, r loopResult) {
				if r.rep.Timing.DeadlineS != 1.5 || r.rep.Timing.Ended == nil {
					t.Errorf("timing = %+v, want deadline 1.5 and an end", r.rep.Timing)
				}
				if !strings.Contains(strings.Join(r.rep.Reasons, " "), "the 1.5s deadline was reached (the last 0.5s are kept for the report)") {
					t.Errorf("reasons = %q", r.rep.Reasons)
				}
			},
		}, env: map[string]string{"KASM_RUNTIME_DEADLINE_S": "1.5"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := loopRun(t, loopCase{scenario: c.scenario, operator: c.operator, script: c.script, env: c.env, machine: &fakeMachine{}})
			loopWant(t, r, c.verdict, c.outcome, c.iterations, c.malforms)
			loopWantSteps(t, r.rep, c.steps...)
			if c.check != nil {
				c.check(t, r)
			}
		})
	}
}

// loopGroundCase is a grounding test: the scripted model locates xterm's
// window from the image it is sent, in its profile's convention.
type loopGroundCase struct {
	name, profile string
	relative      bool
	steps         string // scripted steps instead of a goal, if set
	script        func(t *testing.T, locate mt.Exchange) []mt.Exchange
	verdict       events.Verdict
	outcome       events.Outcome
	want          []loopStep
	outcomes      []string // grounding[].outcome
	check         func(t *testing.T, r loopResult)
}

// TestLoopGrounding checks click_grounded: locate answers mapped back
// through each profile's convention onto xterm's window, the judge's three
// outcomes, locate answers that cannot be used, and a scripted step's
// single re-locate.
func TestLoopGrounding(t *testing.T) {
	t.Parallel()
	loopRunGroundCases(t, nil)
}

// TestRulesGrounding runs the same grounding cases on the machine double,
// whose screen shows the window as a white box like xterm's.
func TestRulesGrounding(t *testing.T) {
	t.Parallel()
	loopRunGroundCases(t, func() *fakeMachine { return &fakeMachine{} })
}

// loopRunGroundCases runs the grounding cases in a real session, or on the
// double newMachine makes.
func loopRunGroundCases(t *testing.T, newMachine func() *fakeMachine) {
	grounded := mt.Call("click_grounded", `{"description": "the terminal window", "expect": "the terminal has focus"}`)
	judge := func(met bool) mt.Exchange {
		return mt.Text(fmt.Sprintf("```json\n{\"met\": %t, \"reason\": \"judged\"}\n```", met))
	}
	cases := []loopGroundCase{
		{
			name: "relative coordinates confirmed", profile: "qwen3-vl-8b-instruct", relative: true,
			script: func(t *testing.T, locate mt.Exchange) []mt.Exchange {
				return []mt.Exchange{loopObserve, grounded, locate, judge(true), loopGoalMet}
			},
			verdict: loopUnverified, outcome: OutcomeCompleted,
			want:     []loopStep{{"observe_screen", "ok", ""}, {"click_grounded", "ok", "the expected change was observed"}, {"record_verdict", "ok", ""}},
			outcomes: []string{"confirmed"},
		},
		{
			name: "absolute coordinates in the resized image, contradicted", profile: "qwen2.5-vl-7b-instruct",
			script: func(t *testing.T, locate mt.Exchange) []mt.Exchange {
				return []mt.Exchange{loopObserve, grounded, locate, judge(false), mt.Call("click", `{"target": "center"}`), loopObserve, loopGoalMet}
			},
			verdict: loopUnverified, outcome: OutcomeCompleted,
			want: []loopStep{{"observe_screen", "ok", ""},
				{"click_grounded", "error", "the expected change was NOT observed (judged). Observe the screen before any further pointer action."},
				{"click", "refused", "call observe_screen"}, {"observe_screen", "ok", ""}, {"record_verdict", "ok", ""}},
			outcomes: []string{"contradicted"},
			check: func(t *testing.T, r loopResult) {
				if n := len(loopEvents(r, events.KindGrounding)); n != 1 {
					t.Errorf("%d grounding events: the runtime must not click again on its own", n)
				}
			},
		},
		{
			name: "judge unavailable", profile: "openai-compatible",
			script: func(t *testing.T, locate mt.Exchange) []mt.Exchange {
				return []mt.Exchange{loopObserve, grounded, locate, mt.Text("It probably worked."), loopGoalMet}
			},
			verdict: events.VerdictPassConcerns, outcome: OutcomeCompleted,
			want:     []loopStep{{"observe_screen", "ok", ""}, {"click_grounded", "ok", "the change is unverified (the judge was unavailable)"}, {"record_verdict", "ok", ""}},
			outcomes: []string{"unavailable"},
			check: func(t *testing.T, r loopResult) {
				if !loopHasConcern(r.rep, `the grounded click on "the terminal window" is unverified`) {
					t.Errorf("concerns = %q", r.rep.Concerns)
				}
			},
		},
		{
			name: "malformed and out-of-image locate answers are not clicks", profile: "openai-compatible",
			script: func(t *testing.T, _ mt.Exchange) []mt.Exchange {
				return []mt.Exchange{loopObserve, grounded, mt.Text(`{"point": [5000, 10]}`), mt.Text(`somewhere in the middle`), loopObserve, loopGoalMet}
			},
			verdict: loopUnverified, outcome: OutcomeCompleted,
			want: []loopStep{{"observe_screen", "ok", ""}, {"click_grounded", "error", `could not locate "the terminal window" on the screen after 2 attempts`},
				{"observe_screen", "ok", ""}, {"record_verdict", "ok", ""}},
			outcomes: []string{"unavailable", "unavailable"},
			check: func(t *testing.T, r loopResult) {
				for _, g := range r.rep.Grounding {
					if g.Point != nil {
						t.Errorf("grounding %+v has a point: an unusable answer must not click", g)
					}
				}
			},
		},
		{
			name: "scripted contradicted click re-locates once and refuses the same point", profile: "qwen3-vl-8b-instruct", relative: true,
			steps: "steps:\n  - click_grounded: {description: the terminal window, expect: the terminal has focus}\n",
			script: func(t *testing.T, locate mt.Exchange) []mt.Exchange {
				return []mt.Exchange{locate, judge(false), locate}
			},
			verdict: events.VerdictAppFailed, outcome: OutcomeStepFailed,
			want:     []loopStep{{"click_grounded", "error", "re-locating found the same place"}},
			outcomes: []string{"contradicted"},
		},
		{
			name: "scripted contradicted click re-located elsewhere is confirmed", profile: "openai-compatible",
			steps: "steps:\n  - click_grounded: {description: the terminal window, expect: the terminal has focus}\n",
			script: func(t *testing.T, locate mt.Exchange) []mt.Exchange {
				return []mt.Exchange{locate, judge(false), mt.Text(`{"point": [100, 60]}`), judge(true)}
			},
			verdict: events.VerdictPass, outcome: OutcomeCompleted,
			want:     []loopStep{{"click_grounded", "ok", "clicked \"the terminal window\"; the expected change was observed"}},
			outcomes: []string{"contradicted", "confirmed"},
		},
		{
			name: "scripted re-locate counts against grounding_attempts", profile: "openai-compatible",
			steps: "steps:\n  - click_grounded: {description: the terminal window, expect: the terminal has focus}\n",
			script: func(t *testing.T, locate mt.Exchange) []mt.Exchange {
				// The first locate answer is unusable, the second is the
				// bound's last: no third locate may follow the
				// contradiction.
				return []mt.Exchange{mt.Text(`somewhere`), locate, judge(false), mt.Text(`{"point": [100, 60]}`), judge(true)}
			},
			verdict: events.VerdictAppFailed, outcome: OutcomeStepFailed,
			want:     []loopStep{{"click_grounded", "error", "the expected change was NOT observed"}},
			outcomes: []string{"unavailable", "contradicted"},
			check: func(t *testing.T, r loopResult) {
				locates := 0
				for _, req := range r.reqs {
					if locate, _ := loopIsVision(req); locate {
						locates++
					}
				}
				if locates != 2 {
					t.Errorf("%d locate requests, want 2 (runner.grounding_attempts)", locates)
				}
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			sc := loopXterm
			if c.steps != "" {
				sc = strings.Replace(loopXterm, "goal: Print the greeting in the terminal.\nplan:\n  - Observe the screen.\n  - Type the greeting with type_text.\n  - Press Return.\n", c.steps, 1)
			}
			var f *fakeMachine
			if newMachine != nil {
				f = newMachine()
			}
			r := loopRun(t, loopCase{scenario: sc, operator: loopOp("", "  profile: "+c.profile+"\n"),
				script: c.script(t, mt.Func(loopLocateCentre(t, c.relative))), machine: f})
			if r.rep.Verdict != c.verdict || r.rep.Outcome != c.outcome {
				t.Errorf("verdict %s/%s, want %s/%s; reasons %q", r.rep.Verdict, r.rep.Outcome, c.verdict, c.outcome, r.rep.Reasons)
			}
			loopWantSteps(t, r.rep, c.want...)
			var outcomes []string
			for _, g := range r.rep.Grounding {
				outcomes = append(outcomes, g.Outcome)
				if g.Description != "the terminal window" || g.Expect != "the terminal has focus" || g.Step == 0 || g.Attempt == 0 {
					t.Errorf("grounding entry %+v", g)
				}
			}
			if !slices.Equal(outcomes, c.outcomes) {
				t.Errorf("grounding outcomes %v, want %v (%+v)", outcomes, c.outcomes, r.rep.Grounding)
			}
			// The first click lands on the window's centre, whatever the
			// profile's convention and image size.
			if len(r.rep.Grounding) > 0 && r.rep.Grounding[0].Point != nil {
				box := loopWindowBox(r.events)
				p := r.rep.Grounding[0].Point
				cx, cy := box.X+box.W/2, box.Y+box.H/2
				if loopAbs(p.X-cx) > 3 || loopAbs(p.Y-cy) > 3 {
					t.Errorf("clicked (%d, %d), window %+v has its centre at (%d, %d)", p.X, p.Y, box, cx, cy)
				}
			}
			if c.check != nil {
				c.check(t, r)
			}
		})
	}
}

func loopAbs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// TestLoopCheckExpectation checks the judge's three answers in the loop and
// a judge failure that turns the model off.
func TestLoopCheckExpectation(t *testing.T) {
	t.Parallel()
	check := mt.Call("check_expectation", `{"expectation": "a shell prompt is visible"}`)
	loopRunTurnCases(t, []loopTurnCase{
		{
			name:    "true, false and unavailable",
			script:  []mt.Exchange{check, mt.Text(`{"met": true, "reason": "a prompt"}`), check, mt.Text(`<answer>{"met": false, "reason": "no prompt"}</answer>`), check, mt.Text(`yes`), loopGoalMet},
			verdict: events.VerdictPassConcerns, outcome: OutcomeCompleted, iterations: 4,
			steps: []loopStep{{"check_expectation", "ok", "true: a prompt"}, {"check_expectation", "ok", "false: no prompt"},
				{"check_expectation", "ok", `unavailable: malformed answer: "yes"`}, {"record_verdict", "ok", ""}},
			check: func(t *testing.T, r loopResult) {
				if !loopHasConcern(r.rep, `check_expectation "a shell prompt is visible" was unavailable`) {
					t.Errorf("concerns = %q", r.rep.Concerns)
				}
				// check_expectation completes the observation record and
				// shows the model the screen it judged.
				if imgs, err := r.reqs[2].Images(); err != nil || len(imgs) != 1 {
					t.Errorf("the turn after check_expectation carries %d images (%v)", len(imgs), err)
				}
				if len(r.reqs) != 7 {
					t.Errorf("%d requests, want 4 turns and 3 judgements", len(r.reqs))
				}
			},
		},
		{
			name:     "a failed judgement turns the model off",
			operator: loopOp("", "  disable_after: 1\n"),
			script:   []mt.Exchange{check, mt.Status(401)},
			verdict:  events.VerdictPassConcerns, outcome: OutcomeDegraded, iterations: 1, // no call is spent once the judge turned the model off
			steps: []loopStep{{"check_expectation", "ok", "unavailable: judge expectation: model turn (1 attempts): model endpoint replied HTTP 401"}},
			check: func(t *testing.T, r loopResult) {
				if !strings.Contains(r.rep.Loop.Ended, "the model is off") {
					t.Errorf("loop.ended = %q", r.rep.Loop.Ended)
				}
			},
		},
	})
}

// TestLoopInbox checks ask_human answered by the operator, ask_human left
// unanswered, and respond.
func TestLoopInbox(t *testing.T) {
	t.Parallel()
	inboxOp := func(timeout string) string {
		return loopOp("  respond: true\n", "") + "inbox:\n  session_token: s3cret-console-token\n  answer_timeout_s: " + timeout + "\n"
	}
	ask := mt.Call("ask_human", `{"question": "Which greeting should I type?"}`)

	t.Run("answered", func(t *testing.T) {
		t.Parallel()
		r := loopRun(t, loopCase{machine: &fakeMachine{}, operator: inboxOp("10"),
			script: []mt.Exchange{ask, mt.Call("respond", `{"message": "typing the greeting now"}`), loopGoalMet},
			sink: func(run *Runner, e events.Event) {
				if e.Kind == events.KindQuestion {
					go func() {
						if err := run.Answer(e.Question.ID, "the provided one"); err != nil {
							t.Errorf("answer: %v", err)
						}
					}()
				}
			}})
		loopWant(t, r, loopUnverified, OutcomeCompleted, 3, 0)
		// An answer the operator did not mark shareable reaches the model
		// as a value to type by ref, not as text to read.
		loopWantSteps(t, r.rep, loopStep{"ask_human", "ok", `the operator answered (16 characters); the answer is not shown to you; type it with type_text, ref "answer_q1"`},
			loopStep{"respond", "ok", "message posted to the operator"}, loopStep{"record_verdict", "ok", ""})
		if got := loopLastText(r.reqs[1]); strings.Contains(got, "the provided one") || !strings.Contains(got, "answer_q1") {
			t.Errorf("the model was told:\n%s", got)
		}
		if names := r.reqs[0].ToolNames(); !slices.Contains(names, "ask_human") || !slices.Contains(names, "respond") {
			t.Errorf("tools = %v, want ask_human and respond", names)
		}
		if len(r.rep.Questions) != 1 || r.rep.Questions[0].Answer != "the provided one" || r.rep.Questions[0].By != "console" {
			t.Errorf("questions = %+v", r.rep.Questions)
		}
		if n := len(loopEvents(r, events.KindRespond)); n != 1 {
			t.Errorf("%d respond events, want 1", n)
		}
		raw, _ := os.ReadFile(filepath.Join(r.dir, "events.jsonl"))
		if strings.Contains(string(raw), "s3cret-console-token") {
			t.Error("the session token reached events.jsonl")
		}
	})
	t.Run("unanswered", func(t *testing.T) {
		t.Parallel()
		r := loopRun(t, loopCase{machine: &fakeMachine{}, operator: inboxOp("0.3"), script: []mt.Exchange{ask, loopGoalMet}})
		loopWant(t, r, loopUnverified, OutcomeCompleted, 2, 0)
		loopWantSteps(t, r.rep, loopStep{"ask_human", "error", "no answer came"}, loopStep{"record_verdict", "ok", ""})
		if len(r.rep.Questions) != 1 || r.rep.Questions[0].Unanswered == "" {
			t.Errorf("questions = %+v, want one unanswered", r.rep.Questions)
		}
	})
	t.Run("posted messages reach the inbox", func(t *testing.T) {
		t.Parallel()
		var run *Runner
		r := loopRun(t, loopCase{machine: &fakeMachine{}, operator: inboxOp("1"), script: []mt.Exchange{mt.Call("respond", `{"message": "hello operator"}`), loopGoalMet},
			before: func(r *Runner) { run = r }})
		loopWant(t, r, loopUnverified, OutcomeCompleted, 2, 0)
		var posted []string
		for _, e := range run.Inbox().History() {
			if e.Kind == "posted" {
				posted = append(posted, e.Text)
			}
		}
		if !slices.Equal(posted, []string{"hello operator"}) {
			t.Errorf("inbox posted %q", posted)
		}
	})
}

// loopLongScript is a 25-turn run that changes the screen every other
// turn: observe, press a letter, observe, … and finally goal-met.
func loopLongScript(turns int) []mt.Exchange {
	var script []mt.Exchange
	for i := 0; len(script) < turns-1; i++ {
		script = append(script, loopObserve)
		if len(script) < turns-1 {
			script = append(script, mt.Call("press_key", fmt.Sprintf(`{"key": "%c"}`, 'a'+i%26)))
		}
	}
	return append(script, loopGoalMet)
}

// TestLoopMemory checks what the model is sent over a 25-turn run: screens
// under tool_generated_image_N handles, the Environment Update after
// successful turns, at most keep_images images, and a request size that
// stays flat once the first screens are dropped.
func TestLoopMemory(t *testing.T) {
	t.Parallel()
	for _, policy := range []string{"always", "on_change"} {
		t.Run(policy, func(t *testing.T) {
			t.Parallel()
			op := loopOperator + "memory:\n  emit_policy: " + policy + "\n  keep_images: 3\n"
			r := loopRun(t, loopCase{operator: op, script: loopLongScript(25)})
			loopWant(t, r, loopUnverified, OutcomeCompleted, 25, 0)
			var sizes, images []int
			for _, req := range r.reqs {
				sizes = append(sizes, len(req.Raw))
				images = append(images, len(req.ImageURLs()))
			}
			t.Logf("request bytes per turn: %v", sizes)
			t.Logf("images per turn: %v", images)
			for i, n := range images {
				if n > 3 {
					t.Errorf("request %d carries %d images, keep_images is 3", i+1, n)
				}
			}
			if images[len(images)-1] != 3 {
				t.Errorf("the last request carries %d images, want the newest 3", images[len(images)-1])
			}
			// Flat: the last request is no more than 25% bigger than the one
			// at turn 10, although it has 15 more turns of history.
			if last, mid := sizes[len(sizes)-1], sizes[9]; float64(last) > 1.25*float64(mid) {
				t.Errorf("request bytes grew from %d (turn 10) to %d (turn 25)", mid, last)
			}
			second := loopLastText(r.reqs[1])
			if !strings.Contains(second, "The screen is tool_generated_image_1.") || !strings.Contains(second, "Environment Update") ||
				!strings.Contains(second, "- tool_generated_image_1: screen screens/") ||
				!strings.Contains(second, "Application windows (top first): \"") {
				t.Errorf("turn 2 lacks the handle, the Environment Update or the app's windows:\n%s", second)
			}
			// Identical screens share a handle, so how many handles there
			// are depends on how fast xterm echoed each key; the newest must
			// be named and the oldest dropped either way.
			last := r.reqs[len(r.reqs)-1].Text()
			newest := 0
			for _, m := range regexp.MustCompile(`tool_generated_image_(\d+)`).FindAllStringSubmatch(last, -1) {
				if n, _ := strconv.Atoi(m[1]); n > newest {
					newest = n
				}
			}
			if newest < 6 || !strings.Contains(last, "dropped from context") {
				t.Errorf("the last request names handles up to %d (want at least 6) or does not name the dropped ones", newest)
			}
			// After press_key the screen changed but no image was
			// registered: on_change stays quiet, always repeats.
			afterKey := loopLastText(r.reqs[2])
			if got, want := strings.Contains(afterKey, "Environment Update"), policy == "always"; got != want {
				t.Errorf("%s: Environment Update after press_key = %v, want %v:\n%s", policy, got, want, afterKey)
			}
		})
	}
}

// TestLoopSteering checks the operator's hold on the loop through
// Runner.Steer: pause and resume, step mode with approval and rejection,
// a note, and abort. Sinks must not block, so each steers from a goroutine
// as a console would; the assertions read the order of the events.
func TestLoopSteering(t *testing.T) {
	t.Parallel()
	t.Run("pause and resume", func(t *testing.T) {
		t.Parallel()
		// Paused before the first turn, so no request can be on its way
		// when the pause lands (a pause that comes while a turn is being
		// sent holds the next one); resumed a moment later.
		r := loopRun(t, loopCase{machine: &fakeMachine{}, script: []mt.Exchange{loopObserve, loopObserve, loopGoalMet},
			before: func(run *Runner) {
				run.Steer(events.Steer{Action: events.SteerPause})
				go func() {
					time.Sleep(300 * time.Millisecond)
					run.Steer(events.Steer{Action: events.SteerResume})
				}()
			}})
		loopWant(t, r, loopUnverified, OutcomeCompleted, 3, 0)
		if got := loopSteerActions(r); !slices.Equal(got, []string{"pause", "resume"}) {
			t.Fatalf("steering = %v", got)
		}
		paused := false
		for _, e := range r.events {
			switch {
			case e.Kind == events.KindSteer:
				paused = e.Steer.Action == events.SteerPause
			case e.Kind == events.KindModelRequest && paused:
				t.Errorf("request %d was sent while the run was paused", e.Data.(events.ModelRequest).Iteration)
			}
		}
	})
	t.Run("step mode", func(t *testing.T) {
		t.Parallel()
		var mu sync.Mutex
		proposals := 0
		r := loopRun(t, loopCase{machine: &fakeMachine{},
			script: []mt.Exchange{loopObserve, mt.Call("press_key", `{"key": "q"}`), loopGoalMet},
			before: func(run *Runner) { run.Steer(events.Steer{Action: events.SteerStep, Value: "on"}) },
			sink: func(run *Runner, e events.Event) {
				if e.Kind != events.KindProposal {
					return
				}
				mu.Lock()
				proposals++
				n := proposals
				mu.Unlock()
				// Answer at once, as an operator with a hotkey would.
				go func() {
					if n == 2 {
						run.Steer(events.Steer{Action: events.SteerReject, Reason: "do not press q"})
						return
					}
					run.Steer(events.Steer{Action: events.SteerApprove})
				}()
			}})
		loopWant(t, r, loopUnverified, OutcomeCompleted, 3, 0)
		loopWantSteps(t, r.rep, loopStep{"observe_screen", "ok", ""},
			loopStep{"press_key", "refused", "the operator rejected this call: do not press q"}, loopStep{"record_verdict", "ok", ""})
		if got := loopLastText(r.reqs[2]); !strings.Contains(got, "the operator rejected this call: do not press q") {
			t.Errorf("the refusal did not reach the model:\n%s", got)
		}
		if n := len(loopEvents(r, events.KindProposal)); n != 3 {
			t.Errorf("%d proposals, want 3", n)
		}
		// The step-mode switch was made before Run and is still recorded.
		if got := loopSteerActions(r); !slices.Equal(got, []string{"step", "approve", "reject", "approve"}) {
			t.Errorf("steering = %v", got)
		}
	})
	t.Run("note", func(t *testing.T) {
		t.Parallel()
		const note = "the prompt is at the top left"
		r := loopRun(t, loopCase{machine: &fakeMachine{}, script: []mt.Exchange{loopObserve, mt.Call("wait", `{"seconds": 0.3}`), loopGoalMet},
			sink: func(run *Runner, e events.Event) {
				if e.Kind == events.KindStepEnded && e.Step == 1 {
					go run.Steer(events.Steer{Action: events.SteerNote, Value: note})
				}
			}})
		loopWant(t, r, loopUnverified, OutcomeCompleted, 3, 0)
		if len(r.rep.Steering) != 1 || r.rep.Steering[0].Value != note {
			t.Fatalf("steering = %+v", r.rep.Steering)
		}
		// The note goes with one request, built after it was given.
		given, carried := false, 0
		for _, e := range r.events {
			switch {
			case e.Kind == events.KindSteer:
				given = true
			case e.Kind == events.KindModelRequest:
				n := e.Data.(events.ModelRequest).Iteration
				if strings.Contains(loopLastText(r.reqs[n-1]), "Operator note: "+note) {
					carried++
					if !given {
						t.Errorf("request %d carries the note before it was given", n)
					}
				}
			}
		}
		if carried != 1 {
			t.Errorf("%d requests carry the note, want 1", carried)
		}
	})
	t.Run("abort", func(t *testing.T) {
		t.Parallel()
		// Abort once the second request has reached the model, while its
		// reply is slow in coming.
		var run *Runner
		r := loopRun(t, loopCase{machine: &fakeMachine{}, script: []mt.Exchange{loopObserve, mt.Func(func(mt.Request) mt.Exchange {
			go run.Steer(events.Steer{Action: events.SteerAbort})
			return mt.Delay(10*time.Second, loopGoalMet)
		})}, before: func(r *Runner) { run = r }})
		loopWant(t, r, events.VerdictTestError, OutcomeAborted, 2, 0)
		if r.rep.Timing.Ended == nil || r.rep.Checks.ProcessAlive == nil || r.rep.Loop.Ended == "" || len(r.rep.Steps) != 1 {
			t.Errorf("the aborted run's report is incomplete: timing %+v checks %+v loop %+v", r.rep.Timing, r.rep.Checks, r.rep.Loop)
		}
	})
}

func loopSteerActions(r loopResult) []string {
	var out []string
	for _, s := range r.rep.Steering {
		out = append(out, s.Action)
	}
	return out
}
