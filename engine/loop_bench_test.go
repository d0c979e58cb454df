package engine

import (
	"slices"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/engine/events"
	mt "github.com/kasmrt/kasmrt/engine/model/modeltest"
)

// BenchmarkLoopStepOverhead measures the runtime's own time per agentic
// step with an instant model: from the model's reply being received to the
// next request being sent (guards, the tool, the capture, memory and the
// request's assembly), over 25-turn runs of observe_screen and wait 0
// against xterm. It reports the median and p95 step overhead and the
// request size at turns 5 and 25.
func BenchmarkLoopStepOverhead(b *testing.B) {
	var gaps []time.Duration
	byTool := map[string][]time.Duration{}
	var first, last []int
	for b.Loop() {
		script := make([]mt.Exchange, 0, 25)
		for i := 0; i < 24; i++ {
			if i%2 == 0 {
				script = append(script, loopObserve)
			} else {
				script = append(script, mt.Call("wait", `{"seconds": 0}`))
			}
		}
		script = append(script, loopGoalMet)
		r := loopRun(b, loopCase{script: script})
		if r.rep.Loop.Iterations != 25 {
			b.Fatalf("loop = %+v", r.rep.Loop)
		}
		var replied time.Time
		var tool string
		for _, e := range r.events {
			switch e.Kind {
			case events.KindModelReply:
				replied = e.T
			case events.KindStepEnded:
				tool = e.Tool
			case events.KindModelRequest:
				if !replied.IsZero() {
					gaps = append(gaps, e.T.Sub(replied))
					byTool[tool] = append(byTool[tool], e.T.Sub(replied))
				}
			}
		}
		first = append(first, len(r.reqs[4].Raw))
		last = append(last, len(r.reqs[24].Raw))
	}
	median := func(ds []time.Duration) float64 {
		slices.Sort(ds)
		return float64(ds[len(ds)/2].Microseconds()) / 1000
	}
	slices.Sort(gaps)
	b.ReportMetric(median(gaps), "ms/step-median")
	b.ReportMetric(float64(gaps[len(gaps)*95/100].Microseconds())/1000, "ms/step-p95")
	b.ReportMetric(median(byTool["observe_screen"]), "ms/observe-median")
	b.ReportMetric(median(byTool["wait"]), "ms/wait0-median")
	b.ReportMetric(float64(first[0]), "bytes/req5")
	b.ReportMetric(float64(last[0]), "bytes/req25")
}
