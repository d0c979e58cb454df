package engine

import (
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
)

// TestFocusNamedAfterADialogCloses opens and closes Mousepad's Save As and
// Open dialogs: the windows a step names (the observation's result, which
// the Environment Update repeats) are the ones on screen once the action
// settled, so the closed dialog is gone and the main window has the focus
// again.
func TestFocusNamedAfterADialogCloses(t *testing.T) {
	t.Parallel()
	scriptNeed(t, "mousepad", "dbus-daemon")
	o := scriptRun(t, scriptRunSpec{scenario: `name: focus after a dialog closes
app:
  command: [mousepad, --disable-server]
  env: {GSETTINGS_BACKEND: memory}
  window: {class: Mousepad}
  startup_timeout_s: 20
steps:
  - observe_screen: {}
  - press_key: ctrl+s
  - observe_screen: {}
  - press_key: Escape
  - observe_screen: {}
  - press_key: ctrl+o
  - observe_screen: {}
  - press_key: Escape
  - observe_screen: {}
`})
	o.want(t, events.VerdictPass, OutcomeCompleted, "")
	const main = `"Untitled 1 - Mousepad" (focused)`
	wants := map[int]string{1: main, 3: `"Save As" (focused)`, 5: main, 7: `"Open File" (focused)`, 9: main}
	for n, want := range wants {
		s := o.step(t, n)
		if !strings.Contains(s.Message, "windows: "+want) {
			t.Errorf("step %d says %q, want the windows to begin with %s", n, s.Message, want)
		}
	}
	for _, n := range []int{5, 9} {
		if msg := o.step(t, n).Message; strings.Contains(msg, "Save As") || strings.Contains(msg, "Open File") {
			t.Errorf("step %d still names a closed dialog: %q", n, msg)
		}
	}
}
