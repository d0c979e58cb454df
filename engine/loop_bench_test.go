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

// BenchmarkStepPerProfile measures the runtime's critical path per step on
// a 1280x800 screen for every model profile: from the model's reply
// received to the model server holding the whole next request, over 24
// turns alternating observe_screen and press_key (a letter the terminal
// echoes, so every observation is a new screen) against an xterm full of
// text. Every
// profile sees the same screens; the ones that downscale (gpt,
// qwen2.5-vl) pay for the resize. The model answers at once, except its
// first reply, which takes a second.
func BenchmarkStepPerProfile(b *testing.B) {
	const scenario = `name: step per profile
app:
  command: [xterm, -geometry, 200x60+0+0, -e, sh, -c, 'ls -l /usr/bin | head -56; exec cat']
goal: Measure the steps.
`
	for _, profile := range []string{"openai-compatible", "qwen3-vl-8b-instruct", "qwen2.5-vl-7b-instruct", "gpt"} {
		b.Run(profile, func(b *testing.B) {
			operator := `runner:
  settle_cap_ms: 2000
session:
  width: 1280
  height: 800
model:
  profile: ` + profile + `
  name: bench
  endpoint: ENDPOINT
  retry: 0
  timeout: 5
`
			byTool := map[string][]time.Duration{}
			for b.Loop() {
				script := make([]mt.Exchange, 0, 25)
				for i := 0; i < 24; i++ {
					if i%2 == 0 {
						script = append(script, loopObserve)
					} else {
						script = append(script, mt.Call("press_key", `{"key": "x"}`))
					}
				}
				script = append(script, loopGoalMet)
				// The first reply takes a second, as a real model's first
				// answer takes at least that: the run prepares its
				// downscaler and encoders meanwhile. The others are
				// instant; the gaps measured never include the model's
				// time.
				script[0] = mt.Delay(time.Second, script[0])
				r := loopRun(b, loopCase{scenario: scenario, operator: operator, script: script})
				if r.rep.Loop.Iterations != 25 {
					b.Fatalf("loop = %+v", r.rep.Loop)
				}
				// The n-th reply is followed by the tool it asked for and
				// then the server receiving request n+1: the body's
				// marshalling and its sending are on the path too.
				replies := 0
				var replied time.Time
				for _, e := range r.events {
					switch e.Kind {
					case events.KindModelReply:
						replied = e.T
						replies++
					case events.KindStepEnded:
						if replies < len(r.reqs) {
							byTool[e.Tool] = append(byTool[e.Tool], r.reqs[replies].Received.Sub(replied))
						}
					}
				}
			}
			quantile := func(ds []time.Duration, q float64) float64 {
				slices.Sort(ds)
				return float64(ds[int(float64(len(ds)-1)*q)].Microseconds()) / 1000
			}
			b.ReportMetric(quantile(byTool["observe_screen"], 0.5), "ms/observe-median")
			b.ReportMetric(quantile(byTool["observe_screen"], 0.95), "ms/observe-p95")
			b.ReportMetric(quantile(byTool["press_key"], 0.5), "ms/key-median")
			b.ReportMetric(quantile(byTool["press_key"], 0.95), "ms/key-p95")
		})
	}
}
