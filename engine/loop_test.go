package engine

import (
	"slices"
	"strings"
	"testing"

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
	loopWant(t, r, events.VerdictPass, OutcomeCompleted, 5, 0)
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
	verdict, outcome     string
	iterations, malforms int
	steps                []loopStep
	check                func(t *testing.T, r loopResult)
}

var loopOperatorRetry = strings.Replace(loopOperator, "runner:\n", "runner:\n  max_retries_per_step: 5\n", 1)

func loopRunTurnCases(t *testing.T, cases []loopTurnCase) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := loopRun(t, loopCase{operator: c.operator, script: c.script})
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
			name:   "several calls in one turn",
			script: []mt.Exchange{mt.Calls(loopObserve, mt.Call("press_key", `{"key": "a"}`)), loopObserve, loopGoalMet},
			verdict: events.VerdictPass, outcome: OutcomeCompleted, iterations: 3, malforms: 1,
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
			name:   "unknown tool",
			script: []mt.Exchange{mt.Call("teleport", `{"to": "mars"}`), loopObserve, loopGoalMet},
			verdict: events.VerdictPass, outcome: OutcomeCompleted, iterations: 3, malforms: 1,
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
			verdict: events.VerdictPass, outcome: OutcomeCompleted, iterations: 7, malforms: 4,
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
				mt.Call("click", `{"target": "center"}`),
				mt.Call("type_text", `{"ref": "greeting"}`),
				loopObserve,
				mt.Call("type_text", `{"ref": "greeting"}`),
				mt.Call("press_key", `{"key": "Return"}`),
				loopObserve,
				mt.Call("click", `{"target": "center"}`),
				loopGoalMet,
			},
			verdict: events.VerdictPass, outcome: OutcomeCompleted, iterations: 8, malforms: 0,
			steps: []loopStep{
				{"click", "refused", "click refused: the screen changed since the last observation; call observe_screen (or check_expectation) first"},
				{"type_text", "refused", "call observe_screen"},
				{"observe_screen", "ok", "observed"},
				{"type_text", "ok", "typed"},
				{"press_key", "refused", "call observe_screen"},
				{"observe_screen", "ok", "observed"},
				{"click", "ok", "clicked center at"},
				{"record_verdict", "ok", "recorded goal-met"},
			},
		},
		{
			name: "tool calls as text",
			script: []mt.Exchange{
				mt.Text("I will look first.\n<tool_call>\n{\"name\": \"observe_screen\", \"arguments\": {}}\n</tool_call>"),
				mt.Text("Done.\n```json\n{\"name\": \"record_verdict\", \"arguments\": {\"verdict\": \"goal-met\", \"reason\": \"done\"}}\n```"),
			},
			verdict: events.VerdictPass, outcome: OutcomeCompleted, iterations: 2, malforms: 0,
			steps: loopOKSteps,
			check: func(t *testing.T, r loopResult) {
				if r.rep.Loop.Rescued != 2 {
					t.Errorf("loop.rescued = %d, want 2", r.rep.Loop.Rescued)
				}
			},
		},
		{
			name:   "empty reply",
			script: []mt.Exchange{mt.Empty(), mt.Text("I think it is fine."), loopObserve, loopGoalMet},
			verdict: events.VerdictPass, outcome: OutcomeCompleted, iterations: 4, malforms: 2,
			steps: loopOKSteps,
			check: func(t *testing.T, r loopResult) {
				if !strings.Contains(loopLastText(r.reqs[1]), "Your reply had no tool call. Reply with exactly one call to one of: check_expectation, click,") {
					t.Errorf("request 2 does not nudge the model:\n%s", loopLastText(r.reqs[1]))
				}
			},
		},
		{
			name:   "truncated JSON and garbage",
			script: []mt.Exchange{mt.Garbage(`{"id": "x", "choices": [{"message": {"role": "assis`), mt.Garbage("<html>bad gateway</html>"), loopObserve, loopGoalMet},
			verdict: events.VerdictPass, outcome: OutcomeCompleted, iterations: 4, malforms: 2,
			steps: loopOKSteps,
		},
	})
}

// loopScreens returns the screens the run captured, from its events.
func loopScreens(r loopResult) []string {
	var out []string
	for _, e := range r.events {
		if e.Kind == events.KindScreen {
			out = append(out, e.Screen)
		}
	}
	return out
}
