package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/kasmrt/kasmrt/engine/model/modeltest"
	"github.com/kasmrt/kasmrt/internal/testkit"
)

// measuredBinary is the kasmrt whose memory a benchmark measures: the one
// KASM_BENCH_KASMRT names (an older build, for a before/after), or else
// the real binary built for the benchmark — not the test binary the tests
// run as kasmrt, whose test code would count in its memory.
func measuredBinary(b *testing.B) string {
	b.Helper()
	if bin := os.Getenv("KASM_BENCH_KASMRT"); bin != "" {
		return bin
	}
	bin, err := testkit.BuildKasmrt(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	return bin
}

// BenchmarkGoalRunRSS measures the peak resident memory of `kasmrt run`
// (its own process's VmHWM, not wait4's figure, which is the Xvfb's) for
// goal runs of 13, 25 and 49 turns against the model
// test server: observe_screen and press_key alternately on a 1280x800
// xterm full of text, full-size screens (openai-compatible), so every
// observation is a new ~150 KB screen. Flat in the number of turns is the
// goal. KASM_BENCH_KASMRT names another binary to measure (an older
// build, for a before/after).
func BenchmarkGoalRunRSS(b *testing.B) {
	need(b, "Xvfb", "xterm")
	bin := measuredBinary(b)
	for _, turns := range []int{13, 25, 49} {
		b.Run(fmt.Sprintf("turns-%d", turns), func(b *testing.B) {
			var peak int
			for b.Loop() {
				dir := b.TempDir()
				scenario, operator, srv := goalRunFiles(b, dir, turns)
				peak = max(peak, headlessRun(b, bin, dir, scenario, operator).peakKB)
				if n := len(srv.Requests()); n != turns {
					b.Fatalf("%d model turns, want %d", n, turns)
				}
			}
			b.ReportMetric(float64(peak)/1024, "MB/peak-rss")
		})
	}
}

// goalRunFiles writes the scenario and operator file of a goal run of
// turns model turns in dir (observe_screen and press_key alternately on a
// 1280x800 xterm full of text, then the verdict) and starts the model test
// server that answers them.
func goalRunFiles(b *testing.B, dir string, turns int) (scenario, operator string, srv *modeltest.Server) {
	script := make([]modeltest.Exchange, 0, turns)
	for i := 0; i < turns-1; i++ {
		if i%2 == 0 {
			script = append(script, modeltest.Call("observe_screen", `{}`))
		} else {
			script = append(script, modeltest.Call("press_key", `{"key": "x"}`))
		}
	}
	script = append(script, modeltest.Call("record_verdict", `{"verdict": "goal-met", "reason": "done"}`))
	srv = modeltest.New(b, script...)
	scenario, operator = filepath.Join(dir, "scenario.yaml"), filepath.Join(dir, "operator.yaml")
	files := map[string]string{
		scenario: `name: memory per turn
app:
  command: [xterm, -geometry, 200x60+0+0, -e, sh, -c, 'ls -l /usr/bin | head -56; exec cat']
goal: Measure memory.
`,
		operator: fmt.Sprintf("runner: {max_iterations: %d}\nmodel:\n  name: bench\n  endpoint: %s\n  retry: 0\n", turns+1, srv.URL()),
	}
	for path, body := range files {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	return scenario, operator, srv
}
