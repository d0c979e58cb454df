package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/kasmrt/kasmrt/engine/model"
)

// stepProfiles are the profiles BenchmarkStepPerProfile measures, in the
// order the table lists them.
var stepProfiles = []string{"openai-compatible", "qwen3-vl-8b-instruct", "qwen2.5-vl-7b-instruct", "gpt"}

// compareAgentStep runs the engine's agent-step benchmark: goal runs
// against xterm on a 1280x800 screen with the model test server, for
// every profile, timed from the model's reply to the server holding the
// next request. It gives observe_screen's median and p95 per profile.
func compareAgentStep(ctx context.Context, runs int) ([]row, error) {
	bench := fmt.Sprintf("%dx", runs)
	args := []string{"test", "./engine", "-run", "^$", "-bench", "BenchmarkStepPerProfile", "-benchtime", bench, "-count", "1"}
	out, err := exec.CommandContext(ctx, "go", args...).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("go %s: %w: %s", strings.Join(args, " "), err, out)
	}
	metrics := benchMetrics(out, "BenchmarkStepPerProfile/")
	repro := "go test ./engine -run '^$' -bench BenchmarkStepPerProfile -benchtime " + bench
	msOf := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	var rows []row
	for _, name := range stepProfiles {
		m, ok := metrics[name]
		if !ok || m["ms/observe-median"] == 0 {
			return nil, fmt.Errorf("no figures for profile %s in:\n%s", name, out)
		}
		p, err := model.LookupProfile(name)
		if err != nil {
			return nil, err
		}
		w, h := p.Image.Fit(1280, 800)
		rows = append(rows, row{
			what:  fmt.Sprintf("goal run on xterm 1280x800, profile %s (sends %dx%d): model reply → next request, observe_screen (median, p95 of %d)", name, w, h, runs*12),
			other: "—", kasmrt: msOf(m["ms/observe-median"]), p95: msOf(m["ms/observe-p95"]), reproduce: repro,
		})
	}
	return rows, nil
}

// benchMetrics reads the metrics of go test -bench output lines whose
// benchmark name starts with prefix: for each sub-benchmark (the name
// after prefix, without the -GOMAXPROCS suffix), each unit's value.
func benchMetrics(out []byte, prefix string) map[string]map[string]float64 {
	metrics := map[string]map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 || !strings.HasPrefix(f[0], prefix) {
			continue
		}
		name := strings.TrimPrefix(f[0], prefix)
		if i := strings.LastIndex(name, "-"); i >= 0 {
			name = name[:i]
		}
		m := map[string]float64{}
		for i := 2; i+1 < len(f); i += 2 {
			if v, err := strconv.ParseFloat(f[i], 64); err == nil {
				m[f[i+1]] = v
			}
		}
		metrics[name] = m
	}
	return metrics
}
