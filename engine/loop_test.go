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
