package engine

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/report"
	"github.com/kasmrt/kasmrt/internal/testkit"
)

// scriptRunSpec is one end-to-end scripted run: a scenario written into a
// fresh directory, loaded with a lookup that sees only env, and run in an
// embedded Xvfb.
type scriptRunSpec struct {
	// scenario is the YAML; "$DIR" in it is replaced by the scenario's
	// directory (which is also where the app and the shell tools run).
	scenario string
	// files are extra files written next to the scenario (name -> content).
	files map[string]string
	// operator, when set, is the operator file's YAML.
	operator string
	// env is everything the loader's lookup sees.
	env map[string]string
	// ctx is the context given to Run (nil: background).
	ctx context.Context
	// onEvent sees every event as it is published (the Sink), after the
	// harness has recorded it.
	onEvent func(scriptRunInfo, events.Event)
	// reportDir, when set, is the report directory given to the run, as
	// --report gives it (it may be relative); else "report" in the
	// scenario's directory.
	reportDir string
	// updateBaselines runs with --update-baselines.
	updateBaselines bool
}

// scriptRunInfo is what a Sink learns while the run goes on.
type scriptRunInfo struct {
	dir       string // the scenario's directory
	display   string // the session's display, once started
	xvfbPID   int    // the embedded Xvfb, from its lock file
	appPID    int
	reportDir string
}

// scriptOutcome is everything a finished run left behind.
type scriptOutcome struct {
	res    Result
	err    error
	info   scriptRunInfo
	sunk   []events.Event // what the Sink received
	rep    report.Report  // report.json, typed
	raw    map[string]any // report.json, as JSON
	events []events.Event // events.jsonl
	appLog string
}

// scriptRun writes, loads and runs a scenario, checks the report is
// complete and that nothing the run started is still running, and returns
// what it left.
func scriptRun(t *testing.T, spec scriptRunSpec) scriptOutcome {
	t.Helper()
	scriptNeed(t, "Xvfb")
	dir := t.TempDir()
	for name, content := range spec.files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	files := loadRunFiles(t, dir, strings.ReplaceAll(spec.scenario, "$DIR", dir), spec.operator, spec.env)

	out := scriptOutcome{info: scriptRunInfo{dir: dir, reportDir: cmp.Or(spec.reportDir, filepath.Join(dir, "report"))}}
	var mu sync.Mutex
	sink := func(e events.Event) {
		mu.Lock()
		switch e.Kind {
		case events.KindDisplayStarted:
			d, _ := e.Data.(events.DisplayStarted)
			out.info.display = d.Display
			out.info.xvfbPID = scriptXvfbPID(out.info.display)
		case events.KindAppLaunched:
			d, _ := e.Data.(events.AppLaunched)
			out.info.appPID = d.PID
		}
		out.sunk = append(out.sunk, e)
		info := out.info
		mu.Unlock()
		if spec.onEvent != nil {
			spec.onEvent(info, e)
		}
	}
	runner, err := New(files, Options{ReportDir: out.info.reportDir, Display: "-", Sinks: []func(events.Event){sink},
		Getenv: func(name string) string { return spec.env[name] }, UpdateBaselines: spec.updateBaselines})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ctx := spec.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	out.res, out.err = runner.Run(ctx)
	if out.err != nil {
		t.Errorf("Run: %v", out.err)
	}
	mu.Lock()
	defer mu.Unlock()
	if out.info.xvfbPID == 0 && out.info.display != "" {
		t.Errorf("could not find the embedded Xvfb of display %s", out.info.display)
	}
	scriptNoLeftovers(t, out.info)
	out.rep, out.raw = scriptReadReport(t, out.info.reportDir)
	out.events = scriptReadEvents(t, out.info.reportDir)
	log, err := os.ReadFile(filepath.Join(out.info.reportDir, "app.log"))
	if err != nil {
		t.Errorf("app.log: %v", err)
	}
	out.appLog = string(log)
	scriptCheckConsistent(t, out)
	return out
}

// scriptNeed marks an end-to-end test of the integration layer: it skips
// under go test -short, and when a binary it starts is not installed.
func scriptNeed(t testing.TB, bins ...string) {
	t.Helper()
	testkit.Need(t, bins...)
}

// scriptXvfbPID finds the X server listening on display: the process
// holding the display's Unix socket (-displayfd servers write no lock
// file).
func scriptXvfbPID(display string) int {
	want := "/tmp/.X11-unix/X" + strings.TrimPrefix(display, ":")
	b, err := os.ReadFile("/proc/net/unix")
	if err != nil {
		return 0
	}
	inodes := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 8 && strings.TrimPrefix(f[7], "@") == want {
			inodes["socket:["+f[6]+"]"] = true
		}
	}
	for _, p := range scriptProcs() {
		if !strings.HasPrefix(p.cmdline, "Xvfb ") {
			continue
		}
		fds, _ := os.ReadDir("/proc/" + strconv.Itoa(p.pid) + "/fd")
		for _, fd := range fds {
			link, _ := os.Readlink("/proc/" + strconv.Itoa(p.pid) + "/fd/" + fd.Name())
			if inodes[link] {
				return p.pid
			}
		}
	}
	return 0
}

// scriptProc is a running process as /proc shows it.
type scriptProc struct {
	pid, pgrp int
	state     byte
	cmdline   string
	cwd       string
}

func scriptProcs() []scriptProc {
	entries, _ := os.ReadDir("/proc")
	var out []scriptProc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		base := "/proc/" + e.Name()
		stat, err := os.ReadFile(base + "/stat")
		if err != nil {
			continue
		}
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 3 {
			continue
		}
		p := scriptProc{pid: pid, state: f[0][0]}
		p.pgrp, _ = strconv.Atoi(f[2])
		cmd, _ := os.ReadFile(base + "/cmdline")
		p.cmdline = strings.ReplaceAll(string(cmd), "\x00", " ")
		p.cwd, _ = os.Readlink(base + "/cwd")
		out = append(out, p)
	}
	return out
}

// scriptNoLeftovers fails the test if a process the run started still
// runs: the Xvfb, anything in the app's process group, or anything whose
// working directory or command line is in the scenario's directory (the
// app and the declared tools run there).
func scriptNoLeftovers(t *testing.T, info scriptRunInfo) {
	t.Helper()
	for _, p := range scriptProcs() {
		if p.state == 'Z' || p.state == 'X' {
			continue
		}
		var why string
		switch {
		case info.xvfbPID != 0 && p.pid == info.xvfbPID:
			why = "the run's Xvfb"
		case info.appPID != 0 && p.pgrp == info.appPID:
			why = "in the app's process group"
		case p.cwd == info.dir || strings.HasPrefix(p.cwd, info.dir+"/"):
			why = "working in the scenario's directory"
		case strings.Contains(p.cmdline, info.dir):
			why = "naming the scenario's directory"
		default:
			continue
		}
		t.Errorf("process %d (%s) outlived the run: %s", p.pid, p.cmdline, why)
	}
}

// scriptReportKeys are the report.json fields the README lists, with the
// fields each object must have.
var scriptReportKeys = map[string][]string{
	"schema": nil, "scenario": {"name", "file", "sha256"}, "verdict": nil, "outcome": nil,
	"model_verdict": nil, "concerns": nil, "checks": {"process_alive", "window_present", "fatal_pattern"},
	"loop": {"iterations", "malformed", "tool_errors", "ended"}, "tools": nil, "steps": nil,
	"grounding": nil, "usage": {"total"}, "timing": {"started", "ended", "deadline_s"},
}

var scriptStepKeys = []string{"n", "tool", "args", "status", "message", "screen", "started", "duration_ms"}

func scriptReadReport(t *testing.T, dir string) (report.Report, map[string]any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatalf("report.json: %v", err)
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatalf("report.json is not JSON: %v", err)
	}
	for key, sub := range scriptReportKeys {
		v, ok := raw[key]
		if !ok {
			t.Errorf("report.json lacks %q", key)
			continue
		}
		if len(sub) > 0 {
			m, _ := v.(map[string]any)
			for _, k := range sub {
				if _, ok := m[k]; !ok {
					t.Errorf("report.json %s lacks %q", key, k)
				}
			}
		}
	}
	for _, key := range []string{"concerns", "tools", "steps", "grounding"} {
		if _, ok := raw[key].([]any); !ok {
			t.Errorf("report.json %s is %v, want a list (empty when it does not apply)", key, raw[key])
		}
	}
	if steps, ok := raw["steps"].([]any); ok {
		for i, s := range steps {
			m, _ := s.(map[string]any)
			for _, k := range scriptStepKeys {
				if _, ok := m[k]; !ok {
					t.Errorf("report.json steps[%d] lacks %q", i, k)
				}
			}
		}
	}
	var rep report.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("report.json: %v", err)
	}
	if rep.Schema != report.Schema {
		t.Errorf("schema %q", rep.Schema)
	}
	if rep.Timing.Ended == nil || rep.Timing.Started.IsZero() {
		t.Errorf("timing %+v: want started and ended", rep.Timing)
	}
	return rep, raw
}

func scriptReadEvents(t *testing.T, dir string) []events.Event {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		t.Fatalf("events.jsonl: %v", err)
	}
	defer f.Close()
	var out []events.Event
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		var e events.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("events.jsonl line %d: %v", len(out)+1, err)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("events.jsonl: %v", err)
	}
	return out
}

// scriptCheckConsistent checks the invariants every run keeps: ordered
// events from run.started to run.ended, a verdict matching the result and
// the report, and a PNG on disk for every screen.
func scriptCheckConsistent(t *testing.T, o scriptOutcome) {
	t.Helper()
	evs := o.events
	if len(evs) < 3 {
		t.Fatalf("only %d events", len(evs))
	}
	var last time.Time
	for i, e := range evs {
		if e.Seq != int64(i+1) {
			t.Errorf("event %d has seq %d", i+1, e.Seq)
		}
		if e.T.Before(last) {
			t.Errorf("event %d goes back in time", e.Seq)
		}
		last = e.T
	}
	if evs[0].Kind != events.KindRunStarted || evs[len(evs)-1].Kind != events.KindRunEnded {
		t.Errorf("events run from %s to %s, want run.started to run.ended", evs[0].Kind, evs[len(evs)-1].Kind)
	}
	if len(o.sunk) != len(evs) {
		t.Errorf("the sink saw %d events, events.jsonl has %d", len(o.sunk), len(evs))
	}
	var verdicts int
	screens := 0
	for _, e := range evs {
		switch e.Kind {
		case events.KindVerdict:
			verdicts++
			if e.Verdict.Verdict != o.res.Verdict || e.Verdict.Outcome != o.res.Outcome {
				t.Errorf("verdict event %+v, result %+v", e.Verdict, o.res)
			}
		case events.KindScreen, events.KindFinal:
			// The final capture is a screen file of its own event.
			if e.Screen == "" {
				continue
			}
			screens++
			if st, err := os.Stat(filepath.Join(o.info.reportDir, e.Screen)); err != nil || st.Size() == 0 {
				t.Errorf("screen %s: %v", e.Screen, err)
			}
		}
	}
	if verdicts != 1 {
		t.Errorf("%d verdict events, want 1", verdicts)
	}
	if o.rep.Verdict != o.res.Verdict || o.rep.Outcome != o.res.Outcome {
		t.Errorf("report.json verdict %s/%s, result %s/%s", o.rep.Verdict, o.rep.Outcome, o.res.Verdict, o.res.Outcome)
	}
	if o.rep.Screens != screens {
		t.Errorf("report.json counts %d screens, events have %d", o.rep.Screens, screens)
	}
	pngs, _ := filepath.Glob(filepath.Join(o.info.reportDir, "screens", "*.png"))
	if len(pngs) != screens {
		t.Errorf("%d PNGs in screens/, %d screen events", len(pngs), screens)
	}
	if len(o.res.Reasons) == 0 {
		t.Errorf("result has no reasons")
	}
	if t.Failed() || os.Getenv("KASM_SCRIPT_TEST_VERBOSE") != "" {
		t.Logf("result %+v", o.res)
		for _, e := range evs {
			b, _ := json.Marshal(e)
			t.Logf("%s", b)
		}
		t.Logf("app.log:\n%s", o.appLog)
	}
}

// want checks the verdict and outcome, and that a reason mentions each of
// the given substrings.
func (o scriptOutcome) want(t *testing.T, verdict events.Verdict, outcome events.Outcome, reasonHas ...string) {
	t.Helper()
	if o.res.Verdict != verdict || o.res.Outcome != outcome {
		t.Errorf("verdict %s (%s), want %s (%s); reasons %q", o.res.Verdict, o.res.Outcome, verdict, outcome, o.res.Reasons)
	}
	all := strings.Join(o.res.Reasons, "\n")
	for _, s := range reasonHas {
		if !strings.Contains(all, s) {
			t.Errorf("reasons %q do not mention %q", o.res.Reasons, s)
		}
	}
}

// step returns report.json's step n (1-based), failing if it is missing.
func (o scriptOutcome) step(t *testing.T, n int) report.Step {
	t.Helper()
	// n is 0 when a caller asks for the last step of a run that ran none.
	if n < 1 || n > len(o.rep.Steps) {
		t.Fatalf("report.json has %d steps, want step %d", len(o.rep.Steps), n)
	}
	return o.rep.Steps[n-1]
}

// check returns the final deterministic check event named name.
func (o scriptOutcome) check(name string) *events.Check {
	var c *events.Check
	for _, e := range o.events {
		if e.Kind == events.KindCheck && e.Check.Name == name {
			c = e.Check
		}
	}
	return c
}

// window returns the application window the run found.
func (o scriptOutcome) window(t *testing.T) events.Rect {
	t.Helper()
	for _, e := range o.events {
		if e.Kind == events.KindAppWindow && e.Box != nil {
			return *e.Box
		}
	}
	t.Fatal("no app.window event")
	return events.Rect{}
}

// scriptHealthyAtEnd fails unless the final checks saw the app running
// with its window: a run the runtime cut short must not blame the app for
// the runtime's own stop.
func scriptHealthyAtEnd(t *testing.T, o scriptOutcome) {
	t.Helper()
	c := o.rep.Checks
	if c.ProcessAlive == nil || !*c.ProcessAlive || c.WindowPresent == nil || !*c.WindowPresent {
		t.Errorf("final checks %+v: the app was healthy when the run was cut short", c)
	}
	for _, r := range o.res.Reasons {
		if strings.Contains(r, "failed") {
			t.Errorf("reason %q blames the app", r)
		}
	}
}

// scriptEventually polls cond until it holds or a generous limit passes.
func scriptEventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Errorf("%s never happened", what)
}

// scriptGone fails the test if the process whose PID is in pidFile still
// runs.
func scriptGone(t *testing.T, pidFile string) {
	t.Helper()
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Errorf("the tool never wrote its pid: %v", err)
		return
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Errorf("pid file %q: %v", b, err)
		return
	}
	for _, p := range scriptProcs() {
		if p.pid == pid && p.state != 'Z' {
			t.Errorf("process %d (%s) outlived its tool", pid, p.cmdline)
		}
	}
}

// scriptKillXvfbAtStep is an onEvent that kills the run's X server 300 ms
// into step n, and sets killed once it has.
func scriptKillXvfbAtStep(n int, killed *atomic.Bool) func(scriptRunInfo, events.Event) {
	return func(info scriptRunInfo, e events.Event) {
		if e.Kind == events.KindStepStarted && e.Step == n && info.xvfbPID != 0 {
			time.AfterFunc(300*time.Millisecond, func() {
				if syscall.Kill(info.xvfbPID, syscall.SIGKILL) == nil {
					killed.Store(true)
				}
			})
		}
	}
}
