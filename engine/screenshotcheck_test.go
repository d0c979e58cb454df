package engine

import (
	"path/filepath"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
)

// A terminal that echoes a typed secret: the baseline --update-baselines
// writes beside the scenario, a file a team commits, has the secret
// blacked out as every kept screen has, while the name typed beside it
// stays legible, so the check can see.
func TestBaselineNeverHoldsASecret(t *testing.T) {
	t.Parallel()
	scriptNeed(t, "xterm", "tesseract")
	o := scriptRun(t, scriptRunSpec{
		scenario: `name: echoing terminal
app:
  command: [xterm, -geometry, 60x12+20+20, -e, sh, -c, 'printf "name: "; read -r n; printf "password: "; read -r p; echo "welcome $n"; echo "your password is $p"; sleep 3600']
provides:
  visitor: Ada Lovelace
  password: {secret: {env: TERM_PASSWORD}}
steps:
  - type_text: {ref: visitor}
  - press_key: Return
  - type_text: {ref: password}
  - press_key: Return
  - expect:
      screen_text: {contains: welcome Ada Lovelace}
      screenshot: {name: terminal}
`,
		env:             map[string]string{"TERM_PASSWORD": maskSecret},
		updateBaselines: true,
	})
	o.want(t, events.VerdictPassConcerns, OutcomeCompleted)
	if len(o.rep.Baselines) != 1 || o.rep.Baselines[0].Result != events.BaselineWritten {
		t.Fatalf("baselines %+v, want terminal written", o.rep.Baselines)
	}
	img := readScreen(t, filepath.Join(o.info.dir, "scenario.baselines", "terminal.png"))
	read := maskRead(t, newMaskReader(), img)
	if maskTrace(read, maskSecret) {
		t.Errorf("the baseline shows the secret: %q", read)
	}
	if !maskTrace(read, "Ada Lovelace") {
		t.Errorf("the baseline does not show the typed name (read %q): the check cannot read this terminal", read)
	}
}
