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
