package engine

import (
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
	mt "github.com/kasmrt/kasmrt/engine/model/modeltest"
)

// TestLoopCapsReplyTextInHistory has the model send a 5 MB reply: the run
// goes on, and no later request resends it; the history keeps the start
// of the reply and says it was cut.
func TestLoopCapsReplyTextInHistory(t *testing.T) {
	t.Parallel()
	huge := strings.Repeat("thinking out loud ", 5<<20/18)
	r := loopRun(t, loopCase{script: []mt.Exchange{
		mt.Call("observe_screen", `{}`).WithText(huge),
		mt.Call("observe_screen", `{}`),
		mt.Call("record_verdict", `{"verdict": "goal-met", "reason": "seen"}`),
	}})
	loopWant(t, r, events.VerdictPass, OutcomeCompleted, 3, 0)
	for _, req := range r.reqs[1:] {
		if len(req.Raw) > 1<<20 {
			t.Errorf("request %d is %d bytes: the 5 MB reply was resent", req.N, len(req.Raw))
		}
		if !strings.Contains(req.Text(), "[reply cut: 8192 of ") {
			t.Errorf("request %d does not mark the cut reply", req.N)
		}
	}
}

// TestLoopCapsToolCallArgumentsInHistory has the model send a call with 5
// MB of arguments: the call is refused as it came, and later requests
// carry a note in its place rather than the arguments.
func TestLoopCapsToolCallArgumentsInHistory(t *testing.T) {
	t.Parallel()
	huge := strings.Repeat("x", 5<<20)
	r := loopRun(t, loopCase{script: []mt.Exchange{
		mt.Call("observe_screen", `{}`),
		mt.Call("type_text", `{"ref": "`+huge+`"}`),
		mt.Call("record_verdict", `{"verdict": "goal-met", "reason": "seen"}`),
	}})
	if len(r.reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(r.reqs))
	}
	last := r.reqs[2]
	if len(last.Raw) > 1<<20 || !strings.Contains(string(last.Raw), "bytes of arguments left out") {
		t.Errorf("the last request is %d bytes and does not note the cut arguments", len(last.Raw))
	}
	if s := r.rep.Steps; len(s) < 2 || s[1].Tool != "type_text" || s[1].Status == "ok" {
		t.Errorf("steps %+v: the oversized call must not run", s)
	}
}
