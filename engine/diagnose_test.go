package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/godbus/dbus/v5"

	"github.com/kasmrt/kasmrt/drivers/atspi"
	"github.com/kasmrt/kasmrt/drivers/desktop"
	"github.com/kasmrt/kasmrt/engine/events"
	mt "github.com/kasmrt/kasmrt/engine/model/modeltest"
	"github.com/kasmrt/kasmrt/engine/report"
)

// wantStepScreen checks that a step has a screen in report.json and in its
// step.ended event, and that the file exists.
func wantStepScreen(t *testing.T, reportDir string, evs []events.Event, s report.Step) {
	t.Helper()
	if s.Screen == "" {
		t.Errorf("step %d (%s, %s) has no screen in report.json: %q", s.N, s.Tool, s.Status, s.Message)
		return
	}
	if _, err := os.Stat(filepath.Join(reportDir, s.Screen)); err != nil {
		t.Errorf("step %d's screen: %v", s.N, err)
	}
	for _, e := range evs {
		if e.Kind == events.KindStepEnded && e.Step == s.N && e.Screen != s.Screen {
			t.Errorf("step %d's step.ended event has screen %q, report.json %q", s.N, e.Screen, s.Screen)
		}
	}
}

// TestFailedScriptStepHasScreen checks that failed scripted steps, an
// assertion and a step that could not run, carry the screen as it was.
func TestFailedScriptStepHasScreen(t *testing.T) {
	t.Parallel()
	scriptNeed(t, "xterm")
	tests := []struct {
		name, steps, tools string
		verdict            events.Verdict
		failing            int
	}{
		{
			name:    "declared check fails",
			steps:   "  - observe_screen: {}\n  - verify: {}\n",
			tools:   "tools:\n  verify: {run: shell, command: 'echo nope >&2; exit 1'}\n",
			verdict: events.VerdictAppFailed, failing: 2,
		},
		{
			name:    "expected title never shows",
			steps:   "  - observe_screen: {}\n  - expect: {within_s: 0.3, window_title: {equals: never}}\n",
			verdict: events.VerdictAppFailed, failing: 2,
		},
		{
			// Unknown key names are refused before launch; a check the app
			// cannot answer is a step that could not run.
			name:    "check that cannot run",
			steps:   "  - expect: {controls: {OK: {enabled: true}}}\n",
			verdict: events.VerdictTestError, failing: 1,
		},
		{
			name:    "wait condition never clears",
			steps:   "  - wait_while: gone\n",
			tools:   "wait_conditions:\n  gone: {file_missing: $DIR/never, timeout_s: 0.3}\n",
			verdict: events.VerdictTestError, failing: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := scriptRun(t, scriptRunSpec{scenario: "name: failing step" + scriptXtermPlain + "steps:\n" + tc.steps + tc.tools})
			if o.res.Verdict != tc.verdict {
				t.Fatalf("verdict %s (%v), want %s", o.res.Verdict, o.res.Reasons, tc.verdict)
			}
			s := o.step(t, tc.failing)
			if s.Status == events.StatusOK {
				t.Fatalf("step %d succeeded: %q", tc.failing, s.Message)
			}
			wantStepScreen(t, o.info.reportDir, o.events, s)
		})
	}
}

// TestRefusedModelCallHasScreen checks that a call the guards refuse gets
// a screen too, and that taking it does not count as an observation: the
// next input is refused again until the model observes.
func TestRefusedModelCallHasScreen(t *testing.T) {
	t.Parallel()
	r := loopRun(t, loopCase{script: []mt.Exchange{
		mt.Call("press_key", `{"key": "Return"}`),
		mt.Call("press_key", `{"key": "Return"}`),
		mt.Call("no_such_tool", `{}`),
		loopObserve,
		loopGoalMet,
	}})
	loopWantSteps(t, r.rep,
		loopStep{"press_key", events.StatusRefused, "observe_screen"},
		loopStep{"press_key", events.StatusRefused, "observe_screen"},
		loopStep{"no_such_tool", events.StatusMalformed, "unknown tool"},
		loopStep{"observe_screen", events.StatusOK, "observed"},
		loopStep{"record_verdict", events.StatusOK, "goal-met"},
	)
	for _, s := range r.rep.Steps[:3] {
		wantStepScreen(t, r.dir, r.events, s)
	}
	// The evidence is for the report, not for the model: the refused calls'
	// tool messages carry no image.
	for i, req := range r.reqs[1:3] {
		if imgs, err := req.Images(); err != nil || len(imgs) != 0 {
			t.Errorf("request %d has %d images (%v), want none before the first observation", i+2, len(imgs), err)
		}
	}
	if strings.Contains(r.rep.Steps[0].Message, "no screen") {
		t.Errorf("step 1 says %q", r.rep.Steps[0].Message)
	}
}

// TestStartupTimeoutDiagnostics checks what a run whose window never
// matched leaves: a screen, every window on the display with the
// application's marked, a suggested app.window, and the classification: a
// window the scenario's matcher missed is the test's mistake (test-error),
// no window at all is the application's failure (app-failed).
func TestStartupTimeoutDiagnostics(t *testing.T) {
	t.Parallel()
	scriptNeed(t, "xterm", "xmessage", "zenity")
	tests := []struct {
		name, app  string
		verdict    events.Verdict
		outcome    events.Outcome
		reasons    []string
		suggestion string
		appWindows int
		timeoutS   float64 // 1.5 unless set
	}{
		{
			name: "wrong window class",
			app: `  command: [xterm, -class, KasmReal, -title, real window, -geometry, 40x8+10+10, -e, sleep, "3600"]
  window: {class: KasmWrong}
`,
			verdict: events.VerdictTestError, outcome: OutcomeWindowUnmatched,
			reasons:    []string{`class "KasmWrong"`, `"real window" (class "KasmReal"`, "try app.window: {class: KasmReal}"},
			suggestion: "app.window: {class: KasmReal}", appWindows: 1,
		},
		{
			name: "wrong title",
			app: `  command: [xterm, -class, KasmTitled, -title, Quarterly report, -e, sleep, "3600"]
  window: {title: Annual report}
`,
			verdict: events.VerdictTestError, outcome: OutcomeWindowUnmatched,
			reasons:    []string{`title containing "Annual report"`, "try app.window: {class: KasmTitled}"},
			suggestion: "app.window: {class: KasmTitled}", appWindows: 1,
		},
		{
			name: "GTK dialog under another class",
			app: `  command: [zenity, --info, --text=Saved]
  window: {class: Gedit}
`,
			verdict: events.VerdictTestError, outcome: OutcomeWindowUnmatched,
			reasons:    []string{`class "Gedit"`, `(class "Zenity"`, "try app.window: {class: Zenity}"},
			suggestion: "app.window: {class: Zenity}", appWindows: 1,
			// GTK takes its time to map a window on a busy machine.
			timeoutS: 6,
		},
		{
			// xmessage (Athena) sets no _NET_WM_PID, so the default match
			// by process cannot find it: the scenario must name its class.
			name:    "window without a pid",
			app:     "  command: [xmessage, -geometry, +40+40, hello from athena]\n",
			verdict: events.VerdictTestError, outcome: OutcomeWindowUnmatched,
			reasons:    []string{"no pid", "try app.window: {class: Xmessage}"},
			suggestion: "app.window: {class: Xmessage}", appWindows: 1,
		},
		{
			name:    "no window at all",
			app:     "  command: [sleep, \"30\"]\n",
			verdict: events.VerdictAppFailed, outcome: OutcomeStartup,
			reasons: []string{"appeared within 1.5s", "no window appeared on the display at all"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.timeoutS == 0 {
				tc.timeoutS = 1.5
			}
			o := scriptRun(t, scriptRunSpec{scenario: fmt.Sprintf("name: startup\napp:\n%s  startup_timeout_s: %g\nsteps: [{observe_screen: {}}]\n", tc.app, tc.timeoutS)})
			if o.res.Verdict != tc.verdict || o.res.Outcome != tc.outcome {
				t.Fatalf("verdict %s (%s), want %s (%s): %v", o.res.Verdict, o.res.Outcome, tc.verdict, tc.outcome, o.res.Reasons)
			}
			reason := strings.Join(o.res.Reasons, "\n")
			for _, w := range tc.reasons {
				if !strings.Contains(reason, w) {
					t.Errorf("reasons lack %q:\n%s", w, reason)
				}
			}
			if len(o.rep.Steps) != 0 {
				t.Errorf("%d steps ran", len(o.rep.Steps))
			}
			st := o.rep.Startup
			if st == nil {
				t.Fatal("report.json has no startup section")
			}
			if st.Suggestion != tc.suggestion || st.TimeoutS != tc.timeoutS || st.Match == "" || st.Reason == "" {
				t.Errorf("startup = %+v, want suggestion %q", st, tc.suggestion)
			}
			if o.rep.Screens == 0 || st.Screen == "" {
				t.Errorf("no screen at the startup timeout (screens %d, startup.screen %q)", o.rep.Screens, st.Screen)
			} else if _, err := os.Stat(filepath.Join(o.info.reportDir, st.Screen)); err != nil {
				t.Error(err)
			}
			mine := 0
			for _, w := range st.Windows {
				// Toolkits keep hidden helper windows (GTK's 10x10 leader):
				// listed, but not what the application shows.
				if w.Application && w.Viewable {
					mine++
					if w.Width == 0 || w.Height == 0 || w.Class == "" || w.ID == "" {
						t.Errorf("window listed without its identity: %+v", w)
					}
				}
			}
			if mine != tc.appWindows {
				t.Errorf("%d of the application's shown windows listed, want %d: %+v", mine, tc.appWindows, st.Windows)
			}
			// The same section comes back from events.jsonl alone.
			if again := report.Fold(o.events).Startup; again == nil || again.Suggestion != st.Suggestion || len(again.Windows) != len(st.Windows) {
				t.Errorf("folded from events.jsonl: %+v", again)
			}
		})
	}
}

// TestClickOffScreenWordedForTheAuthor clicks a target that lands past the
// screen's edge on a real xterm: the step says why and what to check, keeps
// the driver's words, and the run is the test's error, not the app's.
func TestClickOffScreenWordedForTheAuthor(t *testing.T) {
	t.Parallel()
	scriptNeed(t, "xterm")
	o := scriptRun(t, scriptRunSpec{scenario: `name: off screen
app:
  command: [xterm, -class, KasmEdge, -geometry, 40x8+100+0, -e, sleep, "3600"]
  window: {class: KasmEdge}
click_targets:
  far: {x: 1250, y: 10, description: past the right edge once the window's offset is added}
steps:
  - click: far
`})
	if o.res.Verdict != events.VerdictTestError || o.res.Outcome != OutcomeStepError {
		t.Fatalf("verdict %s (%s), want test-error (step-error): %v", o.res.Verdict, o.res.Outcome, o.res.Reasons)
	}
	msg := o.step(t, 1).Message
	for _, w := range []string{"failed: the point is outside the screen", "try checking the click target's x and y", "(click at "} {
		if !strings.Contains(msg, w) {
			t.Errorf("step 1 says %q, want %q", msg, w)
		}
	}
}

// TestExplainDriverError checks the wording of driver failures that a run
// cannot easily provoke, and that errors already written for the author
// pass unchanged.
func TestExplainDriverError(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want []string
	}{
		{"stale node", fmt.Errorf("click #go: locate: %w", errors.New("Could not find node with given id (-32000)")),
			[]string{"click #go failed: the page changed", "try waiting for the page to settle", "(click #go: locate: Could not find node with given id (-32000))"}},
		{"accessibility bus", fmt.Errorf("click Save: %w", dbus.Error{Name: "org.freedesktop.DBus.Error.NoReply", Body: []any{"Did not receive a reply"}}),
			[]string{"click Save failed: the application did not answer over the accessibility bus", "(click Save: Did not receive a reply)"}},
		{"window gone", fmt.Errorf("focus window 0x2a: %w", desktop.ErrWindowGone),
			[]string{"focus window 0x2a failed: the application's window no longer exists", "app.window"}},
		{"timeout", fmt.Errorf("query #x: %w", context.DeadlineExceeded),
			[]string{"query #x failed: it did not finish in time", "modal dialog"}},
		{"page not loaded", errors.New("navigate to http://127.0.0.1:9/: page load error net::ERR_CONNECTION_REFUSED"),
			[]string{"navigate to http://127.0.0.1:9/ failed: the browser could not load the page", "cdp_urls", "net::ERR_CONNECTION_REFUSED)"}},
		{"unknown key", fmt.Errorf("press ctrl+Retrun: %w", desktop.ErrUnknownKey),
			[]string{"press ctrl+Retrun failed: press_key does not know that key name", "try an X keysym name (Return, Tab"}},
		{"unknown", errors.New("frobnicate: the X server said BadValue"),
			[]string{"frobnicate failed: the driver refused the request (frobnicate: the X server said BadValue)"}},
		{"already worded", &atspi.NotFoundError{Name: "Save", Available: []string{"Open"}},
			[]string{`no control named "Save"; available: "Open"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := explainDriverError(tc.err)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("explainDriverError = %q, want %q", got, w)
				}
			}
			if tc.name == "already worded" && got != tc.err.Error() {
				t.Errorf("an author-facing error was rewritten: %q", got)
			}
		})
	}
}

// TestAuthorMistakesAreTestErrors checks the classification of commands the
// scenario names but a shell cannot run: they checked nothing about the
// application, so the run is test-error, while the same command failing on
// its own terms stays app-failed.
func TestAuthorMistakesAreTestErrors(t *testing.T) {
	t.Parallel()
	scriptNeed(t, "xterm")
	tests := []struct {
		name, scenario string
		verdict        events.Verdict
		outcome        events.Outcome
		reason         string
	}{
		{
			name: "declared check's program missing",
			scenario: "name: missing program" + scriptXtermPlain + `steps:
  - verify: {}
tools:
  verify: {run: shell, command: kasm-no-such-checker --all}
`,
			verdict: events.VerdictTestError, outcome: OutcomeStepError,
			reason: "verify could not run its command: the shell did not find the command (exit 127); check the command in tools.verify",
		},
		{
			name: "declared check's script not executable",
			scenario: "name: not executable" + scriptXtermPlain + `steps:
  - verify: {}
tools:
  verify: {run: shell, command: ./check.sh}
`,
			verdict: events.VerdictTestError, outcome: OutcomeStepError,
			reason: "could not execute it (exit 126)",
		},
		{
			name: "declared check fails on its own terms",
			scenario: "name: check fails" + scriptXtermPlain + `steps:
  - verify: {}
tools:
  verify: {run: shell, command: 'test -e never-written.txt'}
`,
			verdict: events.VerdictAppFailed, outcome: OutcomeStepFailed,
			reason: "verify exited with status 1",
		},
		{
			name: "app's program missing behind a shell",
			scenario: `name: app missing
app: {command: [sh, -c, 'exec kasm-no-such-app --flag']}
steps: [{observe_screen: {}}]
`,
			verdict: events.VerdictTestError, outcome: OutcomeLaunchFailed,
			reason: "the application could not start: the shell did not find the command (exit 127); check app.command",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := scriptRun(t, scriptRunSpec{scenario: tc.scenario, files: map[string]string{"check.sh": "#!/bin/sh\nexit 0\n"}})
			if o.res.Verdict != tc.verdict || o.res.Outcome != tc.outcome {
				t.Fatalf("verdict %s (%s), want %s (%s): %v", o.res.Verdict, o.res.Outcome, tc.verdict, tc.outcome, o.res.Reasons)
			}
			if r := strings.Join(o.res.Reasons, "\n"); !strings.Contains(r, tc.reason) {
				t.Errorf("reasons lack %q:\n%s", tc.reason, r)
			}
		})
	}
}

// TestFailedStepWithoutSessionSaysWhy kills the X server during a step: the
// failed step can have no screen, and its message says why.
func TestFailedStepWithoutSessionSaysWhy(t *testing.T) {
	t.Parallel()
	scriptNeed(t, "xterm")
	var killed atomic.Bool
	o := scriptRun(t, scriptRunSpec{
		scenario: `name: x killed` + scriptXtermPlain + `steps:
  - wait: 2
`,
		onEvent: scriptKillXvfbAtStep(1, &killed),
	})
	if !killed.Load() {
		t.Fatal("the test never killed the X server")
	}
	s := o.step(t, 1)
	if s.Status != events.StatusError || s.Screen != "" || !strings.Contains(s.Message, "no screen was captured: the X server went away") {
		t.Errorf("step 1: %s, screen %q, %q", s.Status, s.Screen, s.Message)
	}
}

// TestEarlyExitQuotesTheAppsLastWords: an application that exits before
// its window appears is app-failed, and the reason quotes its last lines of
// output, redacted, so the author sees why without opening app.log.
func TestEarlyExitQuotesTheAppsLastWords(t *testing.T) {
	t.Parallel()
	const secret = "kasm-early-exit-secret"
	o := scriptRun(t, scriptRunSpec{
		scenario: `name: early exit
app:
  command: [sh, -c, 'echo starting; echo "token ` + secret + ` refused" >&2; echo "cannot open the project file"; exit 4']
provides:
  token: {secret: {env: TOKEN}}
steps: [{observe_screen: {}}]
`,
		env: map[string]string{"TOKEN": secret},
	})
	if o.res.Verdict != events.VerdictAppFailed || o.res.Outcome != OutcomeAppExited {
		t.Fatalf("verdict %s (%s): %v", o.res.Verdict, o.res.Outcome, o.res.Reasons)
	}
	want := "exited with status 4 before its window appeared; its last output: starting | token [REDACTED] refused | cannot open the project file"
	if r := strings.Join(o.res.Reasons, "\n"); !strings.Contains(r, want) {
		t.Errorf("reasons lack %q:\n%s", want, r)
	}
}

// TestCrashQuotesTheAppsLastWords: a crash mid-run fails process_alive,
// whose evidence quotes what the application said last.
func TestCrashQuotesTheAppsLastWords(t *testing.T) {
	t.Parallel()
	scriptNeed(t, "xterm")
	o := scriptRun(t, scriptRunSpec{scenario: `name: crash
app:
  command: [sh, -c, 'xterm -class KasmLast -e sleep 3600 & sleep 1; echo "assertion failed: widget != NULL" >&2; kill -SEGV $$']
  window: {class: KasmLast}
steps:
  - wait: 3
`})
	if o.res.Verdict != events.VerdictAppFailed || o.res.Outcome != OutcomeAppExited {
		t.Fatalf("verdict %s (%s): %v", o.res.Verdict, o.res.Outcome, o.res.Reasons)
	}
	want := "killed by signal SEGV; its last output: assertion failed: widget != NULL"
	if ev := o.rep.Checks.Evidence["process_alive"]; !strings.Contains(ev, want) {
		t.Errorf("process_alive evidence %q, want %q", ev, want)
	}
}

// TestLostWindowNamesTheWindowsInstead: an application whose first window
// (a splash) closes and whose main window opens is reported as having lost
// its window, with the window it shows now and the app.window to follow it.
func TestLostWindowNamesTheWindowsInstead(t *testing.T) {
	t.Parallel()
	scriptNeed(t, "xterm")
	o := scriptRun(t, scriptRunSpec{scenario: `name: splash
app:
  # The main window opens before the splash closes, as real splashes do
  # (and so the X server cannot hand the splash's window ID to it).
  command: [sh, -c, 'xterm -class KasmSplash -geometry 20x4+0+0 -e sleep 2 & sleep 1; exec xterm -class KasmMain -title Main -e sleep 3600']
  window: {class: KasmSplash}
steps:
  - wait: 3
`})
	if o.res.Verdict != events.VerdictAppFailed || o.res.Outcome != OutcomeWindowLost {
		t.Fatalf("verdict %s (%s): %v", o.res.Verdict, o.res.Outcome, o.res.Reasons)
	}
	ev := o.rep.Checks.Evidence["window_present"]
	for _, w := range []string{`the application now shows 1 window: "Main" (class "KasmMain"`, "try app.window: {class: KasmMain}"} {
		if !strings.Contains(ev, w) {
			t.Errorf("window_present evidence %q lacks %q", ev, w)
		}
	}
}
