package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
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
		if s.N != i+1 || s.Status != events.StatusOK || s.Source != "script" {
			t.Errorf("step %d: n %d status %s source %s: %s", i+1, s.N, s.Status, s.Source, s.Message)
		}
		if s.Screen == "" {
			t.Errorf("step %d (%s) has no screen", i+1, s.Tool)
		}
	}
	if got := o.step(t, 7).Message; got != `typed the value "word" (10 characters)` {
		t.Errorf("type_text message %q", got)
	}
	if s := o.step(t, 2); !strings.HasPrefix(s.Message, "clicked center at (") {
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
	wantTools := "clicked,click,observe_screen,press_key,type_text,typed,wait"
	if got := strings.Join(o.rep.Tools, ","); !strings.Contains(got, "click,clicked") && got != wantTools {
		t.Logf("tools %s", got)
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
	want := fmt.Sprintf("clicked ok_button at (%d, %d)", win.X+16, win.Y+38)
	if s := o.step(t, 2); s.Status != events.StatusOK || s.Message != want {
		t.Errorf("click step %q (%s), want %q: the target is placed relative to the window", s.Message, s.Status, want)
	}
	if len(o.rep.Steps) != 2 {
		t.Errorf("%d steps ran, want the run to stop after the click", len(o.rep.Steps))
	}
	if c := o.rep.Checks; c.ProcessAlive == nil || *c.ProcessAlive || !strings.Contains(c.Evidence["process_alive"], "exited with status 3") {
		t.Errorf("checks %+v", c)
	}
}
