package stage

import (
	"context"
	"image"

	"github.com/kasmrt/kasmrt/drivers/desktop"
)

// pointerMover is a desktop that can move the pointer without clicking.
type pointerMover interface {
	MovePointer(ctx context.Context, x, y int) error
}

// parkPointer moves the pointer where a person's rests while an
// application starts: off its window, so no button under the pointer is
// hovered and no tooltip covers the first screen. Before the window is
// known (w nil) that is the screen's bottom-right corner; once it is, the
// first corner of the screen the window does not cover, in the order
// bottom-right, bottom-left, top-right, top-left. A window covering every
// corner leaves the pointer where it is.
func (st *Stage) parkPointer(ctx context.Context, w *desktop.Window) {
	m, ok := st.Desk.(pointerMover)
	if !ok {
		return
	}
	sw, sh := st.Desk.ScreenSize()
	corners := []image.Point{{sw - 1, sh - 1}, {0, sh - 1}, {sw - 1, 0}, {0, 0}}
	for _, p := range corners {
		if w != nil && p.In(image.Rect(w.X, w.Y, w.X+w.Width, w.Y+w.Height)) {
			continue
		}
		if err := m.MovePointer(ctx, p.X, p.Y); err != nil && ctx.Err() == nil {
			st.rep.Logf("park the pointer off the application: %v", err)
		}
		return
	}
}
