package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/engine/model/modeltest"
	"github.com/kasmrt/kasmrt/engine/report"
)

// turn is one scripted model turn: a tool call.
type turn struct{ name, args string }

// signupTurns are the gallery's browser sign-up model turns
// (browser-signup.model.jsonl), scripted for the model test server so the
// tests can count what the model is asked.
var signupTurns = []turn{
	{"observe_screen", `{}`},
	{"cdp_fill", `{"target":"name_field","ref":"name"}`},
	{"cdp_fill", `{"target":"email_field","ref":"email"}`},
	{"cdp_click", `{"target":"weekly"}`},
	{"observe_screen", `{}`},
	{"cdp_click", `{"target":"sign_up"}`},
	{"cdp_wait", `{"name":"thanks_page"}`},
	{"cdp_query", `{"target":"thanks"}`},
	{"cdp_query", `{"target":"detail"}`},
	{"record_verdict", `{"verdict":"goal-met","reason":"The thank-you page greets Ada Lovelace and says it will write to ada@example.org weekly."}`},
}

// calculatorTurns are the gallery's GTK 4 calculator turns
// (gtk4-calculator.model.jsonl).
var calculatorTurns = []turn{
	{"observe_screen", `{}`},
	{"click_element", `{"name":"1"}`},
	{"observe_screen", `{}`},
	{"click_element", `{"name":"2"}`},
	{"click_element", `{"name":"×"}`},
	{"click_element", `{"name":"3"}`},
	{"click_element", `{"name":"4"}`},
	{"observe_screen", `{}`},
	{"click_element", `{"name":"="}`},
	{"observe_screen", `{}`},
	{"wait", `{"seconds":3}`},
	{"observe_screen", `{}`},
	{"press_key", `{"key":"ctrl+c"}`},
	{"result_is", `{"value":"408"}`},
	{"record_verdict", `{"verdict":"goal-met","reason":"The calculator shows 12×34 = 408 and result_is confirmed the copied result is 408."}`},
}

// signupModel is a model test server that answers the sign-up's turns
// from the from'th on, each after delay (a model's time to answer).
func signupModel(t testing.TB, from int, delay time.Duration) *modeltest.Server {
	return scriptedModel(t, signupTurns[from:], delay)
}

// scriptedModel is a model test server that answers turns, each after
// delay.
func scriptedModel(t testing.TB, turns []turn, delay time.Duration) *modeltest.Server {
	var script []modeltest.Exchange
	for _, turn := range turns {
		ex := modeltest.Call(turn.name, turn.args)
		if delay > 0 {
			ex = modeltest.Delay(delay, ex)
		}
		script = append(script, ex)
	}
	return modeltest.New(t, script...)
}

// signupSite serves the gallery's sign-up site; once renamed is set, the
// form's submit button reads "Subscribe" instead of "Sign up" (a renamed
// label, the deliberate UI change).
type signupSite struct {
	srv     *httptest.Server
	renamed atomic.Bool
}

func newSignupSite(t testing.TB) *signupSite {
	s := &signupSite{}
	files := http.FileServer(http.Dir(filepath.Join(galleryDir, "site")))
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/signup.html" || !s.renamed.Load() {
			files.ServeHTTP(w, r)
			return
		}
		page, err := os.ReadFile(filepath.Join(galleryDir, "site", "signup.html"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(strings.Replace(string(page), ">Sign up</button>", ">Subscribe</button>", 1)))
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// signupScenario copies the gallery's sign-up scenario into a folder of
// its own, so its action cache (beside it) is the test's.
func signupScenario(t testing.TB) string { return galleryScenario(t, "browser-signup.yaml") }

// galleryScenario copies a gallery scenario into a folder of its own.
func galleryScenario(t testing.TB, name string) string {
	data, err := os.ReadFile(filepath.Join(galleryDir, name))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// runSignup runs the sign-up scenario with kasmrt bin and the cache mode
// against srv, and returns its report, its output and how long it took.
func runSignup(tb testing.TB, bin, scenario string, site *signupSite, srv *modeltest.Server, mode string) (report.Report, string, time.Duration) {
	tb.Helper()
	return runGallery(tb, bin, scenario, srv, mode, "SIGNUP_URL="+site.srv.URL+"/signup.html")
}

// runGallery runs a gallery scenario with kasmrt bin, the gallery's
// operator file and the cache mode against srv, with env added; the run
// must pass.
func runGallery(tb testing.TB, bin, scenario string, srv *modeltest.Server, mode string, env ...string) (report.Report, string, time.Duration) {
	tb.Helper()
	out := filepath.Join(tb.TempDir(), "report")
	cmd := exec.Command(bin, "run", scenario, "-o", filepath.Join(galleryDir, "operator-gallery.yaml"),
		"--cache", mode, "--headless", "--display", "-", "--report", out)
	cmd.Env = append(append(os.Environ(), "KASM_RUNTIME_VISION_ENDPOINT="+srv.URL(), "DBUS_SESSION_BUS_ADDRESS=", "KASM_DEMO_DIR="+tb.TempDir()), env...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	raw, rerr := os.ReadFile(filepath.Join(out, "report.json"))
	var rep report.Report
	if rerr == nil {
		rerr = json.Unmarshal(raw, &rep)
	}
	if err != nil || rerr != nil || rep.Verdict != "pass" {
		tb.Fatalf("kasmrt run: %v; report: %v; verdict %s (%s)\nreport: %s\nstdout:\n%s\nstderr:\n%s", err, rerr, rep.Verdict, rep.Outcome, raw, stdout.String(), stderr.String())
	}
	return rep, stdout.String(), took
}

// TestActionCacheReplaysGallerySignup: the gallery's browser sign-up,
// run once with the model, stores its trajectory beside the scenario; the
// second run replays it without a single model request and passes on the
// runtime's success criteria; after the submit button is renamed, the
// replay falls back to the model at the click on it and the run passes.
func TestActionCacheReplaysGallerySignup(t *testing.T) {
	t.Parallel()
	need(t, "Xvfb", "dbus-daemon", "chromium")
	site := newSignupSite(t)
	scenario := signupScenario(t)

	first := signupModel(t, 0, 0)
	rep, _, _ := runSignup(t, kasmrtBinary(t), scenario, site, first, "read-write")
	if n := len(first.Requests()); n != len(signupTurns) {
		t.Errorf("the first run made %d model requests, want %d", n, len(signupTurns))
	}
	if c := rep.Cache; c == nil || !c.Stored || c.Hits != 0 || c.Misses != 1 {
		t.Fatalf("the first run's cache account: %+v, want a miss and the trajectory stored", rep.Cache)
	}
	stored, err := os.ReadFile(filepath.Join(filepath.Dir(scenario), "browser-signup.kasmrt-cache", mustCacheFile(t, scenario)))
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"Ada Lovelace", "ada@example.org"} {
		// The reason the model gave names the provided values, which are
		// not secrets; the provided values themselves are refs.
		if strings.Contains(string(stored), `"`+secret+`"`) {
			t.Errorf("the cache holds the value %q:\n%s", secret, stored)
		}
	}

	warm := signupModel(t, len(signupTurns), 0)
	rep, stdout, _ := runSignup(t, kasmrtBinary(t), scenario, site, warm, "read-write")
	if n := len(warm.Requests()); n != 0 {
		t.Errorf("the warm run made %d model requests, want 0", n)
	}
	want := len(signupTurns) - 1 // every call but record_verdict
	if c := rep.Cache; c == nil || c.Hits != want || c.Misses != 0 || c.FellBackAt != 0 || c.Saved != len(signupTurns) || c.Stored {
		t.Errorf("the warm run's cache account: %+v, want %d hits, %d calls saved, nothing stored", rep.Cache, want, len(signupTurns))
	}
	if !rep.Checks.Declared["success.cdp.thanks"] || !rep.Checks.Declared["success.cdp.detail"] {
		t.Errorf("the success criteria did not run and hold on the replay: %v", rep.Checks.Declared)
	}
	for _, s := range rep.Steps {
		if s.Tool == "record_verdict" {
			t.Errorf("the replay ran record_verdict: %+v", s)
		}
	}
	wantIn(t, "the warm run's output", stdout, []string{"action cache (read-write): 9 hits, 0 misses (of 9 cached calls), 10 model calls saved"})

	// The renamed button: the replay fits until the click on it (step 6),
	// and the model answers from there.
	site.renamed.Store(true)
	changed := signupModel(t, 5, 0)
	rep, stdout, _ = runSignup(t, kasmrtBinary(t), scenario, site, changed, "read-write")
	if n := len(changed.Requests()); n != len(signupTurns)-5 || changed.Exhausted() != 0 {
		t.Errorf("after the change the model was asked %d times (%d past its script), want %d", n, changed.Exhausted(), len(signupTurns)-5)
	}
	if c := rep.Cache; c == nil || c.FellBackAt != 6 || c.Hits != 5 || c.Misses != 1 || !c.Stored {
		t.Errorf("after the change the cache account is %+v, want a fall back at step 6 after 5 hits, and the new trajectory stored", rep.Cache)
	}
	wantIn(t, "the changed run's output", stdout, []string{"fell back to the model at step 6", `the cdp target sign_up reads "Subscribe", the cache's read "Sign up"`})
	if reqs := changed.Requests(); len(reqs) > 0 && !strings.Contains(reqs[0].Text(), "replayed from a cached run") {
		t.Errorf("the model's first request after the fall back does not say what happened:\n%s", reqs[0].Text())
	}
}

// TestActionCacheReplaysGalleryCalculator: the gallery's GTK 4
// calculator, a desktop app driven by click_element, replays from a warm
// cache without a model request, each named button checked present
// before its click.
func TestActionCacheReplaysGalleryCalculator(t *testing.T) {
	t.Parallel()
	need(t, "Xvfb", "dbus-daemon", "gnome-calculator", "xclip")
	scenario := galleryScenario(t, "gtk4-calculator.yaml")
	first := scriptedModel(t, calculatorTurns, 0)
	if rep, _, _ := runGallery(t, kasmrtBinary(t), scenario, first, "read-write"); rep.Cache == nil || !rep.Cache.Stored {
		t.Fatalf("the first run's cache account: %+v, want the trajectory stored", rep.Cache)
	}
	warm := scriptedModel(t, nil, 0)
	rep, _, _ := runGallery(t, kasmrtBinary(t), scenario, warm, "read-only")
	if n := len(warm.Requests()); n != 0 {
		t.Errorf("the warm run made %d model requests, want 0", n)
	}
	want := len(calculatorTurns) - 1
	if c := rep.Cache; c == nil || c.Hits != want || c.FellBackAt != 0 || c.Saved != len(calculatorTurns) {
		t.Errorf("the warm run's cache account: %+v, want %d hits and %d calls saved", rep.Cache, want, len(calculatorTurns))
	}
	if !rep.Checks.Declared["success.tools.clipboard_holds_408"] {
		t.Errorf("the success criteria did not hold on the replay: %v", rep.Checks.Declared)
	}
}

// mustCacheFile is the name of the one trajectory file in the scenario's
// cache folder.
func mustCacheFile(t testing.TB, scenario string) string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(filepath.Dir(scenario), "browser-signup.kasmrt-cache", "*.json"))
	if err != nil || len(names) != 1 {
		t.Fatalf("the cache folder holds %v (%v), want one trajectory", names, err)
	}
	return filepath.Base(names[0])
}

// BenchmarkActionCacheGallery times two gallery goal runs twice per
// iteration: the first run with an empty action cache (the model plans
// every call) and the second with the cache warm (it replays them, and
// the model is not asked). The model test server answers each turn after
// a delay, a model's time to answer: 0 (instant, the runtime's own cost)
// and 2 s. KASM_BENCH_KASMRT names another binary to time.
func BenchmarkActionCacheGallery(b *testing.B) {
	// Built once for every sub-benchmark: a sub-benchmark's temporary
	// folder goes when it ends.
	bin := measuredBinary(b)
	for _, entry := range []struct {
		name     string
		scenario string
		turns    []turn
		needs    []string
	}{
		{"browser-signup", "browser-signup.yaml", signupTurns, []string{"chromium"}},
		{"gtk4-calculator", "gtk4-calculator.yaml", calculatorTurns, []string{"gnome-calculator", "xclip"}},
	} {
		for _, delay := range []time.Duration{0, 2 * time.Second} {
			b.Run(fmt.Sprintf("%s/model-%s", entry.name, delay), func(b *testing.B) {
				need(b, append([]string{"Xvfb", "dbus-daemon"}, entry.needs...)...)
				site := newSignupSite(b)
				env := "SIGNUP_URL=" + site.srv.URL + "/signup.html"
				var cold, warm, coldLoop, warmLoop time.Duration
				for b.Loop() {
					scenario := galleryScenario(b, entry.scenario)
					rep, _, took := runGallery(b, bin, scenario, scriptedModel(b, entry.turns, delay), "read-write", env)
					cold += took
					coldLoop += loopSpan(rep)
					srv := scriptedModel(b, nil, delay)
					rep, _, took = runGallery(b, bin, scenario, srv, "read-write", env)
					warm += took
					warmLoop += loopSpan(rep)
					if n := len(srv.Requests()); n != 0 {
						b.Fatalf("the warm run made %d model requests", n)
					}
				}
				n := float64(b.N)
				b.ReportMetric(cold.Seconds()/n, "s/cold-run")
				b.ReportMetric(warm.Seconds()/n, "s/warm-run")
				b.ReportMetric(cold.Seconds()/warm.Seconds(), "x-faster")
				b.ReportMetric(coldLoop.Seconds()/n, "s/cold-loop")
				b.ReportMetric(warmLoop.Seconds()/n, "s/warm-loop")
			})
		}
	}
}

// loopSpan is the time from the loop's first step to the end of its
// last: the part of a run the cache changes, without the app's start and
// the success criteria. The loop's steps are the planner's, the model's
// or the cache's.
func loopSpan(rep report.Report) time.Duration {
	var first, last time.Time
	for _, s := range rep.Steps {
		if !s.Source.Planned() {
			continue
		}
		if first.IsZero() {
			first = s.Started
		}
		last = s.Started.Add(time.Duration(s.DurationMS) * time.Millisecond)
	}
	return last.Sub(first)
}

// TestCacheModeRefused: an unknown cache mode, on the command line or in
// the operator file, is bad input: exit 3, the key (and the file's line)
// named, nothing launched.
func TestCacheModeRefused(t *testing.T) {
	t.Parallel()
	path, dir := runScenarioFile(t, "name: refused\napp: {command: [sh, -c, 'touch $DIR/launched']}\nsteps: [{observe_screen: {}}]\n")
	op := filepath.Join(dir, "op.yaml")
	if err := os.WriteFile(op, []byte("runner: {max_iterations: 5}\ncache: sometimes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		errs string
	}{
		{"run --cache", []string{"run", path, "--cache", "always", "--headless", "--report", filepath.Join(dir, "r1")}, `--cache: want read-write, read-only, off, got "always"`},
		{"suite --cache", []string{"suite", path, "--cache", "always", "--headless", "--out", filepath.Join(dir, "r2")}, `--cache: want read-write, read-only, off, got "always"`},
		{"operator cache:", []string{"run", path, "-o", op, "--headless", "--report", filepath.Join(dir, "r3")}, `op.yaml:2:1: cache: want read-write, read-only or off, got "sometimes"`},
	}
	for _, tt := range tests {
		code, out, errs := kasmrt(t, tt.args...)
		if code != 3 || !strings.Contains(errs, tt.errs) {
			t.Errorf("%s: exit %d, want 3 and %q\nstdout:\n%s\nstderr:\n%s", tt.name, code, tt.errs, out, errs)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "launched")); err == nil {
		t.Error("a refused run launched its app")
	}
}

// relabelScenario is a zenity entry whose OK button reads what the file
// $LABEL_FILE holds: the scenario stays the same (and so does its cache
// key) while the application's label changes.
const relabelScenario = `name: cache relabelled button
app:
  command: [sh, -c, 'exec zenity --entry --title=Groceries "--text=What should we buy?" "--ok-label=$(cat "$LABEL_FILE")" > "$HOME/bought.txt"']
  env:
    GSETTINGS_BACKEND: memory
  window:
    title: Groceries
  success_exit_codes: [0]
goal: Type the provided shopping item into the dialog's entry, then confirm it with the dialog's confirming button.
agentic_max_iterations: 12
provides:
  item: oat milk
success:
  exit_code: 0
  tools: [bought]
tools:
  bought:
    description: Check that the dialog was confirmed with the item in its entry.
    run: shell
    command: '[ "$(cat "$HOME/bought.txt")" = "oat milk" ]'
`

// TestActionCacheFallsBackAtARenamedControl: on a desktop dialog whose
// confirming button is renamed between runs, the warm cache replays the
// calls before the click, falls back to the model at the click on the
// button (click_element's control is not there), and the run passes with
// the model's one call.
func TestActionCacheFallsBackAtARenamedControl(t *testing.T) {
	t.Parallel()
	need(t, "Xvfb", "zenity", "dbus-daemon")
	dir := t.TempDir()
	scenario, label := filepath.Join(dir, "relabel.yaml"), filepath.Join(dir, "label")
	if err := os.WriteFile(scenario, []byte(relabelScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(name string, srv *modeltest.Server) (report.Report, string) {
		t.Helper()
		if err := os.WriteFile(label, []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "report")
		env := []string{"KASM_RUNTIME_VISION_ENDPOINT=" + srv.URL(), "DBUS_SESSION_BUS_ADDRESS=", "LABEL_FILE=" + label}
		code, stdout, stderr := kasmrtProcess(t, env, "run", scenario, "-o", "../../scenarios/examples/operator-goal.yaml",
			"--cache", "read-write", "--headless", "--display", "-", "--report", out)
		rep, _ := readReport(t, out)
		if code != 0 || rep.Verdict != "pass" {
			t.Fatalf("exit %d, verdict %s (%s)\nstdout:\n%s\nstderr:\n%s", code, rep.Verdict, rep.Outcome, stdout, stderr)
		}
		return rep, stdout
	}
	first := modeltest.New(t,
		modeltest.Call("observe_screen", `{}`),
		modeltest.Call("type_text", `{"ref": "item"}`),
		modeltest.Call("observe_screen", `{}`),
		modeltest.Call("click_element", `{"name": "Order"}`))
	if rep, _ := run("Order", first); rep.Cache == nil || !rep.Cache.Stored {
		t.Fatalf("the first run's cache account: %+v", rep.Cache)
	}
	warm := modeltest.New(t)
	if rep, _ := run("Order", warm); len(warm.Requests()) != 0 || rep.Cache == nil || rep.Cache.Hits != 4 || rep.Cache.FellBackAt != 0 {
		t.Errorf("the warm run: %d model requests, cache %+v; want none and 4 hits", len(warm.Requests()), rep.Cache)
	}
	changed := modeltest.New(t, modeltest.Call("click_element", `{"name": "Buy it"}`))
	rep, stdout := run("Buy it", changed)
	if c := rep.Cache; c == nil || c.FellBackAt != 4 || c.Hits != 3 || !c.Stored {
		t.Errorf("after the rename the cache account is %+v, want a fall back at step 4 after 3 hits", rep.Cache)
	}
	if len(changed.Requests()) != 1 {
		t.Errorf("after the rename the model was asked %d times, want 1", len(changed.Requests()))
	}
	wantIn(t, "the renamed run's output", stdout, []string{`fell back to the model at step 4 after 3 replayed calls: the cached call click_element no longer fits:`, `"Order" is not there`})
}
