package suite

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/kasmrt/kasmrt/engine"
	"github.com/kasmrt/kasmrt/engine/capacity"
	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/report"
	"github.com/kasmrt/kasmrt/engine/stage"
	"github.com/kasmrt/kasmrt/scenarios"
)

// Options are how a plan is run.
type Options struct {
	// Out is the suite's output directory: new or empty, or (with Resume)
	// an earlier output of the same plan.
	Out string
	// Workers bounds the runs at once (0: the plan's, else DefaultWorkers).
	Workers int
	// Resume keeps the complete runs of an earlier output whose identity
	// matches, and re-runs those that did not finish.
	Resume bool
	// ResumeIfAny is Resume when Out holds an earlier output and a fresh
	// start when it is missing or empty: what a retried Kubernetes pod
	// needs, which cannot know whether its first try wrote anything.
	ResumeIfAny bool
	// Strict makes pass-with-concerns exit 4, as run --strict.
	Strict bool
	// UpdateBaselines makes every run write its screenshot checks'
	// baselines instead of comparing them.
	UpdateBaselines bool
	Version         string
	// ModelTransport, when set, carries every run's model requests.
	ModelTransport http.RoundTripper
	// OnStart and OnEnd see each run begin and end (the --headless lines);
	// they are called from the workers and must be safe for that.
	OnStart func(Planned)
	OnEnd   func(RunResult)
	// FreshDisplays starts a new Xvfb for every run instead of keeping
	// each worker's display between its runs (reset in between).
	FreshDisplays bool
	// Cache overrides the operator file's cache: for every goal run
	// (engine.Options.Cache).
	Cache string
	// Interactive gives every run an inbox of its own, so ask_human is
	// offered: an operator at the suite console answers.
	Interactive bool
	// RunSinks, when set, gives each run's extra event sinks before it is
	// created; OnRunner is handed the runner before it runs, to answer and
	// steer it. Both are called from the workers.
	RunSinks func(Planned) []func(events.Event)
	OnRunner func(Planned, *engine.Runner)
}

// DefaultWorkers is one run per core: a run's Xvfb, application and
// capture keep about one core busy.
func DefaultWorkers() int { return max(runtime.NumCPU(), 1) }

// BadInputError is a problem found before any run started: the command
// line exits 3.
type BadInputError struct{ Err error }

func (e *BadInputError) Error() string { return e.Err.Error() }
func (e *BadInputError) Unwrap() error { return e.Err }

func badInput(format string, args ...any) error {
	return &BadInputError{Err: fmt.Errorf(format, args...)}
}

// Execute runs the plan and writes suite.json. Every check that can refuse
// the suite (the output directory, resume identities, settings that
// cannot be shared by parallel runs, the model's name) comes before the
// first run, as a *BadInputError. Once runs have started, ctx ending
// (Ctrl-C) ends the running ones, each with a complete report, and marks
// the rest not run.
func Execute(ctx context.Context, plan *Plan, opts Options) (*Summary, error) {
	ready, err := Prepare(ctx, plan, opts)
	if err != nil {
		return nil, err
	}
	return ready.Run(ctx)
}

// Ready is a plan whose every check has passed: nothing is left that can
// refuse it, so a console can start before its first run.
type Ready struct {
	plan    *Plan
	opts    Options
	workers int
	gates   *capacity.Gates
	kept    map[string]RunResult
}

// Prepare makes the checks Execute makes before the first run (the
// output directory, resume identities, shareable settings, capacity
// bounds, the model's name); every refusal is a *BadInputError.
func Prepare(ctx context.Context, plan *Plan, opts Options) (*Ready, error) {
	workers := opts.Workers
	if workers == 0 {
		workers = plan.Workers
	}
	if workers == 0 {
		workers = DefaultWorkers()
	}
	if workers < 1 || workers > scenarios.MaxSuiteWorkers {
		return nil, badInput("--workers %d: want 1 to %d", workers, scenarios.MaxSuiteWorkers)
	}
	if err := checkShareable(plan, workers); err != nil {
		return nil, err
	}
	gates, err := planGates(plan)
	if err != nil {
		return nil, err
	}
	// A goal run's model name, when the operator file leaves it to the
	// endpoint, is settled before anything else: the run's manifest
	// records the identity with the name in it, so the identities resume
	// compares are computed once it is known.
	for i := range plan.Runs {
		p := &plan.Runs[i]
		if p.Files.Scenario.Goal != "" {
			if err := engine.ResolveModelName(ctx, p.Files, opts.ModelTransport); err != nil {
				return nil, &BadInputError{Err: fmt.Errorf("%s: %w", p.Path, err)}
			}
		}
		id, err := engine.IdentityOf(p.Files, engine.Options{Version: opts.Version, SampleIndex: p.Sample})
		if err != nil {
			return nil, &BadInputError{Err: fmt.Errorf("%s: %w", p.Path, err)}
		}
		p.Identity = id
	}
	kept, err := prepareOut(plan, opts)
	if err != nil {
		return nil, err
	}
	return &Ready{plan: plan, opts: opts, workers: workers, gates: gates, kept: kept}, nil
}

// Run runs the prepared plan and writes suite.json and the JUnit file.
func (r *Ready) Run(ctx context.Context) (*Summary, error) {
	plan, opts, workers, gates, kept := r.plan, r.opts, r.workers, r.gates, r.kept
	sum := &Summary{Schema: Schema, KasmrtVersion: opts.Version, Name: plan.Name, Shard: plan.Shard.String(),
		PlanSHA256: plan.SHA256, Planned: plan.Keys, Started: time.Now().UTC()}
	results := make([]RunResult, len(plan.Runs))
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var machine stage.Machine
			if !opts.FreshDisplays {
				kept := &keptDisplay{}
				defer kept.close()
				machine = kept
			}
			for i := range jobs {
				p := plan.Runs[i]
				if ctx.Err() != nil {
					// Stopped while the run was handed over: it never
					// started.
					results[i] = notRun(p)
					if opts.OnEnd != nil {
						opts.OnEnd(results[i])
					}
					continue
				}
				if opts.OnStart != nil {
					opts.OnStart(p)
				}
				results[i] = runOne(ctx, p, opts, gates, machine)
				if opts.OnEnd != nil {
					opts.OnEnd(results[i])
				}
			}
		}()
	}
	started := make([]bool, len(plan.Runs))
	for i, p := range plan.Runs {
		if r, done := kept[p.Key]; done {
			results[i], started[i] = r, true
			if opts.OnEnd != nil {
				opts.OnEnd(r)
			}
			continue
		}
		// Once stopped, no run is handed over (select alone would pick
		// at random between a ready worker and the end), but the kept
		// runs after this one are still results.
		if ctx.Err() != nil {
			continue
		}
		select {
		case jobs <- i:
			started[i] = true
		case <-ctx.Done():
		}
	}
	close(jobs)
	wg.Wait()
	for i, p := range plan.Runs {
		if !started[i] {
			results[i] = notRun(p)
			if opts.OnEnd != nil {
				opts.OnEnd(results[i])
			}
		}
	}
	sum.Runs = results
	sum.Ended = time.Now().UTC()
	summarize(sum, opts.Strict)
	if err := writeJSON(opts.Out, SummaryFile, sum); err != nil {
		return sum, err
	}
	if err := WriteJUnit(filepath.Join(opts.Out, JUnitFile), sum); err != nil {
		return sum, err
	}
	return sum, nil
}

// checkShareable refuses settings parallel runs would fight over: one
// existing display, or one inbox address.
func checkShareable(plan *Plan, workers int) error {
	if workers == 1 {
		return nil
	}
	for _, p := range plan.Runs {
		op := p.Files.Operator
		if op.Desktop.Display != "" {
			return badInput("%s: session.display %s cannot be shared by %d workers; each run needs its own embedded Xvfb (leave session.display unset) or use --workers 1", op.KeyPos("session.display"), op.Desktop.Display, workers)
		}
		if op.Inbox.Listen != "" {
			return badInput("%s: inbox.listen %s cannot be bound by %d runs at once; use --workers 1", op.KeyPos("inbox.listen"), op.Inbox.Listen, workers)
		}
	}
	return nil
}

// prepareOut makes the output directory ready and, with Resume, returns
// the complete runs to keep, after refusing any whose identity differs
// from the plan's and clearing those that did not finish.
func prepareOut(plan *Plan, opts Options) (map[string]RunResult, error) {
	if opts.Out == "" {
		return nil, badInput("no output directory (--out)")
	}
	entries, err := os.ReadDir(opts.Out)
	if opts.ResumeIfAny {
		opts.Resume = err == nil && len(entries) > 0
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if opts.Resume {
			return nil, badInput("--resume: %s does not exist; there is nothing to resume", opts.Out)
		}
		if err := os.MkdirAll(opts.Out, 0o755); err != nil {
			return nil, badInput("create --out %s: %v", opts.Out, err)
		}
		return nil, nil
	case err != nil:
		return nil, badInput("--out %s: %v", opts.Out, err)
	case len(entries) > 0 && !opts.Resume:
		return nil, badInput("--out %s is not empty; name a new directory, or add --resume to continue the suite written there", opts.Out)
	case !opts.Resume:
		return nil, nil
	}
	kept := map[string]RunResult{}
	var clear []string
	var diffs []string
	for _, p := range plan.Runs {
		dir := filepath.Join(opts.Out, p.Dir)
		m, err := engine.ReadManifest(dir)
		if errors.Is(err, fs.ErrNotExist) {
			if _, statErr := os.Stat(dir); statErr == nil {
				clear = append(clear, dir) // begun, but no manifest yet
			}
			continue
		}
		if err != nil {
			return nil, badInput("--resume: %s: %v", p.Key, err)
		}
		if d := p.Identity.Differences(m.Identity); len(d) > 0 {
			diffs = append(diffs, fmt.Sprintf("%s: %s", p.Key, strings.Join(d, ", ")))
			continue
		}
		if !finished(dir, m) {
			clear = append(clear, dir)
			continue
		}
		r := resultFrom(p, opts.Out, m)
		r.Resumed = true
		kept[p.Key] = r
	}
	if len(diffs) > 0 {
		return nil, badInput("--resume: %s holds runs of a different configuration; start a new --out directory instead of mixing results. Fields that differ:\n  %s", opts.Out, strings.Join(diffs, "\n  "))
	}
	for _, dir := range clear {
		if err := os.RemoveAll(dir); err != nil {
			return nil, badInput("--resume: clear the unfinished run %s: %v", dir, err)
		}
	}
	return kept, nil
}

// finished reports whether the run in dir is a result resume may keep:
// its manifest is complete, hashes to the identity it holds, and agrees
// with report.json on the verdict and the outcome; and neither the
// suite's own stopping nor the operator's abort ended it. Anything else is
// run again, so neither a Ctrl-C, an abort from the console nor a manifest
// edited (or torn) apart from its report turns into a result.
func finished(dir string, m engine.Manifest) bool {
	if !m.Complete() || m.Outcome == engine.OutcomeInterrupted || m.Outcome == engine.OutcomeAborted ||
		m.IdentitySHA256 != m.Identity.SHA256() {
		return false
	}
	rep, err := readReport(dir)
	return err == nil && rep.Verdict == m.Verdict && rep.Outcome == m.Outcome
}

// notRun is the result of a run the suite was stopped before starting.
func notRun(p Planned) RunResult {
	return RunResult{Key: p.Key, Scenario: p.Scenario, File: p.Path, Sample: p.Sample, Tags: p.Tags,
		Verdict: VerdictNotRun, Reasons: []string{"the suite was stopped before this run started"}}
}

// runOne runs one planned run in its own report directory (and, through
// the engine, its own Xvfb).
func runOne(ctx context.Context, p Planned, opts Options, gates *capacity.Gates, machine stage.Machine) RunResult {
	dir := filepath.Join(opts.Out, p.Dir)
	res := RunResult{Key: p.Key, Scenario: p.Scenario, File: p.Path, Sample: p.Sample, Tags: p.Tags, Report: p.Dir}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		res.Verdict, res.Error = events.VerdictTestError, err.Error()
		return res
	}
	eo := engine.Options{ReportDir: dir, Version: opts.Version, SampleIndex: p.Sample, ModelTransport: opts.ModelTransport, UpdateBaselines: opts.UpdateBaselines,
		Gates: gates, Interactive: opts.Interactive, Machine: machine, Cache: opts.Cache}
	if opts.RunSinks != nil {
		eo.Sinks = opts.RunSinks(p)
	}
	runner, err := engine.New(p.Files, eo)
	if err != nil {
		res.Verdict, res.Error = events.VerdictTestError, err.Error()
		return res
	}
	if opts.OnRunner != nil {
		opts.OnRunner(p, runner)
	}
	out, err := runner.Run(ctx)
	if err != nil {
		res.Error = runner.Redact(err.Error())
	}
	res.Verdict, res.Outcome = out.Verdict, out.Outcome
	if res.Verdict == "" {
		res.Verdict = events.VerdictTestError
	}
	if res.Outcome == engine.OutcomeInterrupted {
		res.Verdict = VerdictInterrupted
	}
	if m, merr := engine.ReadManifest(dir); merr == nil {
		r := resultFrom(p, opts.Out, m)
		r.Error = res.Error
		return r
	}
	return res
}

// resultFrom reads a finished run's manifest and report into its result.
func resultFrom(p Planned, out string, m engine.Manifest) RunResult {
	r := RunResult{Key: p.Key, Scenario: p.Scenario, File: p.Path, Sample: p.Sample, Tags: p.Tags, Report: p.Dir,
		Verdict: m.Verdict, Outcome: m.Outcome, DurationMS: m.DurationMS, Tokens: m.Tokens, IdentitySHA256: m.IdentitySHA256}
	if m.Outcome == engine.OutcomeInterrupted {
		r.Verdict = VerdictInterrupted
	}
	if rep, err := readReport(filepath.Join(out, p.Dir)); err == nil {
		r.Reasons, r.Concerns = rep.Reasons, rep.Concerns
	}
	return r
}

func readReport(dir string) (report.Report, error) {
	var rep report.Report
	data, err := readHead(filepath.Join(dir, "report.json"), 64<<20)
	if err != nil {
		return rep, err
	}
	return rep, jsonUnmarshal(data, &rep)
}
