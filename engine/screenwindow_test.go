package engine

import (
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
)

// TestScreenEventsCarryTheWindow checks that each screen event names the
// application's window on its capture: the main window first, then the
// dialog the application opened and that has the focus, though input
// was never switched to it, also on the final capture.
func TestScreenEventsCarryTheWindow(t *testing.T) {
	t.Parallel()
	scriptNeed(t, "xterm", "zenity", "openbox")
	o := scriptRun(t, scriptRunSpec{scenario: `name: screen windows
app:
  command: [xterm, -class, KasmMain, -geometry, 60x12, -e, sh, -c,
    'read go; zenity --entry --title="Kasm Prompt" --text=Name > entry.txt; exec sleep 3600']
  window: {class: KasmMain}
steps:
  - observe_screen: {}
  - press_key: Return
  - wait: 3
  - observe_screen: {}
`})
	o.want(t, events.VerdictPass, OutcomeCompleted, "")
	var launched, final *events.Rect
	var windows []*events.Rect
	for _, e := range o.events {
		switch e.Kind {
		case events.KindAppWindow:
			launched = e.Box
		case events.KindScreen:
			d, _ := e.Data.(events.ScreenCaptured)
			windows = append(windows, d.Window)
		case events.KindFinal:
			d, _ := e.Data.(events.FinalCapture)
			final = d.Window
		}
	}
	if launched == nil || len(windows) < 2 {
		t.Fatalf("app.window %v, screen windows %v", launched, windows)
	}
	first, last := windows[0], windows[len(windows)-1]
	if first == nil || first.W != launched.W || first.H != launched.H {
		t.Errorf("the first capture's window is %+v, want the main window's size %+v", first, launched)
	}
	if last == nil || *last == *first || last.W <= 0 || last.H <= 0 {
		t.Errorf("the last capture's window is %+v, want the dialog, not the main window %+v", last, first)
	}
	if final == nil || last == nil || *final != *last {
		t.Errorf("the final capture's window is %+v, want the dialog's %+v", final, last)
	}
}
