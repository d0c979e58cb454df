package engine

import (
	"context"
	"fmt"
	"image"

	"github.com/kasmrt/kasmrt/drivers/desktop"
)

// WindowAt is the topmost viewable window of the double holding the point,
// as the X server answers for a pointer there.
func (f *fakeMachine) WindowAt(x, y int) (desktop.Hit, bool, error) {
	ws, err := f.Windows()
	if err != nil {
		return desktop.Hit{}, false, err
	}
	for i := len(ws) - 1; i >= 0; i-- {
		w := ws[i]
		if w.Viewable && image.Pt(x, y).In(image.Rect(w.X, w.Y, w.X+w.Width, w.Y+w.Height)) {
			return desktop.Hit{Window: w}, true, nil
		}
	}
	return desktop.Hit{}, false, nil
}

// Ping answers at once while the double's application answers, and never
// once it hangs; without pings, its window takes no part in the protocol.
func (f *fakeMachine) Ping(ctx context.Context, id uint32) error {
	f.mu.Lock()
	pings, hung := f.pings, f.hung
	f.mu.Unlock()
	if !pings {
		return fmt.Errorf("ping window 0x%x: %w", id, desktop.ErrPingUnsupported)
	}
	if !hung {
		if f.onPing != nil {
			f.onPing(f)
		}
		return nil
	}
	<-ctx.Done()
	return fmt.Errorf("ping window 0x%x: no answer: %w", id, ctx.Err())
}

// hangOn makes the double's application stop answering after the input
// recorded as input ("click 80,215").
func (f *fakeMachine) hangOn(input string) {
	f.on = func(f *fakeMachine, got string) {
		if got == input {
			f.mu.Lock()
			f.hung = true
			f.mu.Unlock()
		}
	}
}
