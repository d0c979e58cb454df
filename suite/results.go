package suite

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/kasmrt/kasmrt/engine"
	"github.com/kasmrt/kasmrt/engine/events"
)

// Schema names suite.json's format.
const Schema = "kasmrt.suite/v1"

// SummaryFile is the suite's result in its output directory.
const SummaryFile = "suite.json"

// VerdictNotRun is the verdict of a run the suite never started: it was
// stopped (Ctrl-C) before the run's turn came.
const VerdictNotRun events.Verdict = "not-run"

// VerdictInterrupted is the suite's verdict for a run the suite's own
// stopping cut short (Ctrl-C, SIGTERM, SIGHUP, the console quitting): its
// report is complete and says test-error with outcome interrupted, but it
// judged nothing about the application, so the suite counts it apart
// from the test errors and --resume runs it again.
const VerdictInterrupted events.Verdict = "interrupted"

// judged reports whether a run's verdict says something about the
// scenario: a run that never ran or was interrupted does not.
func judged(verdict events.Verdict) bool {
	return verdict != VerdictNotRun && verdict != VerdictInterrupted
}

// RunResult is one run as the suite saw it end.
type RunResult struct {
	Key      string         `json:"key"`
	Scenario string         `json:"scenario"`
	File     string         `json:"file"`
	Sample   int            `json:"sample"`
	Tags     []string       `json:"tags,omitempty"`
	Verdict  events.Verdict `json:"verdict"`
	Outcome  events.Outcome `json:"outcome,omitempty"`
	Reasons  []string       `json:"reasons,omitempty"`
	Concerns []string       `json:"concerns,omitempty"`
	// Report is the run's report directory, relative to suite.json.
	Report     string  `json:"report,omitempty"`
	DurationMS int64   `json:"duration_ms"`
	Tokens     float64 `json:"tokens"`
	// IdentitySHA256 is the run's manifest identity.
	IdentitySHA256 string `json:"identity_sha256,omitempty"`
	// Resumed is set when --resume found the run complete and kept it.
	Resumed bool `json:"resumed,omitempty"`
	// Error is a fault that kept the run's report from being complete.
	Error string `json:"error,omitempty"`
}

// ScenarioSummary is a scenario judged over its samples.
type ScenarioSummary struct {
	Scenario string `json:"scenario"`
	File     string `json:"file"`
	Samples  int    `json:"samples"`
	// Judged counts the samples that ran to a verdict of their own: not
	// those interrupted or not run.
	Judged int `json:"judged"`
	// Passed counts pass and pass-with-concerns.
	Passed int `json:"passed"`
	// PassRate is Passed over Judged (0 when nothing was judged): an
	// interrupted or unrun sample is not a failed one.
	PassRate float64 `json:"pass_rate"`
	// Flaky is set when judged samples disagree: some passed, some not.
	Flaky    bool                   `json:"flaky"`
	Verdicts map[events.Verdict]int `json:"verdicts"`
	// DurationMS sums the samples' durations.
	DurationMS int64   `json:"duration_ms"`
	Tokens     float64 `json:"tokens"`
}

// Summary is suite.json.
type Summary struct {
	Schema        string `json:"schema"`
	KasmrtVersion string `json:"kasmrt_version"`
	Name          string `json:"name"`
	// Shard is "i/N" for one shard's output, "" for a whole suite.
	Shard string `json:"shard,omitempty"`
	// PlanSHA256 identifies the unsharded plan (every run's key and
	// identity); shards of one suite share it.
	PlanSHA256 string `json:"plan_sha256"`
	// Planned are the keys of every run of the unsharded plan.
	Planned   []string               `json:"planned"`
	Started   time.Time              `json:"started"`
	Ended     time.Time              `json:"ended"`
	Counts    map[events.Verdict]int `json:"counts"`
	ExitCode  int                    `json:"exit_code"`
	Scenarios []ScenarioSummary      `json:"scenarios"`
	Runs      []RunResult            `json:"runs"`
}

// worse reports whether exit code a is worse than b: 2 (test-error) over
// 1 (app-failed) over 4 (concerns under --strict) over 0.
func worse(a, b int) bool {
	rank := map[int]int{0: 0, 4: 1, 1: 2, 2: 3}
	return rank[a] > rank[b]
}

// summarize folds the runs into counts, per-scenario results and the exit
// code by the worst verdict.
func summarize(s *Summary, strict bool) {
	s.Counts = map[events.Verdict]int{}
	s.ExitCode = 0
	byFile := map[string]*ScenarioSummary{}
	var order []string
	for _, r := range s.Runs {
		s.Counts[r.Verdict]++
		if c := engine.ExitCodeFor(r.Verdict, strict); worse(c, s.ExitCode) {
			s.ExitCode = c
		}
		sc, ok := byFile[r.File]
		if !ok {
			sc = &ScenarioSummary{Scenario: r.Scenario, File: r.File, Verdicts: map[events.Verdict]int{}}
			byFile[r.File] = sc
			order = append(order, r.File)
		}
		sc.Samples++
		if judged(r.Verdict) {
			sc.Judged++
		}
		sc.Verdicts[r.Verdict]++
		if r.Verdict == events.VerdictPass || r.Verdict == events.VerdictPassConcerns {
			sc.Passed++
		}
		sc.DurationMS += r.DurationMS
		sc.Tokens += r.Tokens
	}
	sort.Strings(order)
	s.Scenarios = s.Scenarios[:0]
	for _, f := range order {
		sc := byFile[f]
		if sc.Judged > 0 {
			sc.PassRate = float64(sc.Passed) / float64(sc.Judged)
		}
		// Samples disagree when some passed and some did not; a run that
		// never ran or was interrupted says nothing about the scenario.
		sc.Flaky = sc.Passed > 0 && sc.Passed < sc.Judged
		s.Scenarios = append(s.Scenarios, *sc)
	}
	sort.SliceStable(s.Runs, func(i, j int) bool { return s.Runs[i].Key < s.Runs[j].Key })
}

// writeJSON writes v as dir/name atomically.
func writeJSON(dir, name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", name, err)
	}
	tmp, err := os.CreateTemp(dir, "."+name+"-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.Write(append(b, '\n'))
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), filepath.Join(dir, name))
	}
	if werr != nil {
		return fmt.Errorf("write %s: %w", name, werr)
	}
	return nil
}

// ReadSummary reads dir/suite.json.
func ReadSummary(dir string) (*Summary, error) {
	path := filepath.Join(dir, SummaryFile)
	data, err := readHead(path, 64<<20)
	if err != nil {
		return nil, err
	}
	var s Summary
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if s.Schema != Schema {
		return nil, fmt.Errorf("read %s: schema %q, want %q", path, s.Schema, Schema)
	}
	return &s, nil
}

func jsonUnmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }
