package engine

import (
	"errors"

	"github.com/kasmrt/kasmrt/drivers/desktop"
	"github.com/kasmrt/kasmrt/engine/events"
)

// screenWindow is the application's window as a capture shows it, for the
// screen event: the app's window with the focus (a dialog it opened), else
// the window input goes to. nil when the run has no window yet, the
// capture is a page, or the window is off the screen.
func (e *environment) screenWindow() *events.Rect {
	if e.desk == nil || !e.hasWin || e.web.PageIsTheScreen() {
		return nil
	}
	w, ok, err := e.desk.FocusedWindow()
	if err != nil || !ok || !e.isAppWindow(w) {
		w = e.currentWindow()
		if fresh, err := e.desk.Window(w.ID); err == nil {
			w = fresh
		} else if errors.Is(err, desktop.ErrWindowGone) {
			return nil
		}
	}
	sw, sh := e.desk.ScreenSize()
	r := events.Rect{X: w.X, Y: w.Y, W: w.Width, H: w.Height}
	if !w.Viewable || r.W <= 0 || r.H <= 0 || r.X >= sw || r.Y >= sh || r.X+r.W <= 0 || r.Y+r.H <= 0 {
		return nil
	}
	return &r
}
