package suite

import (
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
)

func TestSummarize(t *testing.T) {
	t.Parallel()
	s := hostileSummary()
	if s.Counts["pass"] != 1 || s.Counts["app-failed"] != 1 || s.Counts["test-error"] != 1 || s.Counts[VerdictNotRun] != 1 {
		t.Errorf("counts = %v", s.Counts)
	}
	if s.ExitCode != 2 {
		t.Errorf("exit code = %d, want 2 for the test-error", s.ExitCode)
	}
	alpha := s.Scenarios[0]
	if alpha.Samples != 2 || alpha.Passed != 1 || alpha.PassRate != 0.5 || !alpha.Flaky || alpha.DurationMS != 2400 {
		t.Errorf("alpha = %+v, want 1 of 2 passed, flaky", alpha)
	}
	if s.Scenarios[1].Flaky || s.Scenarios[1].PassRate != 1 {
		t.Errorf("one passing sample is flaky or not passed: %+v", s.Scenarios[1])
	}
}

// The exit code is the worst verdict's, ranked as run's codes are.
func TestExitCodeByWorstVerdict(t *testing.T) {
	t.Parallel()
	tests := []struct {
		verdicts []events.Verdict
		strict   bool
		want     int
	}{
		{[]events.Verdict{"pass", "pass"}, false, 0},
		{[]events.Verdict{"pass", "pass-with-concerns"}, false, 0},
		{[]events.Verdict{"pass", "pass-with-concerns"}, true, 4},
		{[]events.Verdict{"pass-with-concerns", "app-failed"}, true, 1},
		{[]events.Verdict{"app-failed", "pass"}, false, 1},
		{[]events.Verdict{"app-failed", "test-error"}, false, 2},
		{[]events.Verdict{"pass", VerdictNotRun}, false, 2},
	}
	for _, tt := range tests {
		s := &Summary{}
		for i, v := range tt.verdicts {
			s.Runs = append(s.Runs, RunResult{Key: string(rune('a' + i)), File: "f", Verdict: v})
		}
		summarize(s, tt.strict)
		if s.ExitCode != tt.want {
			t.Errorf("%v strict=%v: exit %d, want %d", tt.verdicts, tt.strict, s.ExitCode, tt.want)
		}
	}
}

func TestShardPartitions(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"0/3", "4/3", "1/0", "a/b", "1", "1/3/4", "-1/2"} {
		if _, err := ParseShard(bad); err == nil {
			t.Errorf("--shard %s accepted", bad)
		}
	}
	keys := []string{}
	for i := range 50 {
		keys = append(keys, "s"+string(rune('a'+i%26))+".yaml#"+string(rune('0'+i/26)))
	}
	counts := map[string]int{}
	for i := 1; i <= 3; i++ {
		sh, err := ParseShard(string(rune('0'+i)) + "/3")
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, k := range keys {
			if sh.holds(k) {
				counts[k]++
				n++
			}
		}
		if n == 0 {
			t.Errorf("shard %d/3 holds none of 50 runs", i)
		}
	}
	for _, k := range keys {
		if counts[k] != 1 {
			t.Errorf("%s is in %d shards, want exactly 1", k, counts[k])
		}
	}
}

func TestFilter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr string
		name string
		file string
		tags []string
		want bool
	}{
		{"", "x", "x.yaml", nil, true},
		{"smoke", "x", "x.yaml", []string{"smoke"}, true},
		{"smoke", "x", "x.yaml", []string{"slow"}, false},
		{"zenity*", "zenity question", "z.yaml", nil, true},
		{"browser-*.yaml", "login", "browser-login.yaml", nil, true},
		{"!browser*", "login", "browser-login.yaml", nil, false},
		{"!browser*", "xterm", "xterm.yaml", nil, true},
		{"smoke,!slow", "x", "x.yaml", []string{"smoke", "slow"}, false},
	}
	for _, tt := range tests {
		f, err := ParseFilter(tt.expr)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.match(tt.name, tt.file, tt.tags); got != tt.want {
			t.Errorf("--filter %q on %s %s %v = %v, want %v", tt.expr, tt.name, tt.file, tt.tags, got, tt.want)
		}
	}
	for _, bad := range []string{"a,,b", "[", "!"} {
		if _, err := ParseFilter(bad); err == nil {
			t.Errorf("--filter %q accepted", bad)
		}
	}
}

// Samples that judged nothing (interrupted by the suite's stopping, or
// never run) are neither failures nor a reason to call a scenario flaky:
// the pass rate is over the judged samples, and they are counted apart.
func TestUnjudgedSamplesAreNotFailures(t *testing.T) {
	t.Parallel()
	s := &Summary{Runs: []RunResult{
		{Key: "a#0", File: "a", Verdict: "pass"},
		{Key: "a#1", File: "a", Verdict: "interrupted", Outcome: "interrupted"},
		{Key: "a#2", File: "a", Verdict: "not-run"},
		{Key: "b#0", File: "b", Verdict: "interrupted", Outcome: "interrupted"},
	}}
	summarize(s, false)
	a, b := s.Scenarios[0], s.Scenarios[1]
	if a.Flaky || a.PassRate != 1 || a.Passed != 1 {
		t.Errorf("a = %+v: one pass beside unjudged samples is flaky or less than a full pass rate", a)
	}
	if b.Flaky || b.PassRate != 0 || b.Passed != 0 {
		t.Errorf("b = %+v", b)
	}
	if s.Counts["interrupted"] != 2 || s.Counts["not-run"] != 1 || s.Counts["test-error"] != 0 || s.ExitCode != 2 {
		t.Errorf("counts %v exit %d, want 2 interrupted and 1 not run apart, exit 2 (the suite has no verdict for them)", s.Counts, s.ExitCode)
	}
}
