package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kasmrt/kasmrt/engine/cache"
	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/scenarios"
	"github.com/kasmrt/kasmrt/suite"
	"github.com/kasmrt/kasmrt/themes"
	"github.com/kasmrt/kasmrt/tui/sanitize"
)

type suiteFlags struct {
	// cache is --cache: the action cache's mode for every goal run.
	cache    string
	operator string
	workers  int
	repeat   int
	shard    string
	filter   string
	out      string
	resume   bool
	resumeIf bool
	// updateBaselines writes screenshot checks' baselines.
	updateBaselines bool
	junit           string
	headless        bool
	json            bool
	strict          bool
	tui             bool
	graphics        string
	theme           string
	fresh           bool
	// --emit k8s and the Job's settings.
	emit        string
	image       string
	shards      int
	parallelism int
	claim       string
	envSecret   string
	cpu         string
	memory      string
	cpuLimit    string
	memoryLimit string
	ttl         time.Duration
	deadline    time.Duration
}

func newSuiteCommand() *cobra.Command {
	var f suiteFlags
	cmd := &cobra.Command{
		Use:   "suite [PATH|GLOB|SUITE.yaml]...",
		Short: "Run many scenarios, each sample in its own session, and write suite.json and JUnit",
		Long: `suite runs scenario files, globs of them and suite files (see kasmrt schema
suite), --repeat samples of each, at most --workers at once (default: one per
core), each run with its own report directory under --out. Each worker keeps
its embedded Xvfb between its runs and resets it in between (every client but
the window manager disconnected); --fresh-displays starts a new one per run.
Every scenario is loaded and validated before the first run starts: one bad
file stops the suite with exit 3 and every problem listed. The operator file's
services.<group>.max_concurrent bounds the requests in flight to a group (the
model endpoint is group model) across all the suite's runs.

Each run writes manifest.json (its identity: kasmrt's version, the scenario's
and the operator configuration's hashes, the prompts' hashes, the seed and the
sample index, computed once the model's name is known). --resume with the
same --out keeps complete runs of the same identity whose manifest agrees
with their report.json, re-runs unfinished, interrupted and disagreeing ones,
and refuses (exit 3, naming the fields) when the identity differs. --shard i/N runs one part of the suite, split by a
stable hash of each run; kasmrt merge combines the parts.

On a terminal the suite console shows every run in a table (scenario, sample,
state, current step, verdict, duration, tokens, waiting questions): s sorts,
/ filters, enter watches a run in the live panes and esc goes back, and one
inbox holds the questions of every run (each run offers ask_human), answered
by picking one. Quitting it stops the suite as Ctrl-C does. Elsewhere, or
with --headless, a line is printed per finished run, then the summary
(--json: the runs and the summary as JSON lines). The exit code is the worst verdict's, as for run:
2 when any run is test-error, interrupted or not run, else 1 when any is
app-failed, else 0 (--strict: 4 for concerns). Ctrl-C, SIGTERM and SIGHUP
(whatever the inherited disposition: a suite started with & from a script
is still stopped by SIGINT) end the running runs, each with a complete
report, and write the results: those runs are "interrupted" and the rest
"not run", neither counted as failures nor making a scenario flaky (JUnit
skipped), and --resume runs them again.`,
		Example: `  kasmrt suite scenarios/examples/suites/scripted.yaml --out out/suite
  kasmrt suite 'scenarios/examples/*.yaml' --filter '!browser*' --repeat 3 --workers 2 --out out/s
  kasmrt suite suite.yaml --shard 2/4 --out out/shard-2`,
		RunE: func(cmd *cobra.Command, args []string) error { return runSuite(cmd, args, f) },
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.operator, "operator", "o", "", "operator file for every run (overrides the suite file's)")
	fl.IntVar(&f.workers, "workers", 0, "runs at once (default: the suite file's, else one per core)")
	fl.IntVar(&f.repeat, "repeat", 0, "samples of each scenario (default: the suite file's, else 1)")
	fl.StringVar(&f.shard, "shard", "", "run only part i of N of the suite, e.g. 1/3 (job/N: i is $JOB_COMPLETION_INDEX+1, for Kubernetes Indexed Jobs)")
	fl.StringVar(&f.filter, "filter", "", "comma-separated globs over scenario names, file names and tags; !glob excludes")
	fl.StringVar(&f.out, "out", "", "output directory, new or empty (default: a fresh reports/suite-<time>)")
	fl.BoolVar(&f.resume, "resume", false, "continue the suite in --out: keep complete runs of the same identity, re-run the rest")
	fl.BoolVar(&f.resumeIf, "resume-if-any", false, "--resume when --out holds an earlier output, else start it (for retried Kubernetes pods)")
	fl.StringVar(&f.junit, "junit", "", "also write the JUnit XML here (it is always in --out as junit.xml)")
	fl.StringVar(&f.cache, "cache", "", "the action cache beside each scenario (NAME.kasmrt-cache/) for its goal runs: read-write, read-only or off (default: the operator file's cache:, else off)")
	fl.BoolVar(&f.fresh, "fresh-displays", false, "start a new Xvfb for every run instead of keeping each worker's between its runs (reset in between)")
	fl.BoolVar(&f.tui, "tui", false, "show the suite console (default when stdout is a terminal)")
	fl.BoolVar(&f.headless, "headless", false, "print a line per finished run and the summary instead of the console")
	fl.StringVar(&f.graphics, "graphics", "auto", "console screenshots of a watched run: auto, kitty, sixel, blocks or none")
	fl.StringVar(&f.theme, "theme", "", "console theme: auto (the default: light or dark as the terminal's background is), dark, light, high-contrast or a theme file")
	fl.BoolVar(&f.json, "json", false, "print every finished run and the summary as JSON lines")
	fl.BoolVar(&f.strict, "strict", false, "exit 4 when the worst verdict is pass-with-concerns")
	fl.BoolVar(&f.updateBaselines, "update-baselines", false, "write the window of every screenshot check as its baseline (beside its scenario) instead of comparing it")
	fl.StringVar(&f.emit, "emit", "", `print a deployment of the suite instead of running it: "k8s" (a Kubernetes Indexed Job, one index per shard)`)
	fl.StringVar(&f.image, "image", "", "with --emit k8s: the container image (built with the Dockerfile)")
	fl.IntVar(&f.shards, "shards", 2, "with --emit k8s: the number of shards, one pod each")
	fl.IntVar(&f.parallelism, "parallelism", 0, "with --emit k8s: pods at once (default: every shard)")
	fl.StringVar(&f.claim, "claim", "kasmrt-reports", "with --emit k8s: the PersistentVolumeClaim the reports land in")
	fl.StringVar(&f.envSecret, "env-secret", "", "with --emit k8s: a Secret whose keys become the pods' environment (the model endpoint and key)")
	fl.StringVar(&f.cpu, "cpu", "", "with --emit k8s: each pod's CPU request (default: 1 per worker)")
	fl.StringVar(&f.memory, "memory", "", "with --emit k8s: each pod's memory request (default: 1Gi per worker)")
	fl.StringVar(&f.cpuLimit, "cpu-limit", "", "with --emit k8s: each pod's CPU limit (default: 2 per worker)")
	fl.StringVar(&f.memoryLimit, "memory-limit", "", "with --emit k8s: each pod's memory limit, /dev/shm included (default: 2Gi per worker)")
	fl.DurationVar(&f.ttl, "ttl", suite.DefaultJobTTL, "with --emit k8s: how long the finished Job and its pods' logs are kept (ttlSecondsAfterFinished)")
	fl.DurationVar(&f.deadline, "deadline", suite.DefaultJobDeadline, "with --emit k8s: how long the whole Job may run, retries included (activeDeadlineSeconds)")
	return cmd
}

func runSuite(cmd *cobra.Command, args []string, f suiteFlags) error {
	if f.headless && f.json {
		return refuse(cmd, errors.New("--headless and --json cannot be combined"))
	}
	if _, err := cache.ParseMode(f.cache); err != nil {
		return refuse(cmd, fmt.Errorf("--cache: %w", err))
	}
	if f.resume && f.out == "" {
		return refuse(cmd, errors.New("--resume needs the --out directory of the suite to continue"))
	}
	if f.resumeIf && f.out == "" {
		return refuse(cmd, errors.New("--resume-if-any needs the --out directory of the suite to continue"))
	}
	if f.junit != "" {
		if err := refuseBlockingOutput("--junit", f.junit); err != nil {
			return refuse(cmd, err)
		}
	}
	if f.tui && (f.headless || f.json) {
		return refuse(cmd, errors.New("--tui cannot be combined with --headless or --json"))
	}
	if _, builtin := themes.Builtin(f.theme); f.theme != "" && !builtin {
		if err := requireRegularFile("--theme", f.theme); err != nil {
			return refuse(cmd, err)
		}
	}
	cs, err := loadConsoleSettings(runFlags{graphics: f.graphics, theme: f.theme})
	if err != nil {
		return err
	}
	if f.emit != "" && f.shard != "" {
		return refuse(cmd, errors.New("--emit writes a Job that sets --shard for each pod; drop --shard"))
	}
	shardSpec, err := suite.ShardFromEnv(f.shard, os.Getenv)
	if err != nil {
		return refuse(cmd, err)
	}
	shard, err := suite.ParseShard(shardSpec)
	if err != nil {
		return refuse(cmd, err)
	}
	plan, err := suite.Build(suite.Input{Args: args, Operator: f.operator, Repeat: f.repeat,
		Filter: f.filter, Shard: shard, Version: version})
	if err != nil {
		if _, ok := scenarios.AsProblems(err); ok {
			printProblems(errOut(cmd), err)
			return &exitError{code: exitBadInput}
		}
		return refuse(cmd, err)
	}
	if f.emit != "" {
		return emitJob(cmd, plan, args, f)
	}
	out := f.out
	if out == "" {
		out = fmt.Sprintf("%s/suite-%s", defaultReportsDir, time.Now().Format("20060102-150405"))
	}
	w := sanitize.NewWriter(cmd.OutOrStdout())
	total := len(plan.Runs)
	var mu sync.Mutex
	done := 0
	onEnd := func(r suite.RunResult) {
		mu.Lock()
		defer mu.Unlock()
		done++
		if f.json {
			_ = json.NewEncoder(w).Encode(map[string]any{"kind": "suite.run", "run": r})
			return
		}
		printRunLine(w, done, total, r)
	}
	opts := suite.Options{Out: out, Workers: f.workers, Resume: f.resume, ResumeIfAny: f.resumeIf, Strict: f.strict, UpdateBaselines: f.updateBaselines, Version: version, OnEnd: onEnd,
		FreshDisplays: f.fresh, Cache: f.cache}
	var sum *suite.Summary
	console := f.tui || (!f.headless && !f.json && isTerminal(cmd.OutOrStdout()))
	if console {
		sum, err = runSuiteConsole(cmd, plan, opts, cs)
	} else {
		sum, err = suite.Execute(cmd.Context(), plan, opts)
	}
	var bad *suite.BadInputError
	if errors.As(err, &bad) {
		return refuse(cmd, bad.Err)
	}
	if err != nil {
		fmt.Fprintf(errOut(cmd), "kasmrt: %v\n", err)
		if sum == nil {
			return &exitError{code: exitTestError}
		}
	}
	if f.junit != "" {
		if err := suite.WriteJUnit(f.junit, sum); err != nil {
			fmt.Fprintf(errOut(cmd), "kasmrt: %v\n", err)
			return &exitError{code: exitTestError}
		}
	}
	if console {
		// The console's screen is gone: leave every run's line in the
		// terminal's scrollback.
		for i, r := range sum.Runs {
			printRunLine(w, i+1, len(sum.Runs), r)
		}
	}
	if f.json {
		_ = json.NewEncoder(w).Encode(map[string]any{"kind": "suite.summary", "summary": sum})
	} else {
		printSuiteSummary(w, sum, out)
	}
	return &exitError{code: sum.ExitCode}
}

// emitJob prints the suite as a Kubernetes Indexed Job. The plan was
// validated first, so a Job is only written for files that load.
func emitJob(cmd *cobra.Command, plan *suite.Plan, args []string, f suiteFlags) error {
	if f.emit != "k8s" {
		return refuse(cmd, fmt.Errorf("--emit %q: the one deployment kasmrt writes is k8s", f.emit))
	}
	suiteArgs := append([]string(nil), args...)
	if f.operator != "" {
		suiteArgs = append(suiteArgs, "-o", f.operator)
	}
	// Each pod runs as many workers as its resources are sized for: the
	// default is not one per core, which in a pod is the node's cores.
	workers := f.workers
	if workers <= 0 {
		workers = max(plan.Workers, 1)
	}
	suiteArgs = append(suiteArgs, "--workers", strconv.Itoa(workers))
	if f.repeat > 0 {
		suiteArgs = append(suiteArgs, "--repeat", strconv.Itoa(f.repeat))
	}
	if f.filter != "" {
		suiteArgs = append(suiteArgs, "--filter", f.filter)
	}
	if f.strict {
		suiteArgs = append(suiteArgs, "--strict")
	}
	resources, err := podResources(workers, f)
	if err != nil {
		return refuse(cmd, err)
	}
	for _, d := range []struct {
		flag  string
		value time.Duration
	}{{"--ttl", f.ttl}, {"--deadline", f.deadline}} {
		if d.value < time.Second || d.value > math.MaxInt32*time.Second {
			return refuse(cmd, fmt.Errorf("%s %s: want a duration from 1s to 68 years", d.flag, d.value))
		}
	}
	job, err := suite.Job(suite.JobOptions{Name: plan.Name, Image: f.image, Shards: f.shards, Parallelism: f.parallelism,
		Claim: f.claim, EnvSecret: f.envSecret, SuiteArgs: suiteArgs, Retries: 2,
		Resources: resources, TTL: f.ttl, Deadline: f.deadline})
	if err != nil {
		return refuse(cmd, err)
	}
	b, err := suite.JobYAML(job)
	if err != nil {
		return err
	}
	_, err = cmd.OutOrStdout().Write(b)
	return err
}

// podResources are the Job's pod requests and limits: those the flags
// give, the rest sized for the pod's workers.
func podResources(workers int, f suiteFlags) (corev1.ResourceRequirements, error) {
	r := suite.WorkerResources(workers)
	for _, q := range []struct {
		flag, value string
		list        corev1.ResourceList
		name        corev1.ResourceName
	}{
		{"--cpu", f.cpu, r.Requests, corev1.ResourceCPU},
		{"--memory", f.memory, r.Requests, corev1.ResourceMemory},
		{"--cpu-limit", f.cpuLimit, r.Limits, corev1.ResourceCPU},
		{"--memory-limit", f.memoryLimit, r.Limits, corev1.ResourceMemory},
	} {
		if q.value == "" {
			continue
		}
		v, err := resource.ParseQuantity(q.value)
		if err != nil || v.Sign() <= 0 {
			return r, fmt.Errorf("%s %q: want a positive Kubernetes quantity (2, 500m, 4Gi)", q.flag, q.value)
		}
		q.list[q.name] = v
	}
	for _, p := range []struct {
		name                   corev1.ResourceName
		requestFlag, limitFlag string
	}{{corev1.ResourceCPU, "--cpu", "--cpu-limit"}, {corev1.ResourceMemory, "--memory", "--memory-limit"}} {
		req, limit := r.Requests[p.name], r.Limits[p.name]
		if req.Cmp(limit) > 0 {
			return r, fmt.Errorf("%s %s is over %s %s: Kubernetes refuses a pod that requests more than its limit",
				p.requestFlag, req.String(), p.limitFlag, limit.String())
		}
	}
	return r, nil
}

func printRunLine(w io.Writer, n, total int, r suite.RunResult) {
	extra := ""
	if r.Resumed {
		extra = " (resumed)"
	}
	fmt.Fprintf(w, "[%d/%d] %-18s %s #%d  %.1fs  %.0f tokens  %s%s\n", n, total, r.Verdict, r.Scenario, r.Sample,
		float64(r.DurationMS)/1000, r.Tokens, r.Report, extra)
	// A run that did not pass says why under its line, so a CI log shows
	// the cause without the report directory at hand.
	if r.Verdict == events.VerdictPass || r.Verdict == events.VerdictPassConcerns {
		return
	}
	why := r.Error
	if why == "" && len(r.Reasons) > 0 {
		why = r.Reasons[0]
	}
	if why != "" {
		fmt.Fprintf(w, "       %s\n", why)
	}
}

func printSuiteSummary(w io.Writer, s *suite.Summary, out string) {
	fmt.Fprintf(w, "\nsuite %s: %d runs in %.1fs", s.Name, len(s.Runs), s.Ended.Sub(s.Started).Seconds())
	for _, v := range []events.Verdict{events.VerdictPass, events.VerdictPassConcerns, events.VerdictAppFailed, events.VerdictTestError, suite.VerdictInterrupted, suite.VerdictNotRun} {
		if n := s.Counts[v]; n > 0 {
			fmt.Fprintf(w, ", %d %s", n, v)
		}
	}
	fmt.Fprintln(w)
	for _, sc := range s.Scenarios {
		flaky := ""
		if sc.Flaky {
			flaky = "  flaky"
		}
		// Interrupted and unrun samples judged nothing: the pass rate is
		// over the others, and they are named beside it.
		unjudged := ""
		for _, v := range []events.Verdict{suite.VerdictInterrupted, suite.VerdictNotRun} {
			if n := sc.Verdicts[v]; n > 0 {
				unjudged += fmt.Sprintf(", %d %s", n, v)
			}
		}
		fmt.Fprintf(w, "  %-40s %d/%d passed (%.0f%%)%s%s\n", sc.Scenario, sc.Passed, sc.Judged, sc.PassRate*100, unjudged, flaky)
	}
	fmt.Fprintf(w, "results: %s/suite.json, %s/junit.xml\n", out, out)
}

func newMergeCommand() *cobra.Command {
	var out string
	var junit string
	var strict bool
	cmd := &cobra.Command{
		Use:   "merge SHARD_OUT... --out DIR",
		Short: "Combine the outputs of a suite's shards into one suite.json and JUnit file",
		Long: `merge reads the suite.json of each shard output (kasmrt suite --shard i/N)
and writes one suite.json and junit.xml into --out, as the unsharded suite
would have. Outputs of a different plan (another configuration, kasmrt
version or filter), two outputs of one shard and a run reported twice are
refused with exit 3; runs no shard reported count as not run. The exit code
is the merged suite's, as for suite.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return refuse(cmd, errors.New("merge needs --out DIR"))
			}
			sum, err := suite.Merge(args, out, strict)
			var bad *suite.BadInputError
			if errors.As(err, &bad) {
				return refuse(cmd, bad.Err)
			}
			if err != nil {
				fmt.Fprintf(errOut(cmd), "kasmrt: %v\n", err)
				return &exitError{code: exitTestError}
			}
			if junit != "" {
				if err := suite.WriteJUnit(junit, sum); err != nil {
					fmt.Fprintf(errOut(cmd), "kasmrt: %v\n", err)
					return &exitError{code: exitTestError}
				}
			}
			printSuiteSummary(sanitize.NewWriter(cmd.OutOrStdout()), sum, out)
			return &exitError{code: sum.ExitCode}
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "output directory for the merged suite.json and junit.xml, new or empty")
	cmd.Flags().StringVar(&junit, "junit", "", "also write the merged JUnit XML here")
	cmd.Flags().BoolVar(&strict, "strict", false, "exit 4 when the worst verdict is pass-with-concerns")
	return cmd
}
