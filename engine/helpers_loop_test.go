package engine

import (
	"context"
	"encoding/json"
	"image"
	"image/color"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/engine/capacity"
	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/model/modeltest"
	"github.com/kasmrt/kasmrt/engine/report"
)

// loopXterm is a goal scenario around a real xterm running sh: typing a
// provided value and pressing Return really runs it, so "exit" really ends
// the application.
const loopXterm = `name: loop xterm
app:
  command: [xterm, -geometry, 60x12+20+20, -e, sh]
goal: Print the greeting in the terminal.
plan:
  - Observe the screen.
  - Type the greeting with type_text.
  - Press Return.
provides:
  greeting: echo hello
  quit: exit
`

// loopOperator is the operator file the loop tests start from: a small
// screen, quick settling and no retries unless a test asks for them.
// ENDPOINT is replaced with the test server's URL.
const loopOperator = `runner:
  settle_interval_ms: 30
  settle_cap_ms: 400
session:
  width: 640
  height: 400
model:
  endpoint: ENDPOINT
  retry: 0
  timeout: 5
`

// loopCase is one goal run against the model test server.
type loopCase struct {
	scenario string // scenario YAML (loopXterm if empty)
	operator string // operator YAML; ENDPOINT is replaced (loopOperator if empty)
	env      map[string]string
	script   []modeltest.Exchange
	// sink, when set, sees every event; it gets the runner so it can steer
	// or answer. It must not block.
	sink func(r *Runner, e events.Event)
	// before, when set, acts on the runner before it runs.
	before func(r *Runner)
	// machine, when set, replaces the real session and app: the run needs
	// no Xvfb and no xterm.
	machine *fakeMachine
	// gates, when set, are the capacity groups the run shares (a suite's).
	gates *capacity.Gates
	// ctx, when set, is the context Run is given (Ctrl-C is its cancel);
	// the run's own 60 s bound still applies.
	ctx context.Context
}

// loopUnverified is the verdict of a goal run that passes with nothing
// the scenario declares to verify its goal (no success:): the pass rests
// only on the app staying up, which is a concern.
const loopUnverified = events.VerdictPassConcerns

// loopResult is what a goal run produced.
type loopResult struct {
	res    Result
	rep    report.Report
	reqs   []modeltest.Request
	events []events.Event
	dir    string
	srv    *modeltest.Server
}

// loopNeed skips a test when Xvfb or a binary it runs is not installed.
func loopNeed(t testing.TB, bins ...string) {
	t.Helper()
	scriptNeed(t, append([]string{"Xvfb"}, bins...)...)
}

// loopRun writes the files, runs the goal scenario in an embedded Xvfb and
// returns the report, the requests the model server received and the
// events.
func loopRun(t testing.TB, c loopCase) loopResult {
	t.Helper()
	if c.machine == nil {
		loopNeed(t, "xterm")
	}
	srv := modeltest.New(t, c.script...)
	dir := t.TempDir()
	sc := c.scenario
	if sc == "" {
		sc = loopXterm
	}
	op := c.operator
	if op == "" {
		op = loopOperator
	}
	op = strings.ReplaceAll(op, "ENDPOINT", srv.URL())
	files := loadRunFiles(t, dir, sc, op, c.env)
	var (
		mu     sync.Mutex
		evs    []events.Event
		runner *Runner
		ready  = make(chan struct{})
	)
	opts := Options{
		ReportDir:  filepath.Join(dir, "report"),
		Display:    "-",
		ModelSleep: loopSleep,
		Getenv:     func(name string) string { return c.env[name] },
		Gates:      c.gates,
		Sinks: []func(events.Event){func(e events.Event) {
			mu.Lock()
			evs = append(evs, e)
			mu.Unlock()
			if c.sink != nil {
				<-ready
				c.sink(runner, e)
			}
		}},
	}
	if c.machine != nil {
		// Through Options, as the suite hands its machine to a run.
		opts.Machine = c.machine
	}
	runner, err := New(files, opts)
	if err != nil {
		t.Fatal(err)
	}
	if c.machine != nil {
		// The double's X server goes before its app when it goes at all,
		// so a short grace is enough to see it gone; none would race the
		// two.
		runner.serverGrace = 100 * time.Millisecond
	}
	close(ready)
	if c.before != nil {
		c.before(runner)
	}
	parent := c.ctx
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithTimeout(parent, 60*time.Second)
	defer cancel()
	res, err := runner.Run(ctx)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	raw, err := os.ReadFile(filepath.Join(opts.ReportDir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep report.Report
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatalf("report.json: %v", err)
	}
	loopNoCoordinates(t, srv.Requests())
	mu.Lock()
	defer mu.Unlock()
	return loopResult{res: res, rep: rep, reqs: srv.Requests(), events: append([]events.Event(nil), evs...), dir: opts.ReportDir, srv: srv}
}

// loopPixelPair matches a pixel point as the runtime and drivers write
// one: "(x, y)" or "at x,y".
var loopPixelPair = regexp.MustCompile(`\(\s*\d+\s*,\s*\d+\s*\)|\bat \d+,\d+`)

// loopNoCoordinates fails the test if a tool result the runtime sent the
// model carries pixel coordinates: the model picks names, never points.
func loopNoCoordinates(t testing.TB, reqs []modeltest.Request) {
	t.Helper()
	for _, req := range reqs {
		for _, m := range req.Messages() {
			if m["role"] != "tool" && m["type"] != "function_call_output" {
				continue
			}
			text := loopContentText(m)
			if out, ok := m["output"].(string); ok {
				text += out
			}
			if p := loopPixelPair.FindString(text); p != "" {
				t.Errorf("request %d: a tool result shows the model the pixel coordinates %q: %q", req.N, p, text)
			}
		}
	}
}

// loopSleep stands in for the client's backoff: it records nothing and
// waits a millisecond, so retry tests stay fast but still yield.
func loopSleep(ctx context.Context, _ time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Millisecond):
		return nil
	}
}

// loopStep is a step's tool, status and message, for assertions.
type loopStep struct {
	tool    string
	status  events.Status
	message string
}

func loopSteps(r report.Report) []loopStep {
	out := make([]loopStep, len(r.Steps))
	for i, s := range r.Steps {
		out[i] = loopStep{s.Tool, s.Status, s.Message}
	}
	return out
}

// loopWantSteps checks steps' tools and statuses, and that each message
// contains the wanted text.
func loopWantSteps(t testing.TB, r report.Report, want ...loopStep) {
	t.Helper()
	got := loopSteps(r)
	if len(got) != len(want) {
		t.Fatalf("%d steps, want %d:\n%s", len(got), len(want), loopFormatSteps(got))
	}
	for i, w := range want {
		g := got[i]
		if g.tool != w.tool || g.status != w.status || !strings.Contains(g.message, w.message) {
			t.Errorf("step %d = %s %s %q, want %s %s containing %q", i+1, g.tool, g.status, g.message, w.tool, w.status, w.message)
		}
	}
}

func loopFormatSteps(ss []loopStep) string {
	var b strings.Builder
	for i, s := range ss {
		b.WriteString(strings.Join([]string{"  ", strconv.Itoa(i + 1), s.tool, string(s.status), s.message}, " "))
		b.WriteString("\n")
	}
	return b.String()
}

// loopWant checks the verdict, the outcome and the loop summary.
func loopWant(t testing.TB, r loopResult, verdict events.Verdict, outcome events.Outcome, iterations, malformed int) {
	t.Helper()
	if r.rep.Verdict != verdict || r.rep.Outcome != outcome {
		t.Errorf("verdict %s/%s, want %s/%s; reasons %q; concerns %q; loop %+v", r.rep.Verdict, r.rep.Outcome, verdict, outcome, r.rep.Reasons, r.rep.Concerns, r.rep.Loop)
	}
	if r.res.Verdict != r.rep.Verdict || r.res.Outcome != r.rep.Outcome {
		t.Errorf("result %s/%s disagrees with report.json %s/%s", r.res.Verdict, r.res.Outcome, r.rep.Verdict, r.rep.Outcome)
	}
	if r.rep.Loop.Iterations != iterations || r.rep.Loop.Malformed != malformed {
		t.Errorf("loop %+v, want iterations %d malformed %d", r.rep.Loop, iterations, malformed)
	}
	if len(r.reqs) < iterations {
		t.Errorf("the server got %d requests for %d iterations", len(r.reqs), iterations)
	}
}

// loopHasConcern reports whether a concern contains s.
func loopHasConcern(r report.Report, s string) bool {
	for _, c := range r.Concerns {
		if strings.Contains(c, s) {
			return true
		}
	}
	return false
}

// loopLastText returns the text of the last message of a request.
func loopLastText(req modeltest.Request) string {
	ms := req.Messages()
	var parts []string
	// The tail after the last assistant message is what the runtime added
	// since the model's previous call.
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i]["role"] == "assistant" {
			break
		}
		parts = append([]string{loopContentText(ms[i])}, parts...)
	}
	return strings.Join(parts, "\n")
}

func loopContentText(m map[string]any) string {
	switch c := m["content"].(type) {
	case string:
		return c
	case []any:
		var out []string
		for _, p := range c {
			if pm, ok := p.(map[string]any); ok {
				if s, ok := pm["text"].(string); ok {
					out = append(out, s)
				}
			}
		}
		return strings.Join(out, "\n")
	}
	return ""
}

// loopIsVision tells the grounding and judge requests apart from the loop's
// turns by their system prompt.
func loopIsVision(req modeltest.Request) (locate, judge bool) {
	text := req.Text()
	return strings.Contains(text, "You locate user-interface elements"), strings.Contains(text, "You judge screenshots")
}

// loopWhiteBox finds the bounding box of white pixels in img: xterm's
// window on Xvfb's black root.
func loopWhiteBox(img image.Image) image.Rectangle {
	b := img.Bounds()
	box := image.Rectangle{Min: b.Max, Max: b.Min}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := color.RGBAModel.Convert(img.At(x, y)).RGBA()
			if r > 0xf000 && g > 0xf000 && bl > 0xf000 {
				box = box.Union(image.Rect(x, y, x+1, y+1))
			}
		}
	}
	return box
}

// loopLocateCentre answers a locate request with the centre of the white
// window in the sent image, in the convention of relative (0–1000) or
// absolute pixels of the sent image.
func loopLocateCentre(t testing.TB, relative bool) func(modeltest.Request) modeltest.Exchange {
	return func(req modeltest.Request) modeltest.Exchange {
		imgs, err := req.Images()
		if err != nil || len(imgs) != 1 {
			t.Errorf("locate request: %d images, %v", len(imgs), err)
			return modeltest.Text(`{"found": false}`)
		}
		b := imgs[0].Bounds()
		box := loopWhiteBox(imgs[0])
		cx, cy := float64(box.Min.X+box.Max.X)/2, float64(box.Min.Y+box.Max.Y)/2
		if relative {
			cx, cy = cx*1000/float64(b.Dx()), cy*1000/float64(b.Dy())
		}
		out, _ := json.Marshal(map[string]any{"point": []float64{cx, cy}})
		return modeltest.Text(string(out))
	}
}

// loopWindowBox returns the application window's box from the events.
func loopWindowBox(evs []events.Event) events.Rect {
	for _, e := range evs {
		if e.Kind == events.KindAppWindow && e.Box != nil {
			return *e.Box
		}
	}
	return events.Rect{}
}
