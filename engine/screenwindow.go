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
func (s *runState) screenWindow() *events.Rect {
	if s.env.desk == nil || !s.env.hasWin || s.env.web.PageIsTheScreen() {
		return nil
	}
	w, ok, err := s.env.desk.FocusedWindow()
	if err != nil || !ok || !s.isAppWindow(w) {
		w = s.currentWindow()
		if fresh, err := s.env.desk.Window(w.ID); err == nil {
			w = fresh
		} else if errors.Is(err, desktop.ErrWindowGone) {
			return nil
		}
	}
	sw, sh := s.env.desk.ScreenSize()
	r := events.Rect{X: w.X, Y: w.Y, W: w.Width, H: w.Height}
	if !w.Viewable || r.W <= 0 || r.H <= 0 || r.X >= sw || r.Y >= sh || r.X+r.W <= 0 || r.Y+r.H <= 0 {
		return nil
	}
	return &r
}
