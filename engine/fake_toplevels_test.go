package engine

import (
	"context"
	"slices"

	"github.com/kasmrt/kasmrt/drivers/desktop"
)

// The double's other windows: dialogs the application opens, windows of
// other clients. Without any, the double has only the application's
// window and finds it whatever is asked.

// hasOthers reports whether the double has windows besides the app's.
func (f *fakeMachine) hasOthers() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.others) > 0
}

// otherWindows returns the other windows, bottom of the stack first.
func (f *fakeMachine) otherWindows() []desktop.Window {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.others)
}

// other returns the other window with this id.
func (f *fakeMachine) other(id uint32) (desktop.Window, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := slices.IndexFunc(f.others, func(w desktop.Window) bool { return w.ID == id })
	if i < 0 {
		return desktop.Window{}, false
	}
	return f.others[i], true
}

// changeOther changes the other window with this id (unmaps it, say).
func (f *fakeMachine) changeOther(id uint32, change func(w *desktop.Window)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if i := slices.IndexFunc(f.others, func(w desktop.Window) bool { return w.ID == id }); i >= 0 {
		change(&f.others[i])
	}
}

// focusedOther returns the other window with the focus, if one has it;
// once it is unmapped the focus is back on the application's window, as a
// window manager gives it back.
func (f *fakeMachine) focusedOther() (desktop.Window, bool) {
	f.mu.Lock()
	id := f.focus
	f.mu.Unlock()
	if id == 0 {
		return desktop.Window{}, false
	}
	w, found := f.other(id)
	return w, found && w.Viewable
}

// focusOn gives a window the focus and records it.
func (f *fakeMachine) focusOn(id uint32) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gaveFocus = append(f.gaveFocus, id)
	f.focus = id
	if id == fakeWindowID {
		f.focus = 0
	}
	return nil
}

// focusCalls returns the windows given the focus so far.
func (f *fakeMachine) focusCalls() []uint32 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.gaveFocus)
}

// findAmong finds the first window, bottom of the stack first, that m
// matches, or waits until ctx ends, as the driver's FindWindow does.
func (f *fakeMachine) findAmong(ctx context.Context, m desktop.WindowMatch) (desktop.Window, error) {
	ws, _ := f.Windows()
	for _, w := range ws {
		if w.Popup == "" && m.Matches(w) {
			return w, nil
		}
	}
	<-ctx.Done()
	return desktop.Window{}, desktop.ErrNoWindow
}
