package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/suite"
)

const exampleSuite = "../../scenarios/examples/suites/scripted.yaml"

// The bundled example suite runs on two workers with a repeated scenario,
// resumes without running anything again, and its two shards merge into
// the same result.
func TestSuiteCommandExamples(t *testing.T) {
	t.Parallel()
	need(t, "Xvfb", "xterm", "zenity", "dbus-run-session")
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	code, stdout, stderr := kasmrt(t, "suite", exampleSuite, "--out", out, "--workers", "2", "--junit", filepath.Join(dir, "ci", "junit.xml"))
	if code != exitPass {
		t.Fatalf("suite exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if n := strings.Count(stdout, "/4] pass"); n != 4 || !strings.Contains(stdout, "zenity question") || !strings.Contains(stdout, "2/2 passed (100%)") {
		t.Errorf("want four pass lines and the summary:\n%s", stdout)
	}
	if _, err := os.Stat(filepath.Join(dir, "ci", "junit.xml")); err != nil {
		t.Errorf("--junit: %v", err)
	}
	code, stdout, _ = kasmrt(t, "suite", exampleSuite, "--out", out, "--resume", "--json")
	if code != exitPass || strings.Count(stdout, `"resumed":true}}`) != 4 {
		t.Errorf("resume exit %d, want every run resumed:\n%s", code, stdout)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	var last struct {
		Kind    string `json:"kind"`
		Summary struct {
			Counts map[string]int `json:"counts"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last.Kind != "suite.summary" || last.Summary.Counts["pass"] != 4 {
		t.Errorf("last --json line = %s (%v)", lines[len(lines)-1], err)
	}

	// The shards run at once, as CI's jobs do.
	type shardRun struct {
		spec, out      string
		code           int
		stdout, stderr string
	}
	runs := []*shardRun{{spec: "1/2"}, {spec: "2/2"}}
	var wg sync.WaitGroup
	for _, r := range runs {
		r.out = filepath.Join(dir, "shard-"+r.spec[:1])
		wg.Go(func() {
			r.code, r.stdout, r.stderr = kasmrt(t, "suite", exampleSuite, "--shard", r.spec, "--out", r.out)
		})
	}
	wg.Wait()
	var shards []string
	for _, r := range runs {
		if r.code != exitPass {
			t.Fatalf("shard %s exit %d\n%s\n%s", r.spec, r.code, r.stdout, r.stderr)
		}
		shards = append(shards, r.out)
	}
	code, stdout, stderr = kasmrt(t, append([]string{"merge", "--out", filepath.Join(dir, "merged")}, shards...)...)
	if code != exitPass || !strings.Contains(stdout, "4 runs") || !strings.Contains(stdout, "4 pass") {
		t.Errorf("merge exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// Bad input stops a suite with exit 3 before anything runs.
func TestSuiteCommandBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	badSuite := filepath.Join(dir, "suite.yaml")
	if err := os.WriteFile(badSuite, []byte("scenarios:\n  - path: nothing.yaml\nworkers: many\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	nonEmpty := filepath.Join(dir, "full")
	if err := os.MkdirAll(filepath.Join(nonEmpty, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"bad suite file", []string{"suite", badSuite, "--out", filepath.Join(dir, "o1")}, "suite.yaml:3:10: workers"},
		{"no scenarios", []string{"suite", "--out", filepath.Join(dir, "o2")}, "no scenarios"},
		{"bad shard", []string{"suite", exampleSuite, "--shard", "3/2"}, "--shard"},
		{"resume without out", []string{"suite", exampleSuite, "--resume"}, "--resume needs"},
		{"non-empty out", []string{"suite", exampleSuite, "--out", nonEmpty}, "is not empty"},
		{"merge without out", []string{"merge", dir}, "--out"},
		{"merge of no suite", []string{"merge", dir, "--out", filepath.Join(dir, "m")}, "suite.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := kasmrt(t, tt.args...)
			if code != exitBadInput || !strings.Contains(stderr+stdout, tt.want) {
				t.Errorf("exit %d, want 3 with %q\nstdout:\n%s\nstderr:\n%s", code, tt.want, stdout, stderr)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "o1")); err == nil {
		t.Error("a refused suite created its output directory")
	}
}

func TestSchemaSuite(t *testing.T) {
	t.Parallel()
	code, stdout, _ := kasmrt(t, "schema", "suite")
	var schema map[string]any
	if code != 0 || json.Unmarshal([]byte(stdout), &schema) != nil || schema["$id"] != "https://kasmrt.dev/schema/suite.json" {
		t.Errorf("schema suite: exit %d\n%s", code, stdout)
	}
}

// A run line says why a run did not pass, under it; a pass says nothing more.
func TestSuiteRunLineSaysWhy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		run  suite.RunResult
		want string
	}{
		{"pass", suite.RunResult{Verdict: events.VerdictPass, Reasons: []string{"all checks passed"}}, ""},
		{"failed", suite.RunResult{Verdict: events.VerdictAppFailed, Reasons: []string{"window_present failed: gone", "1 call failed"}},
			"       window_present failed: gone\n"},
		{"fault", suite.RunResult{Verdict: events.VerdictTestError, Error: "no report.json", Reasons: []string{"other"}},
			"       no report.json\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var b strings.Builder
			printRunLine(&b, 1, 1, tc.run)
			_, rest, _ := strings.Cut(b.String(), "\n")
			if rest != tc.want {
				t.Errorf("under the run line: %q, want %q", rest, tc.want)
			}
		})
	}
}
