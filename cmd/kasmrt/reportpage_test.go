package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/chromedp/chromedp/kb"

	"github.com/kasmrt/kasmrt/engine/model/modeltest"
	"github.com/kasmrt/kasmrt/internal/testkit"
)

// pageOperator is a small, quick operator file for the page's goal runs;
// ENDPOINT is the model test server's URL.
const pageOperator = `runner:
  settle_interval_ms: 30
  settle_cap_ms: 400
  grounding_attempts: 1
session:
  width: 800
  height: 500
model:
  endpoint: ENDPOINT
  profile: openai-compatible
  retry: 0
  timeout: 5
  disable_after: 1
`

// runForPage runs scenario (with operator, when set, its ENDPOINT
// replaced) headless in an embedded Xvfb, as its own process with env
// added to the test's environment, and returns the report directory and
// the exit code. The environment is the process's own, so the page tests
// run in parallel.
func runForPage(t *testing.T, scenario, operator, endpoint string, env ...string) (string, int) {
	t.Helper()
	path, dir := runScenarioFile(t, scenario)
	args := []string{"run", path, "--headless", "--display", "-", "--report", filepath.Join(dir, "report")}
	if operator != "" {
		args = append(args, "-o", testkit.WriteFile(t, dir, "operator.yaml", strings.ReplaceAll(operator, "ENDPOINT", endpoint)))
	}
	code, out, errs := kasmrtProcess(t, env, args...)
	if _, err := os.Stat(filepath.Join(dir, "report", "report.html")); err != nil {
		t.Fatalf("the run left no report.html (exit %d): %v\nstdout:\n%s\nstderr:\n%s", code, err, out, errs)
	}
	return filepath.Join(dir, "report"), code
}

// TestReportPageScriptedRun: a scripted run against xterm, with a secret
// typed and a click, gives a page Chromium loads cleanly, whose steps,
// keys and final capture work, whose click is marked on its screen, and
// which holds no secret; `kasmrt report` rewrites the same page and
// indexes the run.
func TestReportPageScriptedRun(t *testing.T) {
	t.Parallel()
	need(t, "Xvfb", "xterm")
	const secret = "pagE-s3cret-Value"
	dir, code := runForPage(t, `name: page scripted`+runTestXterm+`provides:
  pw: {secret: {env: KASM_PAGE_TEST_SECRET}}
steps:
  - observe_screen: {}
  - click: center
  - type_text: pw
  - press_key: Return
  - wait: 0.3
  - show: {}
tools:
  show:
    description: print what the app read
    run: shell
    command: cat typed.txt
`, "", "", "KASM_PAGE_TEST_SECRET="+secret, "KASM_RUNTIME_DEADLINE_S=60")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	p, rep := checkReportPage(t, dir)
	var click int
	for _, s := range rep.Steps {
		if s.Tool == "click" {
			click = s.N
		}
	}
	if n := p.int(t, `document.querySelectorAll("#step-`+strconv.Itoa(click)+` .shot svg.marked circle").length`); n == 0 {
		t.Errorf("the click step's screen has no marked point")
	}
	if n := p.int(t, `document.querySelectorAll("#step-1 .shot svg.marked").length`); n != 0 {
		t.Errorf("observe_screen's screen is marked, though nothing was clicked")
	}
	// Play shows the steps at the run's own pace: from the first, the
	// selection moves on by itself and reaches the last.
	p.press(t, kb.Home)
	p.press(t, " ")
	last := rep.Steps[len(rep.Steps)-1].N
	span := rep.Steps[len(rep.Steps)-1].Started.Sub(rep.Steps[0].Started).Milliseconds()
	var played struct{ N, MS int64 }
	p.eval(t, `new Promise(r => { const t0 = Date.now(); const poll = () => { const n = +document.body.dataset.selected; if (n === `+strconv.Itoa(last)+` || Date.now() - t0 > `+strconv.FormatInt(span*3+2000, 10)+`) { r({N: n, MS: Date.now() - t0}) } else { setTimeout(poll, 20) } }; poll() })`, &played)
	if played.N != int64(last) {
		t.Errorf("play stopped at step %d, want the last step %d within the run's %d ms", played.N, last, span)
	}
	if played.MS < span*8/10 {
		t.Errorf("play reached the last step in %d ms, faster than the run's %d ms", played.MS, span)
	}
	html, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(html, []byte(secret)) {
		t.Errorf("report.html holds the secret value")
	}
	if !bytes.Contains(html, []byte("[REDACTED]")) {
		t.Errorf("report.html does not show where the secret was (the tool printed it)")
	}

	// kasmrt report rebuilds the page an older directory lacks.
	if err := os.Remove(filepath.Join(dir, "report.html")); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := kasmrt(t, "report", dir); code != 0 || !strings.Contains(out, "report.html") {
		t.Fatalf("kasmrt report: exit %d\n%s\n%s", code, out, errs)
	}
	again, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, html) {
		t.Errorf("kasmrt report wrote a different page than the run did")
	}
	index := filepath.Join(t.TempDir(), "index.html")
	if code, _, errs := kasmrt(t, "report", "--index", dir, "--out", index); code != 0 {
		t.Fatalf("kasmrt report --index: exit %d\n%s", code, errs)
	}
	ip := openPage(t, index)
	if n := ip.int(t, `document.querySelectorAll("tr.run").length`); n != 1 {
		t.Errorf("the index lists %d runs, want 1", n)
	}
	if w := ip.int(t, `(async () => { const i = document.querySelector("tr.run img"); i.loading = "eager"; await i.decode(); return i.naturalWidth })()`); w == 0 {
		t.Errorf("the index's final capture did not load")
	}
	href := ip.str(t, `document.querySelector("tr.run a").getAttribute("href")`)
	if _, err := os.Stat(filepath.Join(filepath.Dir(index), href)); err != nil {
		t.Errorf("the index links %q, which is not the run's page: %v", href, err)
	}
	ip.wantClean(t)
}

// Hostile strings: markup that runs script if it is ever parsed as HTML,
// and terminal control sequences.
const (
	hostileTitle = `<script>alert(1)</script>"><img src=x onerror=alert(2)>`
	hostileProse = "I will click it. <script>alert(3)</script>\"><img src=y onerror=alert(4)> \x1b]0;pwned\x07\x1b[31mred"
)

// TestReportPageGoalRunWithGrounding: a goal run whose model grounds a
// click, and whose window title, model prose, judge reason and tool
// output are hostile, gives a page that shows the grounding attempt's
// two captures with the point, and shows every hostile string as text:
// Chromium runs nothing of them (no dialog, no console error).
func TestReportPageGoalRunWithGrounding(t *testing.T) {
	t.Parallel()
	need(t, "Xvfb", "xterm")
	srv := modeltest.New(t,
		modeltest.Call("observe_screen", `{}`).WithText(hostileProse),
		modeltest.Call("click_grounded", `{"description": "the terminal <b>window</b>", "expect": "the terminal has focus"}`),
		modeltest.Text(`{"point": [200, 100]}`),
		modeltest.Text("```json\n{\"met\": true, \"reason\": \"judged <img src=z onerror=alert(5)>\"}\n```"),
		modeltest.Call("note", `{}`),
		modeltest.Call("record_verdict", `{"verdict": "goal-met", "reason": "done <script>alert(6)</script>"}`),
	)
	dir, code := runForPage(t, `name: page goal
app:
  command: [xterm, -T, '`+hostileTitle+`', -class, KasmPage, -geometry, 60x10+0+0, -e, sh]
  window: {class: KasmPage}
  startup_timeout_s: 10
goal: Click the terminal and print the note.
tools:
  note:
    description: print a note
    run: shell
    command: printf '<script>alert(7)</script>\033]0;pwned\007\033[31mred\n'
`, pageOperator, srv.URL(), "KASM_RUNTIME_DEADLINE_S=60")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	p, rep := checkReportPage(t, dir)
	if len(rep.Grounding) != 1 || rep.Grounding[0].Point == nil {
		t.Fatalf("grounding %+v, want one attempt with a point", rep.Grounding)
	}
	attempt := `document.querySelector(".grounding-attempt")`
	p.eval(t, `(() => { const s = `+attempt+`.closest("article"); document.querySelector('.steplist li[data-n="' + s.dataset.n + '"]').click(); return true })()`, nil)
	for _, side := range []string{"before", "after"} {
		if w := p.int(t, `(async () => { const i = `+attempt+`.querySelector("figure.`+side+` img"); i.loading = "eager"; await i.decode(); return i.naturalWidth })()`); w != 800 {
			t.Errorf("the grounding attempt's %s capture is %d pixels wide, want the 800 of the screen", side, w)
		}
		var c struct{ X, Y int }
		p.eval(t, `(() => { const c = `+attempt+`.querySelector("figure.`+side+` svg.marked circle"); return c ? {X: +c.getAttribute("cx"), Y: +c.getAttribute("cy")} : {X: -1, Y: -1} })()`, &c)
		if c.X != rep.Grounding[0].Point.X || c.Y != rep.Grounding[0].Point.Y {
			t.Errorf("the %s capture marks (%d, %d), want the clicked point %+v", side, c.X, c.Y, *rep.Grounding[0].Point)
		}
	}
	if n := p.int(t, `document.querySelectorAll("script").length`); n != 1 {
		t.Errorf("the page has %d script elements, want only its own", n)
	}
	if n := p.int(t, `document.querySelectorAll("img:not(.shot img):not([src^='screens/'])").length`); n != 0 {
		t.Errorf("the page has %d images that are not the report's screens", n)
	}
	text := p.str(t, `document.body.innerText`)
	for _, want := range []string{hostileTitle, `<script>alert(3)</script>"><img src=y onerror=alert(4)>`, `\x1b]0;pwned\x07\x1b[31mred`,
		`judged <img src=z onerror=alert(5)>`, `<script>alert(7)</script>`, `done <script>alert(6)</script>`, "the terminal <b>window</b>"} {
		if !strings.Contains(text, want) {
			t.Errorf("the page does not show %q as text", want)
		}
	}
	if n := p.int(t, `document.querySelectorAll("b").length - document.querySelectorAll("p.grounding > b, .grounding-attempt b").length`); n < 0 {
		t.Errorf("markup from the model became elements")
	}
	p.wantClean(t)
}

// TestReportPageEndings: a run cut by its deadline, one whose application
// crashes, and one whose model is off at once (no step, no screen but the
// last) each leave a page that loads cleanly and shows the final capture.
func TestReportPageEndings(t *testing.T) {
	t.Parallel()
	need(t, "Xvfb", "xterm")
	cases := []struct {
		name, scenario, deadline string
		model                    bool
		code                     int // -1: whatever the verdict says
		outcome                  string
		check                    func(t *testing.T, p *loadedPage)
	}{
		{name: "deadline", deadline: "6", code: 2, outcome: "deadline", scenario: `name: page deadline` + runTestXterm + `steps:
  - observe_screen: {}
  - wait: 25
`},
		{name: "app crash", deadline: "60", code: 1, outcome: "app-exited", scenario: `name: page crash
app:
  command: [xterm, -class, KasmCrash, -e, sh, -c, 'sleep 1.5; kill -SEGV $PPID']
  window: {class: KasmCrash}
  startup_timeout_s: 10
steps:
  - observe_screen: {}
  - wait: 5
  - observe_screen: {}
`},
		{name: "startup timeout", deadline: "60", code: 2, outcome: "window-unmatched", scenario: `name: page startup
app:
  command: [xterm, -class, KasmReal, -e, sh]
  window: {class: KasmWrong}
  startup_timeout_s: 2
steps:
  - observe_screen: {}
`, check: func(t *testing.T, p *loadedPage) {
			if n := p.int(t, `document.querySelectorAll("#startup tr.ok").length`); n != 1 {
				t.Errorf("the startup section lists %d windows of the app, want xterm's", n)
			}
			if s := p.str(t, `document.querySelector("#startup code").textContent`); !strings.Contains(s, "KasmReal") {
				t.Errorf("the suggested matcher %q does not name the app's class", s)
			}
		}},
		{name: "model off at once", deadline: "60", model: true, code: -1, scenario: `name: page model off
app:
  command: [xterm, -class, KasmOff, -e, sh]
  window: {class: KasmOff}
  startup_timeout_s: 10
goal: Print the greeting.
`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			operator, endpoint := "", ""
			if c.model {
				srv := modeltest.New(t, modeltest.Status(500), modeltest.Status(500))
				operator, endpoint = pageOperator, srv.URL()
			}
			dir, code := runForPage(t, c.scenario, operator, endpoint, "KASM_RUNTIME_DEADLINE_S="+c.deadline)
			p, rep := checkReportPage(t, dir)
			if c.code >= 0 && code != c.code || c.outcome != "" && string(rep.Outcome) != c.outcome {
				t.Errorf("exit %d, outcome %s; want %d, %s", code, rep.Outcome, c.code, c.outcome)
			}
			if c.check != nil {
				c.check(t, p)
			}
			if c.model && (len(rep.Steps) != 0 || rep.Screens != 1) {
				t.Errorf("%d steps and %d screens, want none but the final capture", len(rep.Steps), rep.Screens)
			}
		})
	}
}

// TestReportCommandBadInput: kasmrt report refuses what is not a report
// directory with exit 3 and writes nothing.
func TestReportCommandBadInput(t *testing.T) {
	t.Parallel()
	empty := t.TempDir()
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"missing", []string{"report", filepath.Join(empty, "nope")}, "no such file"},
		{"not a report", []string{"report", empty}, "not a report directory"},
		{"a file", []string{"report", file}, "is not a directory"},
		{"many without --index", []string{"report", empty, empty}, "use --index"},
		{"index over a non-report", []string{"report", "--index", empty, "--out", filepath.Join(empty, "i.html")}, "not a report directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errs := kasmrt(t, tt.args...)
			if code != exitBadInput || !strings.Contains(errs, tt.want) {
				t.Errorf("exit %d, stderr %q; want 3 and %q", code, errs, tt.want)
			}
		})
	}
	if entries, _ := os.ReadDir(empty); len(entries) != 0 {
		t.Errorf("a refused report command wrote %v", entries)
	}
}

// TestReportPageInterrupted: a run ended by Ctrl-C (SIGINT to the real
// process) mid-step still ends with its final capture, and its page shows
// it.
func TestReportPageInterrupted(t *testing.T) {
	t.Parallel()
	need(t, "Xvfb", "xterm")
	cmd, dir := startEnding(t, io.Discard, "--headless")
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	_, rep := checkReportPage(t, dir)
	if rep.Outcome != "interrupted" || rep.Final.Ending != "interrupted" {
		t.Errorf("outcome %s, final capture's ending %s; want interrupted", rep.Outcome, rep.Final.Ending)
	}
}
