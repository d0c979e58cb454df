package engine

import (
	"image"

	"github.com/kasmrt/kasmrt/drivers/x11"
)

// WindowAt is the topmost viewable window of the double holding the point,
// as the X server answers for a pointer there.
func (f *fakeMachine) WindowAt(x, y int) (x11.Window, bool, error) {
	ws, err := f.Windows()
	if err != nil {
		return x11.Window{}, false, err
	}
	for i := len(ws) - 1; i >= 0; i-- {
		w := ws[i]
		if w.Viewable && image.Pt(x, y).In(image.Rect(w.X, w.Y, w.X+w.Width, w.Y+w.Height)) {
			return w, true, nil
		}
	}
	return x11.Window{}, false, nil
}
