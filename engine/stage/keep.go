package stage

import (
	"context"
	"time"
)

// Keepable is a desktop session a suite worker keeps between its runs:
// starting one is most of a short run's fixed cost, so between runs it is
// reset to what it held when new instead of stopped (StartKeepable).
type Keepable interface {
	DisplayServer
	// WindowManagerExited reports whether the window manager the session
	// started has exited: a display without it is not as a new one.
	WindowManagerExited() bool
	// Snapshot records what the display holds before any application, for
	// Reset to return to.
	Snapshot() error
	// Reset makes the display look to its next application as a new one
	// does (every client but the window manager disconnected, the pointer
	// centred), waiting until timeout for the clients to go. It fails
	// without resetting when the screen is no longer width x height (zero
	// width: not checked).
	Reset(ctx context.Context, timeout time.Duration, width, height int) error
}
