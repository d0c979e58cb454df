package suite

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kasmrt/kasmrt/engine"
	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/internal/testkit"
	"github.com/kasmrt/kasmrt/scenarios"
)

// suitePass is a scripted run of xmessage that passes; suiteFail clicks
// xmessage's button, which exits 3, so the run is app-failed.
const (
	suitePass = `name: passes
app:
  command: [xmessage, -geometry, +40+40, hello]
  window: {class: Xmessage}
steps:
  - observe_screen: {}
`
	suiteFail = `name: fails
app:
  command: [xmessage, -geometry, +100+60, -buttons, "ok:3", hi]
  window: {class: Xmessage}
click_targets:
  ok_button: {x: 16, y: 38, description: the ok button under the text}
steps:
  - observe_screen: {}
  - click: ok_button
  - wait: 1
`
	suiteSlow = `name: slow
app:
  command: [xmessage, -geometry, +40+40, slow]
  window: {class: Xmessage}
steps:
  - observe_screen: {}
  - wait: 20
`
	// suiteOperator bounds no services: the tests that run with it alone
	// run in parallel, and only the gate tests, one after another, use the
	// process-wide gates.
	suiteOperator = `runner:
  settle_interval_ms: 30
  settle_cap_ms: 400
session:
  width: 640
  height: 400
`
	suiteFile = `name: e2e
operator: operator.yaml
scenarios:
  - path: pass.yaml
    tags: [smoke]
  - path: fail.yaml
    repeat: 2
`
)

func suiteNeed(t *testing.T) {
	t.Helper()
	testkit.Need(t, "Xvfb", "xmessage")
}

// suiteDir writes files (name -> content) into a fresh directory.
func suiteDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		testkit.WriteFile(t, dir, name, body)
	}
	return dir
}

// runSuite plans the scenarios of dir that args name (file names or
// patterns) with dir's operator.yaml, no environment, and runs them into
// dir/out with opts; it returns the summary and the output directory.
func runSuite(t *testing.T, dir string, args []string, opts Options) (*Summary, string) {
	t.Helper()
	var paths []string
	for _, a := range args {
		paths = append(paths, filepath.Join(dir, a))
	}
	plan, err := Build(Input{Args: paths, Operator: filepath.Join(dir, "operator.yaml"),
		Version: "test", Lookup: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	opts.Out, opts.Version = filepath.Join(dir, "out"), "test"
	sum, err := Execute(context.Background(), plan, opts)
	if err != nil {
		t.Fatalf("execute: %v", err)
	}
	return sum, opts.Out
}

func suitePlan(t *testing.T, args []string, shard Shard) *Plan {
	t.Helper()
	plan, err := Build(Input{Args: args, Shard: shard, Version: "test", Lookup: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	return plan
}

func suiteManifests(t *testing.T, out string, s *Summary) map[string]engine.Manifest {
	t.Helper()
	ms := map[string]engine.Manifest{}
	for _, r := range s.Runs {
		if r.Verdict == VerdictNotRun {
			continue
		}
		m, err := engine.ReadManifest(filepath.Join(out, r.Report))
		if err != nil {
			t.Fatalf("%s: %v", r.Key, err)
		}
		ms[r.Key] = m
	}
	return ms
}

func verdicts(s *Summary) map[string]string {
	out := map[string]string{}
	for _, r := range s.Runs {
		out[r.Key] = string(r.Verdict)
	}
	return out
}

// A suite runs every sample in its own session on two workers, writes a
// manifest per run, suite.json and JUnit; --resume keeps what is complete,
// re-runs what was cut short and refuses another configuration; the merged
// shards give the unsharded result.
func TestSuiteEndToEnd(t *testing.T) {
	t.Parallel()
	suiteNeed(t)
	dir := suiteDir(t, map[string]string{"pass.yaml": suitePass, "fail.yaml": suiteFail,
		"operator.yaml": suiteOperator, "suite.yaml": suiteFile})
	args := []string{filepath.Join(dir, "suite.yaml")}
	plan := suitePlan(t, args, Shard{})
	if len(plan.Runs) != 3 || plan.Workers != 0 || plan.Name != "e2e" {
		t.Fatalf("plan has %d runs (want 3), name %q", len(plan.Runs), plan.Name)
	}
	out := filepath.Join(dir, "out")
	ctx := context.Background()
	sum, err := Execute(ctx, plan, Options{Out: out, Workers: 2, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		filepath.Join(dir, "pass.yaml") + "#0": "pass",
		filepath.Join(dir, "fail.yaml") + "#0": "app-failed",
		filepath.Join(dir, "fail.yaml") + "#1": "app-failed",
	}
	if got := verdicts(sum); !mapsEqual(got, want) {
		t.Fatalf("verdicts = %v, want %v", got, want)
	}
	if sum.ExitCode != 1 || sum.Counts["pass"] != 1 || sum.Counts["app-failed"] != 2 {
		t.Errorf("exit %d counts %v, want exit 1", sum.ExitCode, sum.Counts)
	}
	onDisk, err := ReadSummary(out)
	if err != nil {
		t.Fatal(err)
	}
	if !sameRuns(onDisk, sum) || onDisk.PlanSHA256 != plan.SHA256 || len(onDisk.Planned) != 3 {
		t.Errorf("suite.json differs from the result: %+v", onDisk)
	}
	first := suiteManifests(t, out, sum)
	for _, r := range sum.Runs {
		m := first[r.Key]
		if !m.Complete() || m.Verdict != r.Verdict || m.Seed.SampleIndex != r.Sample || m.IdentitySHA256 != r.IdentitySHA256 {
			t.Errorf("%s: manifest %+v, result %+v", r.Key, m, r)
		}
	}
	if xmllint, err := exec.LookPath("xmllint"); err == nil {
		if b, err := exec.Command(xmllint, "--noout", "--schema", "testdata/junit.xsd", filepath.Join(out, JUnitFile)).CombinedOutput(); err != nil {
			t.Errorf("junit.xml: %v\n%s", err, b)
		}
	}

	// Resume: nothing runs again.
	sum2, err := Execute(ctx, suitePlan(t, args, Shard{}), Options{Out: out, Resume: true, Workers: 2, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range sum2.Runs {
		if !r.Resumed || suiteManifests(t, out, sum2)[r.Key].Started != first[r.Key].Started {
			t.Errorf("%s ran again on resume", r.Key)
		}
	}
	if !sameRuns(sum, sum2) {
		t.Errorf("resumed result differs")
	}

	// A run killed mid-way left a manifest without an end: resume re-runs
	// it alone.
	cut := filepath.Join(out, plan.Runs[0].Dir, engine.ManifestFile)
	m := first[plan.Runs[0].Key]
	m.Ended, m.Verdict = nil, ""
	b, _ := json.Marshal(m)
	if err := os.WriteFile(cut, b, 0o600); err != nil {
		t.Fatal(err)
	}
	sum3, err := Execute(ctx, suitePlan(t, args, Shard{}), Options{Out: out, Resume: true, Workers: 2, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range sum3.Runs {
		rerun := r.Key == plan.Runs[0].Key
		if r.Resumed == rerun {
			t.Errorf("%s: resumed=%v, want %v", r.Key, r.Resumed, !rerun)
		}
	}
	if !sameRuns(sum, sum3) {
		t.Errorf("after re-running the cut run: %v, want %v", verdicts(sum3), verdicts(sum))
	}

	// Another configuration in the same directory is refused, naming what
	// differs, and nothing runs.
	if err := os.WriteFile(filepath.Join(dir, "operator.yaml"), []byte(suiteOperator+"  depth: 16\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	changed := suitePlan(t, args, Shard{})
	_, err = Execute(ctx, changed, Options{Out: out, Resume: true, Version: "test"})
	var bad *BadInputError
	if !errors.As(err, &bad) || !strings.Contains(err.Error(), "operator.identity_sha256") {
		t.Errorf("resume with another operator configuration: %v, want a refusal naming operator.identity_sha256", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "operator.yaml"), []byte(suiteOperator), 0o600); err != nil {
		t.Fatal(err)
	}

	// Shards: each runs its part; merged, they are the unsharded suite.
	var shardOuts []string
	for i := 1; i <= 2; i++ {
		so := filepath.Join(dir, "shard", string(rune('0'+i)))
		shardOuts = append(shardOuts, so)
		if _, err := Execute(ctx, suitePlan(t, args, Shard{Index: i, Count: 2}), Options{Out: so, Workers: 2, Version: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	merged, err := Merge(shardOuts, filepath.Join(dir, "merged"), false)
	if err != nil {
		t.Fatal(err)
	}
	if got := verdicts(merged); !mapsEqual(got, want) || merged.ExitCode != sum.ExitCode || merged.PlanSHA256 != sum.PlanSHA256 {
		t.Errorf("merged verdicts %v exit %d, want %v exit %d", got, merged.ExitCode, want, sum.ExitCode)
	}
	for _, r := range merged.Runs {
		if _, err := engine.ReadManifest(filepath.Join(dir, "merged", r.Report)); err != nil {
			t.Errorf("merged report path %s: %v", r.Report, err)
		}
	}
	// One shard alone is incomplete: the runs it lacks are not run.
	partial, err := Merge(shardOuts[:1], filepath.Join(dir, "partial"), false)
	if err != nil {
		t.Fatal(err)
	}
	if len(partial.Runs) != 3 || partial.ExitCode != 2 && partial.Counts[VerdictNotRun] > 0 {
		t.Errorf("a partial merge = %v", verdicts(partial))
	}
	// A shard of another plan is refused.
	otherDir := suiteDir(t, map[string]string{"pass.yaml": suitePass})
	other := filepath.Join(otherDir, "out")
	if _, err := Execute(ctx, suitePlan(t, []string{filepath.Join(otherDir, "pass.yaml")}, Shard{}), Options{Out: other, Version: "test"}); err != nil {
		t.Fatal(err)
	}
	if _, err := Merge([]string{shardOuts[0], other}, filepath.Join(dir, "bad-merge"), false); !errors.As(err, &bad) || !strings.Contains(err.Error(), "plan_sha256") {
		t.Errorf("merging another plan's output: %v", err)
	}
	if _, err := Merge([]string{shardOuts[0], shardOuts[0]}, filepath.Join(dir, "dup-merge"), false); !errors.As(err, &bad) {
		t.Errorf("merging one shard twice: %v", err)
	}
}

// gatedScenario shows xmessage once the file go exists in dir; until then
// the run waits for the application's window.
func gatedScenario(dir string) string {
	return `name: gated
app:
  command: [sh, -c, 'while [ ! -e ` + filepath.Join(dir, "go") + ` ]; do sleep 0.1; done; exec xmessage -geometry +40+40 hello']
  window: {class: Xmessage}
  startup_timeout_s: 60
steps:
  - observe_screen: {}
`
}

// Ctrl-C ends the running run with a complete report and marks the rest
// not run; the results are still written, and they say what happened:
// interrupted and not run, neither a test error nor a failure, and no
// scenario flaky. --resume then runs both again, and an unchanged suite
// reaches its verdict. A run whose manifest says pass while its report
// says otherwise is not kept either.
func TestSuiteInterrupted(t *testing.T) {
	t.Parallel()
	suiteNeed(t)
	dir := t.TempDir()
	testkit.WriteFile(t, dir, "gated.yaml", gatedScenario(dir))
	testkit.WriteFile(t, dir, "operator.yaml", suiteOperator)
	build := func() *Plan {
		plan, err := Build(Input{Args: []string{filepath.Join(dir, "gated.yaml")}, Operator: filepath.Join(dir, "operator.yaml"), Repeat: 2, Version: "test"})
		if err != nil {
			t.Fatal(err)
		}
		return plan
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := filepath.Join(dir, "out")
	// The suite is stopped once the first run's application is launched
	// (and waits for go): that run is interrupted, the second never starts.
	sum, err := Execute(ctx, build(), Options{Out: out, Workers: 1, Version: "test",
		RunSinks: func(Planned) []func(events.Event) {
			return []func(events.Event){func(e events.Event) {
				if _, ok := e.Data.(events.AppLaunched); ok {
					cancel()
				}
			}}
		}})
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]RunResult{}
	for _, r := range sum.Runs {
		byKey[r.Key] = r
	}
	first, second := byKey[filepath.Join(dir, "gated.yaml")+"#0"], byKey[filepath.Join(dir, "gated.yaml")+"#1"]
	if first.Verdict != VerdictInterrupted || first.Outcome != "interrupted" || second.Verdict != VerdictNotRun {
		t.Errorf("verdicts %v, want #0 interrupted and #1 not-run", verdicts(sum))
	}
	if m, err := engine.ReadManifest(filepath.Join(out, first.Report)); err != nil || !m.Complete() || m.Verdict != "test-error" {
		t.Errorf("the interrupted run's manifest: %+v %v", m, err)
	}
	if sum.ExitCode != 2 || sum.Counts[VerdictInterrupted] != 1 || sum.Counts[VerdictNotRun] != 1 || sum.Counts["test-error"] != 0 {
		t.Errorf("exit %d counts %v, want exit 2 with one interrupted and one not run, no test-error", sum.ExitCode, sum.Counts)
	}
	if sc := sum.Scenarios[0]; sc.Flaky || sc.Judged != 0 || sc.PassRate != 0 {
		t.Errorf("scenario %+v: flaky or judged by runs that judged nothing", sc)
	}
	onDisk, err := ReadSummary(out)
	if err != nil || !sameRuns(onDisk, sum) {
		t.Errorf("suite.json after Ctrl-C: %v %v", err, onDisk)
	}
	junit, err := os.ReadFile(filepath.Join(out, JUnitFile))
	if err != nil || !strings.Contains(string(junit), `<testsuites name="`) ||
		!strings.Contains(string(junit), `failures="0" errors="0" skipped="2"`) || !strings.Contains(string(junit), `message="interrupted: `) {
		t.Errorf("junit.xml does not report two skipped runs, one interrupted:\n%s", junit)
	}

	// Resume, unchanged: both run again and pass.
	testkit.WriteFile(t, dir, "go", "")
	sum, err = Execute(context.Background(), build(), Options{Out: out, Resume: true, Workers: 1, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range sum.Runs {
		if r.Resumed || r.Verdict != "pass" {
			t.Errorf("%s after resume: %s resumed=%v %v %s", r.Key, r.Verdict, r.Resumed, r.Reasons, r.Error)
		}
	}
	if sum.ExitCode != 0 {
		t.Errorf("the resumed suite exits %d, want 0", sum.ExitCode)
	}

	// A manifest that disagrees with its report is run again, not kept.
	var reportPath string
	for _, r := range sum.Runs {
		if r.Key == second.Key {
			reportPath = filepath.Join(out, r.Report, "report.json")
		}
	}
	b, err := os.ReadFile(reportPath)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(b), `"verdict": "pass"`, `"verdict": "app-failed"`, 1)
	if edited == string(b) {
		t.Fatalf("report.json has no pass verdict to edit:\n%.400s", b)
	}
	testkit.WriteFile(t, filepath.Dir(reportPath), "report.json", edited)
	sum, err = Execute(context.Background(), build(), Options{Out: out, Resume: true, Workers: 1, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range sum.Runs {
		if rerun := r.Key == second.Key; r.Resumed == rerun || r.Verdict != "pass" {
			t.Errorf("%s: resumed=%v (want %v) %s: a manifest its report contradicts was trusted", r.Key, r.Resumed, !rerun, r.Verdict)
		}
	}
}

// One bad scenario stops the suite before anything runs, with every
// problem listed and positioned.
func TestBuildListsEveryProblem(t *testing.T) {
	t.Parallel()
	dir := suiteDir(t, map[string]string{
		"good.yaml":  suitePass,
		"bad1.yaml":  "name: bad\ncolour: red\n",
		"bad2.yaml":  "name: bad2\napp: {command: [xterm]}\nsteps:\n  - no_such_tool: {}\n",
		"suite.yaml": "scenarios:\n  - path: good.yaml\n  - path: bad*.yaml\n  - path: missing-*.yaml\n",
	})
	_, err := Build(Input{Args: []string{filepath.Join(dir, "suite.yaml")}, Version: "test"})
	ps, ok := scenarios.AsProblems(err)
	if !ok {
		t.Fatalf("Build = %v, want problems", err)
	}
	text := ps.Error()
	for _, want := range []string{
		filepath.Join(dir, "bad1.yaml") + ":2:1: colour: unknown key",
		filepath.Join(dir, "bad2.yaml") + ":4:",
		filepath.Join(dir, "suite.yaml") + `:4:5: scenarios[2].path: "missing-*.yaml" matches no file`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("problems lack %q:\n%s", want, text)
		}
	}
}

// Settings that parallel runs would fight over are refused before
// anything runs; so are a non-empty --out without --resume and a resume
// of nothing.
func TestExecuteRefusesBeforeRunning(t *testing.T) {
	t.Parallel()
	dir := suiteDir(t, map[string]string{"pass.yaml": suitePass, "display.yaml": "session:\n  display: \":99\"\n",
		"inbox.yaml": "inbox:\n  session_token: t\n  listen: 127.0.0.1:0\n"})
	pass := filepath.Join(dir, "pass.yaml")
	full := filepath.Join(dir, "full")
	if err := os.MkdirAll(filepath.Join(full, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		operator string
		opts     Options
		want     string
	}{
		{"shared display", "display.yaml", Options{Workers: 2, Out: filepath.Join(dir, "o1")}, "session.display :99 cannot be shared"},
		{"shared inbox", "inbox.yaml", Options{Workers: 2, Out: filepath.Join(dir, "o2")}, "inbox.listen"},
		{"non-empty out", "", Options{Workers: 1, Out: full}, "is not empty"},
		{"resume of nothing", "", Options{Workers: 1, Out: filepath.Join(dir, "none"), Resume: true}, "nothing to resume"},
		{"too many workers", "", Options{Workers: 1000, Out: filepath.Join(dir, "o3")}, "--workers 1000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op := ""
			if tt.operator != "" {
				op = filepath.Join(dir, tt.operator)
			}
			plan, err := Build(Input{Args: []string{pass}, Operator: op, Version: "test"})
			if err != nil {
				t.Fatal(err)
			}
			_, err = Execute(context.Background(), plan, tt.opts)
			var bad *BadInputError
			if !errors.As(err, &bad) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Execute = %v, want a refusal containing %q", err, tt.want)
			}
			if tt.opts.Out != full {
				if _, err := os.Stat(filepath.Join(tt.opts.Out, "runs")); err == nil {
					t.Error("a refused suite started a run")
				}
			}
		})
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// sameRuns reports whether two summaries hold the same runs with the same
// verdicts and identities.
func sameRuns(a, b *Summary) bool {
	key := func(s *Summary) []string {
		var out []string
		for _, r := range s.Runs {
			out = append(out, r.Key+"="+string(r.Verdict)+"/"+r.IdentitySHA256)
		}
		slices.Sort(out)
		return out
	}
	return slices.Equal(key(a), key(b))
}

// An operator who aborts a run from the console ends it as a test error,
// but that is no result of the app under test: --resume runs it again, as
// it does an interrupted one, rather than keeping the abort as the run's
// answer.
func TestSuiteResumeRunsAnAbortedRunAgain(t *testing.T) {
	t.Parallel()
	suiteNeed(t)
	dir := t.TempDir()
	testkit.WriteFile(t, dir, "gated.yaml", gatedScenario(dir))
	testkit.WriteFile(t, dir, "operator.yaml", suiteOperator)
	build := func() *Plan {
		plan, err := Build(Input{Args: []string{filepath.Join(dir, "gated.yaml")}, Operator: filepath.Join(dir, "operator.yaml"), Version: "test"})
		if err != nil {
			t.Fatal(err)
		}
		return plan
	}
	out := filepath.Join(dir, "out")
	var (
		mu     sync.Mutex
		runner *engine.Runner
	)
	// The operator aborts the run once its application is launched (it
	// waits for go, so the run cannot finish first).
	sum, err := Execute(context.Background(), build(), Options{Out: out, Workers: 1, Version: "test",
		OnRunner: func(_ Planned, r *engine.Runner) { mu.Lock(); runner = r; mu.Unlock() },
		RunSinks: func(Planned) []func(events.Event) {
			return []func(events.Event){func(e events.Event) {
				if _, ok := e.Data.(events.AppLaunched); ok {
					mu.Lock()
					r := runner
					mu.Unlock()
					go r.Steer(events.Steer{Action: events.SteerAbort})
				}
			}}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if r := sum.Runs[0]; r.Verdict != "test-error" || r.Outcome != engine.OutcomeAborted {
		t.Fatalf("the aborted run: %s/%s, want test-error/%s", r.Verdict, r.Outcome, engine.OutcomeAborted)
	}
	testkit.WriteFile(t, dir, "go", "")
	sum, err = Execute(context.Background(), build(), Options{Out: out, Resume: true, Workers: 1, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if r := sum.Runs[0]; r.Resumed || r.Verdict != "pass" {
		t.Errorf("after resume: %s resumed=%v %v: the operator's abort was kept as the run's result", r.Verdict, r.Resumed, r.Reasons)
	}
}
