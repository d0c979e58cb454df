package engine

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/redact"
)

// scriptXterm is an xterm whose shell program first reports one mouse
// press (X10 mouse tracking writes ESC [ M b x y to the tty), then reads a
// line and writes it to typed.txt, so a test sees what the click and the
// keys delivered.
const scriptXterm = `
app:
  command: [xterm, -class, KasmScript, -geometry, 80x20+30+20, -e, sh, -c,
    'stty raw -echo; printf "\033[?9h"; head -c 6 > clicked.bin; printf "\033[?9l"; stty sane; read -r line; printf "%s\n" "$line" > typed.txt; exec sleep 3600']
  window: {class: KasmScript}
  startup_timeout_s: 10
`

func TestScriptHappyPathXterm(t *testing.T) {
	t.Parallel()
	scriptNeed(t, "xterm")
	o := scriptRun(t, scriptRunSpec{scenario: `name: happy path` + scriptXterm + `
provides:
  word: hello kasm
  junk: rubbish
steps:
  - observe_screen: {}
  - click: center
  - wait: 0.3
  - clicked: {}
  - type_text: {ref: junk}
  - press_key: ctrl+u
  - type_text: word
  - press_key: shift+a
  - press_key: Return
  - typed: {}
tools:
  clicked:
    description: the xterm reported a mouse press
    run: shell
    command: test -s clicked.bin
  typed:
    description: the line read is the word and a capital A
    run: shell
    command: 'cat typed.txt; grep -qx "hello kasmA" typed.txt'
    timeout_s: 5
`})
	o.want(t, events.VerdictPass, OutcomeCompleted, "the deterministic checks passed")
	if len(o.rep.Steps) != 10 {
		t.Fatalf("%d steps in report.json, want 10", len(o.rep.Steps))
	}
	for i, s := range o.rep.Steps {
		if s.N != i+1 || s.Status != events.StatusOK || s.Source != events.SourceScript {
			t.Errorf("step %d: n %d status %s source %s: %s", i+1, s.N, s.Status, s.Source, s.Message)
		}
		if s.Screen == "" {
			t.Errorf("step %d (%s) has no screen", i+1, s.Tool)
		}
	}
	if got := o.step(t, 7).Message; got != `typed the value "word" (10 characters)` {
		t.Errorf("type_text message %q", got)
	}
	if s := o.step(t, 2); s.Message != "clicked center" {
		t.Errorf("click message %q", s.Message)
	}
	if got := o.step(t, 10).Message; !strings.Contains(got, "hello kasmA") {
		t.Errorf("the shell tool's message %q lacks its stdout", got)
	}
	typed, err := os.ReadFile(filepath.Join(o.info.dir, "typed.txt"))
	if err != nil || string(typed) != "hello kasmA\n" {
		t.Errorf("typed.txt %q (%v), want the word, the chord's A and no junk", typed, err)
	}
	if c := o.rep.Checks; c.ProcessAlive == nil || !*c.ProcessAlive || c.WindowPresent == nil || !*c.WindowPresent || c.FatalPattern != nil {
		t.Errorf("checks %+v", c)
	}
	if o.raw["model_verdict"] != nil {
		t.Errorf("model_verdict %v, want null in a scripted run", o.raw["model_verdict"])
	}
	wantTools := "click,clicked,escalate,expect,observe_screen,press_key,record_verdict,type_text,typed,wait"
	if got := strings.Join(o.rep.Tools, ","); got != wantTools {
		t.Errorf("tools %s, want %s", got, wantTools)
	}
}

// A click on a click_targets point lands on xmessage's button, which makes
// xmessage exit with the button's status: the next check sees the process
// gone, so the verdict is app-failed with that exit as the evidence.
func TestScriptClickTargetEndsXmessage(t *testing.T) {
	t.Parallel()
	scriptNeed(t, "xmessage")
	o := scriptRun(t, scriptRunSpec{scenario: `name: xmessage button
app:
  command: [xmessage, -geometry, +100+60, -buttons, "ok:3", hi]
  window: {class: Xmessage}
click_targets:
  ok_button: {x: 16, y: 38, description: the ok button under the text}
steps:
  - observe_screen: {}
  - click: ok_button
  - wait: 1
`})
	o.want(t, events.VerdictAppFailed, OutcomeAppExited, "exited with status 3")
	win := o.window(t)
	// The message names the target; the point, which the model must never
	// see, is kept in the step's event.
	if s := o.step(t, 2); s.Status != events.StatusOK || s.Message != "clicked ok_button" {
		t.Errorf("click step %q (%s), want %q", s.Message, s.Status, "clicked ok_button")
	}
	var point *events.Point
	for _, e := range o.events {
		if e.Kind == events.KindStepEnded && e.Step == 2 {
			point = e.Point
		}
	}
	if want := (events.Point{X: win.X + 16, Y: win.Y + 38}); point == nil || *point != want {
		t.Errorf("click step's point %v, want %v: the target is placed relative to the window", point, want)
	}
	if len(o.rep.Steps) != 2 {
		t.Errorf("%d steps ran, want the run to stop after the click", len(o.rep.Steps))
	}
	if c := o.rep.Checks; c.ProcessAlive == nil || *c.ProcessAlive || !strings.Contains(c.Evidence["process_alive"], "exited with status 3") {
		t.Errorf("checks %+v", c)
	}
}

// scriptXtermPlain is an xterm that only waits, for runs whose steps do
// not need the app to read anything.
const scriptXtermPlain = `
app:
  command: [xterm, -class, KasmPlain, -geometry, 40x10+0+0, -e, sleep, "3600"]
  window: {class: KasmPlain}
  startup_timeout_s: 10
`

// TestScriptFaults runs one scenario per fault and checks that each ends
// with the right verdict, outcome and evidence, a complete report (checked
// by scriptRun) and no process left behind.
func TestScriptFaults(t *testing.T) {
	t.Parallel()
	scriptNeed(t, "xterm")
	tests := []struct {
		name     string
		scenario string
		env      map[string]string
		verdict  events.Verdict
		outcome  events.Outcome
		reasons  []string
		more     func(t *testing.T, o scriptOutcome)
	}{
		{
			name: "app command not found",
			scenario: `name: not found
app: {command: [kasm-no-such-app, --flag]}
steps: [{observe_screen: {}}]
`,
			verdict: events.VerdictTestError, outcome: OutcomeLaunchFailed, reasons: []string{"kasm-no-such-app", "not found"},
			more: func(t *testing.T, o scriptOutcome) {
				if len(o.rep.Steps) != 0 {
					t.Errorf("%d steps ran", len(o.rep.Steps))
				}
			},
		},
		{
			name: "app exits immediately",
			scenario: `name: exits
app: {command: [sh, -c, 'echo bye from the app; exit 4']}
steps: [{observe_screen: {}}]
`,
			verdict: events.VerdictAppFailed, outcome: OutcomeAppExited, reasons: []string{"exited with status 4", "before its window appeared"},
			more: func(t *testing.T, o scriptOutcome) {
				if !strings.Contains(o.appLog, "bye from the app") {
					t.Errorf("app.log %q lacks the app's output", o.appLog)
				}
				if c := o.rep.Checks; c.ProcessAlive == nil || *c.ProcessAlive {
					t.Errorf("checks.process_alive %v, want false", c.ProcessAlive)
				}
			},
		},
		{
			name: "app crashes mid-run",
			scenario: `name: crash
app:
  command: [sh, -c, 'xterm -class KasmCrash -e sleep 3600 & sleep 1; kill -SEGV $$']
  window: {class: KasmCrash}
steps:
  - observe_screen: {}
  - wait: 2
  - observe_screen: {}
`,
			verdict: events.VerdictAppFailed, outcome: OutcomeAppExited, reasons: []string{"killed by signal SEGV"},
			more: func(t *testing.T, o scriptOutcome) {
				if len(o.rep.Steps) != 2 {
					t.Errorf("%d steps ran, want the run to stop after the wait", len(o.rep.Steps))
				}
				if ev := o.rep.Checks.Evidence["process_alive"]; !strings.Contains(ev, "killed by signal SEGV") {
					t.Errorf("process_alive evidence %q", ev)
				}
			},
		},
		{
			name: "window never appears",
			scenario: `name: no window
app: {command: [sleep, "30"], startup_timeout_s: 1}
steps: [{observe_screen: {}}]
`,
			verdict: events.VerdictAppFailed, outcome: OutcomeStartup, reasons: []string{"appeared within 1s"},
		},
		{
			name: "fatal pattern in the app's output",
			scenario: `name: fatal log
app:
  command: [sh, -c, 'xterm -class KasmFatal -e sleep 3600 & sleep 0.5; echo "all fine"; echo "FATAL: the flux capacitor melted" >&2; wait']
  window: {class: KasmFatal}
  fatal_patterns: ["^FATAL:"]
steps:
  - wait: 1.5
  - observe_screen: {}
`,
			verdict: events.VerdictAppFailed, outcome: OutcomeFatalLog, reasons: []string{"FATAL: the flux capacitor melted"},
			more: func(t *testing.T, o scriptOutcome) {
				if fp := o.rep.Checks.FatalPattern; fp == nil || *fp != "FATAL: the flux capacitor melted" {
					t.Errorf("checks.fatal_pattern %v, want the matched line", fp)
				}
				if !strings.Contains(o.appLog, "all fine\n") || !strings.Contains(o.appLog, "FATAL: the flux") {
					t.Errorf("app.log %q", o.appLog)
				}
			},
		},
		{
			// The runtime never remaps a spare keycode for press_key.
			name: "key the layout does not map",
			scenario: `name: key not on the layout` + scriptXtermPlain + `steps:
  - observe_screen: {}
  - press_key: "€"
  - observe_screen: {}
`,
			verdict: events.VerdictTestError, outcome: OutcomeStepError, reasons: []string{"step 2 (press_key)", `the key "€"`, "keyboard layout"},
			more: func(t *testing.T, o scriptOutcome) {
				if s := o.step(t, 2); s.Status != events.StatusError || len(o.rep.Steps) != 2 {
					t.Errorf("press_key step %s: %q; %d steps ran", s.Status, s.Message, len(o.rep.Steps))
				}
			},
		},
		{
			name: "declared shell tool fails",
			scenario: `name: tool fails` + scriptXtermPlain + `steps:
  - observe_screen: {}
  - verify: {}
  - observe_screen: {}
tools:
  verify:
    description: a check that fails
    run: shell
    command: 'echo checking; echo "no greeting found" >&2; exit 1'
`,
			verdict: events.VerdictAppFailed, outcome: OutcomeStepFailed, reasons: []string{"step 2 (verify) failed", "exited with status 1", "no greeting found"},
		},
		{
			name: "declared shell tool hangs",
			scenario: `name: tool hangs` + scriptXtermPlain + `steps:
  - hang: {}
tools:
  hang:
    description: a check that never ends
    run: shell
    command: 'echo $$ > hang.pid; exec sleep 30'
    timeout_s: 1
`,
			verdict: events.VerdictAppFailed, outcome: OutcomeStepFailed, reasons: []string{"timed out after 1s and was killed"},
			more: func(t *testing.T, o scriptOutcome) {
				if d := o.step(t, 1).DurationMS; d < 900 || d > 10000 {
					t.Errorf("the hanging tool took %d ms, want about its 1 s timeout", d)
				}
				scriptGone(t, filepath.Join(o.info.dir, "hang.pid"))
			},
		},
		{
			name: "declared shell tool forks a child",
			scenario: `name: tool forks` + scriptXtermPlain + `steps:
  - fork: {}
  - observe_screen: {}
tools:
  fork:
    description: a check that leaves a child behind
    run: shell
    command: 'sleep 300 & echo $! > child.pid; echo forked'
`,
			verdict: events.VerdictPass, outcome: OutcomeCompleted,
			more: func(t *testing.T, o scriptOutcome) {
				if m := o.step(t, 1).Message; m != "fork succeeded: forked" {
					t.Errorf("message %q", m)
				}
				scriptGone(t, filepath.Join(o.info.dir, "child.pid"))
			},
		},
		{
			name: "declared shell tool floods stdout",
			scenario: `name: tool floods` + scriptXtermPlain + `steps:
  - flood: {}
tools:
  flood:
    description: a check that prints far too much
    run: shell
    command: 'head -c 20000000 /dev/zero | tr "\0" x; echo; echo END; head -c 5000000 /dev/zero >&2'
    timeout_s: 60
`,
			verdict: events.VerdictPass, outcome: OutcomeCompleted,
			more: func(t *testing.T, o scriptOutcome) {
				m := o.step(t, 1).Message
				// The retained stdout is the first 64 KiB; the message shows
				// its end and says it was cut.
				if !strings.HasSuffix(m, "xxx [stdout cut at 65536 bytes]") || len(m) > 4096 {
					t.Errorf("message of %d bytes ending %q: want a short tail that says the output was cut", len(m), m[max(0, len(m)-40):])
				}
				if st, err := os.Stat(filepath.Join(o.info.reportDir, "events.jsonl")); err != nil || st.Size() > 1<<20 {
					t.Errorf("events.jsonl: %v bytes (%v): the flood was not capped", st.Size(), err)
				}
			},
		},
		{
			// The deadline rule itself, at startup and mid-step, is
			// TestRulesScriptedDeadline's (on the double); here a real app
			// and X server are cut short and must be left healthy, then
			// stopped.
			name: "deadline hit mid-step",
			scenario: `name: deadline` + scriptXtermPlain + `steps:
  - observe_screen: {}
  - wait: 30
  - observe_screen: {}
`,
			// 20 s leaves the launch (Xvfb, the window manager, the app's
			// bus and window) the 13 s of work before the reserve even on a
			// machine loaded twenty times over, where it takes a few.
			env:     map[string]string{"KASM_RUNTIME_DEADLINE_S": "20"},
			verdict: events.VerdictTestError, outcome: OutcomeDeadline, reasons: []string{"the 20s deadline was reached"},
			more: func(t *testing.T, o scriptOutcome) {
				if len(o.rep.Steps) != 2 {
					t.Fatalf("%d steps ran, want 2", len(o.rep.Steps))
				}
				if s := o.step(t, 2); s.Status != events.StatusError || s.DurationMS > 20000 {
					t.Errorf("the cut wait: %s after %d ms: %q", s.Status, s.DurationMS, s.Message)
				}
				scriptHealthyAtEnd(t, o)
				if o.rep.Timing.DeadlineS != 20 {
					t.Errorf("timing.deadline_s %v", o.rep.Timing.DeadlineS)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := scriptRun(t, scriptRunSpec{scenario: tt.scenario, env: tt.env})
			o.want(t, tt.verdict, tt.outcome, tt.reasons...)
			if tt.more != nil {
				tt.more(t, o)
			}
		})
	}
}

// Killing the X server during a step ends the run with test-error
// session-lost, and the report is still complete.
func TestScriptXServerKilledMidRun(t *testing.T) {
	t.Parallel()
	scriptNeed(t, "xterm")
	var killed atomic.Bool
	o := scriptRun(t, scriptRunSpec{
		scenario: `name: x killed` + scriptXtermPlain + `steps:
  - observe_screen: {}
  - wait: 2
  - observe_screen: {}
`,
		onEvent: scriptKillXvfbAtStep(2, &killed),
	})
	if !killed.Load() {
		t.Fatal("the test never killed the X server")
	}
	o.want(t, events.VerdictTestError, OutcomeSessionLost, "the X server went away")
	if len(o.rep.Steps) != 2 {
		t.Errorf("%d steps ran, want the run to stop at the step the server died in", len(o.rep.Steps))
	}
	if s := o.step(t, 2); s.Status != events.StatusError {
		t.Errorf("the step during which the server died: %s %q", s.Status, s.Message)
	}
}

// Cancelling Run's context (Ctrl-C) mid-step ends the run at once with
// test-error interrupted and a complete report, whatever the step is.
func TestScriptInterruptedMidStep(t *testing.T) {
	t.Parallel()
	scriptNeed(t, "xterm")
	for _, step := range []string{"wait: 20", "slow: {}"} {
		t.Run(strings.SplitN(step, ":", 2)[0], func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var cancelled time.Time
			var mu sync.Mutex
			start := time.Now()
			o := scriptRun(t, scriptRunSpec{
				ctx: ctx,
				scenario: `name: interrupted` + scriptXtermPlain + `steps:
  - observe_screen: {}
  - ` + step + `
  - observe_screen: {}
tools:
  slow:
    description: a check that takes its time
    run: shell
    command: 'echo $$ > slow.pid; exec sleep 30'
`,
				onEvent: func(_ scriptRunInfo, e events.Event) {
					if e.Kind == events.KindStepStarted && e.Step == 2 {
						time.AfterFunc(300*time.Millisecond, func() {
							mu.Lock()
							cancelled = time.Now()
							mu.Unlock()
							cancel()
						})
					}
				},
			})
			o.want(t, events.VerdictTestError, OutcomeInterrupted, "interrupted")
			if len(o.rep.Steps) != 2 {
				t.Fatalf("%d steps ran, want 2", len(o.rep.Steps))
			}
			if s := o.step(t, 2); s.Status != events.StatusError || s.DurationMS > 5000 || !strings.Contains(s.Message, "interrupted") {
				t.Errorf("the interrupted step: %s after %d ms: %q", s.Status, s.DurationMS, s.Message)
			}
			scriptHealthyAtEnd(t, o)
			mu.Lock()
			defer mu.Unlock()
			if cancelled.IsZero() {
				t.Fatal("never cancelled")
			}
			// The whole run, report included, ends soon after the signal.
			if d := time.Since(start); d > 15*time.Second {
				t.Errorf("the run took %v", d)
			}
			if strings.HasPrefix(step, "slow") {
				scriptGone(t, filepath.Join(o.info.dir, "slow.pid"))
			}
		})
	}
}

// Ctrl-C while the runtime still waits for the app's window ends the run
// as interrupted, not as a fault or a startup timeout.
func TestScriptInterruptedAtStartup(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o := scriptRun(t, scriptRunSpec{
		ctx: ctx,
		scenario: `name: interrupted at startup
app: {command: [sleep, "30"], startup_timeout_s: 20}
steps: [{observe_screen: {}}]
`,
		onEvent: func(_ scriptRunInfo, e events.Event) {
			if e.Kind == events.KindAppLaunched {
				time.AfterFunc(300*time.Millisecond, cancel)
			}
		},
	})
	o.want(t, events.VerdictTestError, OutcomeInterrupted, "interrupted")
	if len(o.rep.Steps) != 0 {
		t.Errorf("%d steps ran", len(o.rep.Steps))
	}
}

// Secrets typed into the app never appear in anything the run writes,
// even when the app prints them and a shell tool reads them back.
func TestScriptSecretsNeverWritten(t *testing.T) {
	t.Parallel()
	scriptNeed(t, "xterm")
	const envSecret = "Tr0ub4dor&3 zz!"
	const fileSecret = "4921-xyzzy"
	app := `xterm -class KasmSecret -geometry 60x10+0+0 -e sh ./reader.sh &
while [ ! -s typed.txt ]; do sleep 0.1; done
echo "app saw: $(cat typed.txt | tr '\n' ' ')"
echo "as a URL: https://example.test/login?pw=` + url.QueryEscape(envSecret) + `&p=` + url.PathEscape(envSecret) + `"
echo "on stderr: ` + fileSecret + `" >&2
wait
`
	// The prompt does not echo, as a password prompt would not: a
	// terminal showing a secret is a concern of its own.
	reader := `stty -echo
IFS= read -r a
IFS= read -r b
printf '%s\n%s\n' "$a" "$b" > typed.tmp && mv typed.tmp typed.txt
exec sleep 3600
`
	var sunk strings.Builder
	o := scriptRun(t, scriptRunSpec{
		files: map[string]string{"app.sh": app, "reader.sh": reader, "pin.txt": fileSecret + "\n"},
		env:   map[string]string{"KASM_TEST_PASSWORD": envSecret},
		scenario: `name: secrets
app:
  command: [sh, app.sh]
  window: {class: KasmSecret}
  startup_timeout_s: 10
provides:
  password: {secret: {env: KASM_TEST_PASSWORD}}
  pin: {secret: {file: pin.txt}}
steps:
  - observe_screen: {}
  - type_text: {ref: password}
  - press_key: Return
  - type_text: pin
  - press_key: Return
  - wait: 1
  - read_back: {}
  - observe_screen: {}
tools:
  read_back:
    description: print what the app read
    run: shell
    command: 'cat typed.txt; echo "pin was $(cat pin.txt)" >&2'
`,
		onEvent: func(_ scriptRunInfo, e events.Event) {
			b, _ := json.Marshal(e)
			sunk.Write(b)
		},
	})
	o.want(t, events.VerdictPass, OutcomeCompleted)
	typed, err := os.ReadFile(filepath.Join(o.info.dir, "typed.txt"))
	if err != nil || string(typed) != envSecret+"\n"+fileSecret+"\n" {
		t.Errorf("typed.txt: %v; the secrets did not reach the app intact", err)
	}
	if !strings.Contains(o.appLog, "app saw: "+redact.Mask+" "+redact.Mask) || !strings.Contains(o.appLog, "on stderr: "+redact.Mask) {
		t.Errorf("app.log %q: want the app's lines with the secrets masked", o.appLog)
	}
	for n, want := range map[int]string{
		2: `typed the secret value "password" (15 characters)`,
		4: `typed the secret value "pin" (10 characters)`,
		7: "read_back succeeded: " + redact.Mask + "\n" + redact.Mask,
	} {
		if got := o.step(t, n).Message; got != want {
			t.Errorf("step %d message %q, want %q", n, got, want)
		}
	}
	forms := []string{envSecret, fileSecret, url.QueryEscape(envSecret), url.PathEscape(envSecret),
		base64.StdEncoding.EncodeToString([]byte(envSecret))}
	written := map[string]string{"the sink's events": sunk.String()}
	for _, name := range []string{"report.json", "events.jsonl", "app.log"} {
		b, err := os.ReadFile(filepath.Join(o.info.reportDir, name))
		if err != nil {
			t.Fatal(err)
		}
		written[name] = string(b)
	}
	for where, text := range written {
		for _, f := range forms {
			if strings.Contains(text, f) {
				t.Errorf("%s contains a secret (form %d of %d)", where, slices.Index(forms, f)+1, len(forms))
			}
		}
	}
}

// BenchmarkScriptRun measures a whole scripted run end to end: Xvfb up,
// xterm launched and found, three steps with their settled captures, the
// final checks, everything stopped and the report written. "desktop" is
// the default session (window manager, isolated home and session bus);
// "bare" turns both off, to show what they cost.
func BenchmarkScriptRun(b *testing.B) {
	for _, bin := range []string{"Xvfb", "xterm"} {
		if _, err := exec.LookPath(bin); err != nil {
			b.Skipf("%s is not installed", bin)
		}
	}
	for _, c := range []struct{ name, operator string }{
		{"desktop", ""},
		{"bare", "session:\n  window_manager: none\n  isolate: false\n"},
	} {
		b.Run(c.name, func(b *testing.B) {
			dir := b.TempDir()
			scenario := `name: bench` + scriptXtermPlain + `steps:
  - observe_screen: {}
  - press_key: a
  - observe_screen: {}
`
			files := loadRunFiles(b, dir, scenario, c.operator, nil)
			b.ResetTimer()
			for i := range b.N {
				r, err := New(files, Options{ReportDir: filepath.Join(dir, fmt.Sprintf("report-%d", i)), Display: "-",
					Getenv: func(string) string { return "" }})
				if err != nil {
					b.Fatal(err)
				}
				res, err := r.Run(context.Background())
				if err != nil || res.Verdict != events.VerdictPass {
					b.Fatalf("run %d: %v %+v", i, err, res)
				}
			}
		})
	}
}
