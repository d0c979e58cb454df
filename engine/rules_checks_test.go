package engine

import (
	"image"
	"image/color"
	"image/draw"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/drivers/cdp"
	"github.com/kasmrt/kasmrt/drivers/ocr"
	"github.com/kasmrt/kasmrt/engine/baseline"
	"github.com/kasmrt/kasmrt/engine/events"
)

// expectCase is one scripted run on the double whose steps carry expect:
// checks (docs/language.md, "Checks a step can carry").
type expectCase struct {
	name string
	// scenario is the whole scenario; rulesApp with steps when only steps
	// is given.
	scenario, steps string
	env             map[string]string
	machine         func() *fakeMachine
	verdict         events.Verdict
	outcome         events.Outcome
	want            []loopStep
	// reason, when set, must be in one of the report's reasons.
	reason string
	check  func(t *testing.T, r loopResult)
}

func runExpectCases(t *testing.T, cases []expectCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := &fakeMachine{}
			if c.machine != nil {
				f = c.machine()
			}
			sc := c.scenario
			if sc == "" {
				sc = rulesApp + "steps:\n" + c.steps
			}
			r := loopRun(t, loopCase{scenario: sc, operator: "runner: {}\n", machine: f, env: c.env})
			loopWant(t, r, c.verdict, c.outcome, 0, 0)
			loopWantSteps(t, r.rep, c.want...)
			if why := strings.Join(r.rep.Reasons, "\n"); c.reason != "" && !strings.Contains(why, c.reason) {
				t.Errorf("reasons = %q, want one containing %q", r.rep.Reasons, c.reason)
			}
			if c.check != nil {
				c.check(t, r)
			}
		})
	}
}

// titled is a double whose window has a title.
func titled(title string) func() *fakeMachine {
	return func() *fakeMachine { return &fakeMachine{title: title} }
}

// TestRulesExpectWindowTitle checks window_title: contains and equals are
// each their own test, a title that never comes fails the step as the
// application's fault within its bound, a window gone says so, and a run
// without a window cannot check a title at all.
func TestRulesExpectWindowTitle(t *testing.T) {
	t.Parallel()
	runExpectCases(t, []expectCase{
		{
			name: "contains holds on part of the title", machine: titled("notes.txt - Saved"),
			steps:   "  - press_key: {key: ctrl+s}\n    expect:\n      window_title: {contains: Saved}\n",
			verdict: events.VerdictPass, outcome: OutcomeCompleted,
			want: []loopStep{{"press_key", "ok", `; checked: the window title contains "Saved"`}},
		},
		{
			name: "equals holds only on the whole title", machine: titled("notes.txt - Saved"),
			steps:   "  - expect:\n      window_title: {equals: notes.txt - Saved}\n  - expect:\n      window_title: {equals: Saved, within_s: 0.2}\n",
			verdict: events.VerdictAppFailed, outcome: OutcomeStepFailed,
			want: []loopStep{{"expect", "ok", `checked: the window title equals "notes.txt - Saved"`},
				{"expect", "error", `expected the window title equals "Saved" (within 200ms); found the title "notes.txt - Saved"`}},
		},
		{
			name: "contains fails on another title", machine: titled("notes.txt"),
			steps:   "  - expect:\n      within_s: 0.2\n      window_title: {contains: Saved}\n",
			verdict: events.VerdictAppFailed, outcome: OutcomeStepFailed,
			want:   []loopStep{{"expect", "error", `expected the window title contains "Saved" (within 200ms); found the title "notes.txt"`}},
			reason: `the window title contains "Saved"`,
		},
		{
			name: "a window gone is what was found",
			machine: func() *fakeMachine {
				f := &fakeMachine{title: "notes.txt"}
				f.on = func(f *fakeMachine, in string) { f.loseWindow() }
				return f
			},
			steps:   "  - press_key: {key: ctrl+w}\n    expect:\n      window_title: {contains: notes, within_s: 0.2}\n",
			verdict: events.VerdictAppFailed, outcome: OutcomeStepFailed,
			want: []loopStep{{"press_key", "error", "found the application window is gone"}},
		},
		{
			name:     "a headless browser has no window title to check",
			scenario: rulesBrowser + "steps:\n  - expect:\n      window_title: {contains: Login}\n",
			env:      map[string]string{"APP_PASSWORD": "pw"},
			verdict:  events.VerdictTestError, outcome: OutcomeStepError,
			want: []loopStep{{"expect", "error", `cannot check that the window title contains "Login": the run has no application window`}},
		},
	})
}

// TestRulesExpectPage checks the cdp checks on the double's tab: every
// field the check sets must match, text compares with white space
// collapsed, an element that is not there never passes a check of its
// state, and the message says how many elements matched.
func TestRulesExpectPage(t *testing.T) {
	t.Parallel()
	page := func(els map[string]cdp.ElementState) func() *fakeMachine {
		return func() *fakeMachine { return &fakeMachine{page: els} }
	}
	welcome := map[string]cdp.ElementState{
		"#welcome":             {Found: true, Visible: true, Text: "Welcome,\n   demo", Count: 1},
		"input[name=username]": {Found: true, Visible: true, Value: "demo", Count: 1},
		"input[name=password]": {Found: false},
		"button[type=submit]":  {Found: true, Visible: false, Text: "Log in", Count: 2},
	}
	browser := func(expect string) string {
		return rulesBrowser + "steps:\n  - expect:\n      within_s: 0.2\n      cdp:\n" + expect
	}
	env := map[string]string{"APP_PASSWORD": "pw"}
	fails := func(name, expect, message string) expectCase {
		return expectCase{name: name, machine: page(welcome), scenario: browser(expect), env: env,
			verdict: events.VerdictAppFailed, outcome: OutcomeStepFailed,
			want: []loopStep{{"expect", "error", message}}}
	}
	runExpectCases(t, []expectCase{
		{
			name: "every field that matches holds", machine: page(welcome), env: env,
			scenario: browser("        banner: {present: true, visible: true, text: \"Welcome, demo\", text_contains: \"me, de\", count: 1}\n" +
				"        username: {value: demo}\n        password: {present: false}\n        submit: {visible: false, count: 2}\n"),
			verdict: events.VerdictPass, outcome: OutcomeCompleted,
			want: []loopStep{{"expect", "ok", `checked: cdp target banner: present, visible, text "Welcome, demo", text containing "me, de", 1 matches; ` +
				`cdp target password: absent; cdp target submit: hidden, 2 matches; cdp target username: value "demo"`}},
		},
		fails("present when absent", "        password: {present: true}\n", "expected cdp target password: present (within 200ms); found password: not found (0 matches)"),
		fails("absent when present", "        banner: {present: false}\n", "expected cdp target banner: absent"),
		fails("another count", "        submit: {count: 1}\n", "cdp target submit: 1 matches (within 200ms); found submit:"),
		fails("visible when hidden", "        submit: {visible: true}\n", "(2 matches)"),
		fails("hidden when visible", "        banner: {visible: false}\n", "(1 match)"),
		fails("other text", "        banner: {text: Welcome}\n", `expected cdp target banner: text "Welcome"`),
		fails("text not contained", "        banner: {text_contains: admin}\n", `text containing "admin"`),
		fails("another value", "        username: {value: root}\n", `value "root"`),
		fails("a missing element is never hidden", "        password: {visible: false}\n", "cdp target password: hidden"),
		fails("a missing element has no empty text", "        password: {text: \"\"}\n", `cdp target password: text ""`),
		fails("a missing element contains no text", "        password: {text_contains: x}\n", `text containing "x"`),
		fails("a missing element has no empty value", "        password: {value: \"\"}\n", `cdp target password: value ""`),
	})
}

// TestRulesExpectPoint checks click_targets checks: the control under the
// point must have the role, name and states asked for; a point with no
// control under it, or a window gone, is what was found.
func TestRulesExpectPoint(t *testing.T) {
	t.Parallel()
	// The double's window is at (20, 20): the OK button (40,200)-(120,230)
	// is under the window point (30, 190), nothing under (300, 10).
	const targets = "click_targets:\n  ok_button: {x: 30, y: 190}\n  corner: {x: 300, y: 10}\n"
	sc := func(steps string) string { return rulesApp + targets + "steps:\n" + steps }
	runExpectCases(t, []expectCase{
		{
			name: "role, name and state that match hold", machine: fakeDialog,
			scenario: sc("  - expect:\n      click_targets:\n        ok_button: {role: Push Button, name: \" ok \", enabled: true}\n"),
			verdict:  events.VerdictPass, outcome: OutcomeCompleted,
			want: []loopStep{{"expect", "ok", `checked: the control at ok_button is a Push Button, named " ok ", enabled`}},
		},
		{
			name: "another role fails", machine: fakeDialog,
			scenario: sc("  - expect:\n      within_s: 0.2\n      click_targets:\n        ok_button: {role: check box}\n"),
			verdict:  events.VerdictAppFailed, outcome: OutcomeStepFailed,
			want: []loopStep{{"expect", "error", `expected the control at ok_button is a check box (within 200ms); found at (50, 210) is the push button "OK" (enabled, not checked, not focused)`}},
		},
		{
			name: "another name fails", machine: fakeDialog,
			scenario: sc("  - expect:\n      within_s: 0.2\n      click_targets:\n        ok_button: {name: Cancel}\n"),
			verdict:  events.VerdictAppFailed, outcome: OutcomeStepFailed,
			want: []loopStep{{"expect", "error", `the control at ok_button is named "Cancel"`}},
		},
		{
			name: "another state fails", machine: fakeDialog,
			scenario: sc("  - expect:\n      within_s: 0.2\n      click_targets:\n        ok_button: {checked: true}\n"),
			verdict:  events.VerdictAppFailed, outcome: OutcomeStepFailed,
			want: []loopStep{{"expect", "error", `the control at ok_button is checked (within`}},
		},
		{
			name: "no control under the point", machine: fakeDialog,
			scenario: sc("  - expect:\n      within_s: 0.2\n      click_targets:\n        corner: {role: push button}\n"),
			verdict:  events.VerdictAppFailed, outcome: OutcomeStepFailed,
			want: []loopStep{{"expect", "error", "found no accessible control is at (320, 30)"}},
		},
		{
			name: "a window gone has no control at the point",
			machine: func() *fakeMachine {
				f := fakeDialog()
				on := f.on
				f.on = func(f *fakeMachine, in string) { on(f, in); f.loseWindow() }
				return f
			},
			scenario: sc("  - press_key: Escape\n    expect:\n      within_s: 0.2\n      click_targets:\n        ok_button: {role: push button}\n"),
			verdict:  events.VerdictAppFailed, outcome: OutcomeStepFailed,
			want: []loopStep{{"press_key", "error", "found the application window is gone"}},
		},
		{
			name:     "an application without controls cannot be checked",
			scenario: sc("  - expect:\n      click_targets:\n        ok_button: {role: push button}\n"),
			verdict:  events.VerdictTestError, outcome: OutcomeStepError,
			want: []loopStep{{"expect", "error", "cannot check that the control at ok_button is a push button: the application publishes no accessible controls"}},
		},
	})
}

// TestRulesExpectControlWords checks what a controls check says it wants
// and found, so the report tells the author which state was off.
func TestRulesExpectControlWords(t *testing.T) {
	t.Parallel()
	focusedBox := func() *fakeMachine {
		f := fakeDialog()
		cs := f.showing()
		cs[2].Checked, cs[2].Focused = true, true
		f.setControls(cs...)
		return f
	}
	runExpectCases(t, []expectCase{
		{
			name: "the states asked for are named", machine: focusedBox,
			steps:   "  - expect:\n      controls:\n        Remember me: {enabled: true, checked: true, focused: true}\n        OK: {present: true}\n",
			verdict: events.VerdictPass, outcome: OutcomeCompleted,
			want: []loopStep{{"expect", "ok", `checked: the control "OK" is present; the control "Remember me" is enabled, checked, focused`}},
		},
		{
			name: "a control that should be gone is there", machine: focusedBox,
			steps:   "  - expect:\n      controls:\n        OK: {present: false, within_s: 0.2}\n",
			verdict: events.VerdictAppFailed, outcome: OutcomeStepFailed,
			want: []loopStep{{"expect", "error", `expected no control is named "OK" (within 200ms); found the push button "OK" is there`}},
		},
		{
			name: "the found states are all said", machine: focusedBox,
			steps:   "  - expect:\n      controls:\n        Remember me: {enabled: false, within_s: 0.2}\n",
			verdict: events.VerdictAppFailed, outcome: OutcomeStepFailed,
			want: []loopStep{{"expect", "error", `expected the control "Remember me" is not enabled (within 200ms); found the check box "Remember me" (enabled, checked, focused)`}},
		},
		{
			name: "an unfocused control fails focused", machine: fakeDialog,
			steps:   "  - expect:\n      controls:\n        OK: {focused: true, within_s: 0.2}\n",
			verdict: events.VerdictAppFailed, outcome: OutcomeStepFailed,
			want: []loopStep{{"expect", "error", `(enabled, not checked, not focused)`}},
		},
	})
}

// TestRulesExpectExitCode checks exit_code: the expected ending passes
// and ends the run normally, another code fails, and an app
// still running when the bound passes fails.
func TestRulesExpectExitCode(t *testing.T) {
	t.Parallel()
	exitsWith := func(st func(f *fakeMachine)) func() *fakeMachine {
		return func() *fakeMachine {
			return &fakeMachine{on: func(f *fakeMachine, in string) {
				if in == "key ctrl+q" {
					st(f)
				}
			}}
		}
	}
	quit := func(code string) string {
		return "  - press_key: ctrl+q\n    expect:\n      within_s: 0.3\n      exit_code: " + code + "\n"
	}
	runExpectCases(t, []expectCase{
		{
			name: "the expected code passes and ends the run normally", machine: exitsWith(func(f *fakeMachine) { f.exitApp(3) }),
			steps:   quit("3"),
			verdict: events.VerdictPass, outcome: OutcomeCompleted,
			want: []loopStep{{"press_key", "ok", "checked: the application exited with code 3"}},
			check: func(t *testing.T, r loopResult) {
				if len(r.rep.Concerns) != 0 || r.rep.Checks.ProcessAlive == nil || !*r.rep.Checks.ProcessAlive {
					t.Errorf("concerns %q, checks %+v: an expected exit is no concern, and process_alive passes", r.rep.Concerns, r.rep.Checks)
				}
			},
		},
		{
			name: "another code fails", machine: exitsWith(func(f *fakeMachine) { f.exitApp(1) }),
			steps:   quit("0"),
			verdict: events.VerdictAppFailed, outcome: OutcomeStepFailed,
			want: []loopStep{{"press_key", "error", "expected the application exited with code 0 (within 300ms); found the application exited with status 1"}},
		},
		{
			name:    "an app still running fails",
			steps:   quit("0"),
			verdict: events.VerdictAppFailed, outcome: OutcomeStepFailed,
			want: []loopStep{{"press_key", "error", "found the application is still running"}},
		},
	})
}

// TestRulesExpectedExit checks app.expect_exit on the double: the app must
// exit by itself after the last step with one of the codes, in time; its
// window closing then is not window_present failing.
func TestRulesExpectedExit(t *testing.T) {
	t.Parallel()
	withExit := func(expect string) string {
		return strings.Replace(rulesApp, "  command: [fake-app]\n", "  command: [fake-app]\n  expect_exit: "+expect+"\n", 1)
	}
	quits := func(code int) func() *fakeMachine {
		return func() *fakeMachine {
			return &fakeMachine{on: func(f *fakeMachine, in string) {
				if in == "key ctrl+q" {
					f.loseWindow()
					f.exitApp(code)
				}
			}}
		}
	}
	expected := func(t *testing.T, r loopResult, ok bool, evidence string) {
		t.Helper()
		c := r.rep.Checks
		if c.ExpectedExit == nil || *c.ExpectedExit != ok || !strings.Contains(c.Evidence["expected_exit"], evidence) {
			t.Errorf("checks = %+v, want expected_exit %v with evidence containing %q", c, ok, evidence)
		}
	}
	runExpectCases(t, []expectCase{
		{
			name: "the default code 0 passes", machine: quits(0),
			scenario: withExit("{}") + "steps:\n  - press_key: ctrl+q\n",
			verdict:  events.VerdictPass, outcome: OutcomeCompleted,
			want: []loopStep{{"press_key", "ok", ""}},
			check: func(t *testing.T, r loopResult) {
				expected(t, r, true, "the application exited with status 0")
				if c := r.rep.Checks; c.WindowPresent != nil && !*c.WindowPresent {
					t.Errorf("checks = %+v: the window an expected exit closed is not a failed window_present", c)
				}
			},
		},
		{
			name: "a listed code passes", machine: quits(4),
			scenario: withExit("{codes: [0, 4]}") + "steps:\n  - press_key: ctrl+q\n",
			verdict:  events.VerdictPass, outcome: OutcomeCompleted,
			want:  []loopStep{{"press_key", "ok", ""}},
			check: func(t *testing.T, r loopResult) { expected(t, r, true, "the application exited with status 4") },
		},
		{
			name: "another code fails", machine: quits(2),
			scenario: withExit("{codes: [0, 4]}") + "steps:\n  - press_key: ctrl+q\n",
			verdict:  events.VerdictAppFailed, outcome: OutcomeAppExited,
			want: []loopStep{{"press_key", "ok", ""}},
			check: func(t *testing.T, r loopResult) {
				expected(t, r, false, "exited with status 2; the scenario expects exit codes [0 4]")
			},
		},
		{
			name: "an app that exits a moment after the last step is given the default time",
			machine: func() *fakeMachine {
				return &fakeMachine{on: func(f *fakeMachine, in string) {
					if in == "key ctrl+q" {
						// The app saves its state before it exits.
						time.AfterFunc(300*time.Millisecond, func() { f.loseWindow(); f.exitApp(0) })
					}
				}}
			},
			scenario: withExit("{}") + "steps:\n  - press_key: ctrl+q\n",
			verdict:  events.VerdictPass, outcome: OutcomeCompleted,
			want:  []loopStep{{"press_key", "ok", ""}},
			check: func(t *testing.T, r loopResult) { expected(t, r, true, "the application exited with status 0") },
		},
		{
			name:     "an app still running when its time is up fails",
			scenario: withExit("{within_s: 0.2}") + "steps:\n  - press_key: a\n",
			verdict:  events.VerdictAppFailed, outcome: OutcomeCompleted,
			want: []loopStep{{"press_key", "ok", ""}},
			check: func(t *testing.T, r loopResult) {
				expected(t, r, false, "still running 0.2s after the last step")
				// Its window is still there: nothing to say of it.
				if c := r.rep.Checks; c.WindowPresent == nil || !*c.WindowPresent || c.Evidence["window_present"] != "" {
					t.Errorf("checks = %+v, want window_present passed without evidence", c)
				}
			},
		},
	})
}

// TestRulesUpdateBaselinesWithoutScreenshotCheck: --update-baselines on a
// scenario with no screenshot check has nothing to write; the run goes on
// as usual, and its report's log says so instead of nothing.
func TestRulesUpdateBaselinesWithoutScreenshotCheck(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, steps string
		says        bool
	}{
		{"no screenshot check", "steps:\n  - observe_screen: {}\n", true},
		{"a screenshot check", "steps:\n  - expect:\n      screenshot: {name: main}\n", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			scenario := rulesApp + c.steps
			r := loopRun(t, loopCase{scenario: scenario, operator: "runner: {}\n", machine: &fakeMachine{},
				before: func(r *Runner) {
					r.opts.UpdateBaselines = true
					// The baseline goes beside the scenario, here a
					// directory of the test's own.
					r.files.Scenario.File = filepath.Join(dir, "s.yaml")
				}})
			said := false
			for _, e := range loopEvents(r, events.KindLog) {
				if strings.Contains(e.Message, "--update-baselines") && strings.Contains(e.Message, "no screenshot check") {
					said = true
				}
			}
			if said != c.says {
				t.Errorf("the log says there is no baseline to update: %v, want %v", said, c.says)
			}
			if r.rep.Verdict != events.VerdictPass {
				t.Errorf("verdict %s %q: --update-baselines without a screenshot check is no error", r.rep.Verdict, r.rep.Reasons)
			}
		})
	}
}

// TestRulesExpectScreenshotKeepsWhatDiffered: a screenshot check whose
// window differs from its baseline keeps the window, the baseline and the
// diff in the report, named in its baseline event; one that matches keeps
// none of them. The double's window is a white box.
func TestRulesExpectScreenshotKeepsWhatDiffered(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		fill    color.Color
		verdict events.Verdict
		result  string
		kept    bool
	}{
		{"the window matches", color.White, events.VerdictPass, events.BaselineMatched, false},
		{"the window differs", color.Black, events.VerdictAppFailed, events.BaselineDiffers, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			box := fakeWindowBox()
			want := image.NewRGBA(image.Rect(0, 0, box.Dx(), box.Dy()))
			draw.Draw(want, want.Bounds(), image.NewUniform(c.fill), image.Point{}, draw.Src)
			if err := baseline.Write(filepath.Join(dir, "s.baselines", "main.png"), want); err != nil {
				t.Fatal(err)
			}
			r := loopRun(t, loopCase{scenario: rulesApp + "steps:\n  - expect:\n      screenshot: {name: main, within_s: 0.5}\n",
				operator: "runner: {}\n", machine: &fakeMachine{},
				before: func(r *Runner) { r.files.Scenario.File = filepath.Join(dir, "s.yaml") }})
			if r.rep.Verdict != c.verdict {
				t.Errorf("verdict %s %q, want %s", r.rep.Verdict, r.rep.Reasons, c.verdict)
			}
			evs := loopEvents(r, events.KindBaseline)
			if len(evs) != 1 {
				t.Fatalf("%d baseline events, want 1", len(evs))
			}
			b, _ := events.DataOf[events.Baseline](evs[0])
			if b.Result != c.result {
				t.Errorf("baseline result %q, want %q", b.Result, c.result)
			}
			for what, rel := range map[string]string{"actual": b.Actual, "expected": b.Expected, "diff": b.Diff} {
				if (rel != "") != c.kept {
					t.Errorf("the %s image is %q, want kept %v", what, rel, c.kept)
					continue
				}
				if rel == "" {
					continue
				}
				if _, err := os.Stat(filepath.Join(r.dir, rel)); err != nil {
					t.Errorf("the %s image: %v", what, err)
				}
			}
		})
	}
}

// TestRulesExpectScreenTextSaysWhatWasRead: a screen_text check reads the
// app's window, not the whole screen; one that does not hold quotes the
// text it read, and says the screen shows no text when it read none, so
// the author sees why.
func TestRulesExpectScreenTextSaysWhatWasRead(t *testing.T) {
	t.Parallel()
	scriptNeed(t, ocr.Command)
	// showing draws text at dot on a white screen; the window is
	// fakeWindowBox, (20,20)-(420,260).
	showing := func(text string, dot image.Point) func() *fakeMachine {
		return func() *fakeMachine {
			screen := image.NewRGBA(image.Rect(0, 0, 640, 400))
			draw.Draw(screen, screen.Bounds(), image.White, image.Point{}, draw.Src)
			if text != "" {
				maskDrawText(t, screen, dot, text)
			}
			return &fakeMachine{frames: []*image.RGBA{screen}}
		}
	}
	inside, outside := image.Pt(60, 100), image.Pt(470, 330)
	const steps = "  - expect:\n      screen_text: {contains: Done, within_s: 0.2}\n"
	runExpectCases(t, []expectCase{
		{
			name: "text that is not the one wanted is quoted", machine: showing("Saved", inside), steps: steps,
			verdict: events.VerdictAppFailed, outcome: OutcomeStepFailed,
			want: []loopStep{{"expect", "error", `found the text read "Saved"`}},
		},
		{
			name: "a screen without text says so", machine: showing("", inside), steps: steps,
			verdict: events.VerdictAppFailed, outcome: OutcomeStepFailed,
			want: []loopStep{{"expect", "error", "found no text on screen"}},
		},
		{
			name: "text outside the app's window is not read", machine: showing("Done", outside), steps: steps,
			verdict: events.VerdictAppFailed, outcome: OutcomeStepFailed,
			want: []loopStep{{"expect", "error", "found no text on screen"}},
		},
	})
}
