package atspi

import (
	"context"
	"errors"
	"time"
)

// Bounds of the calls the package makes on the bus. An application whose
// main loop is blocked never answers, and a call without a bound would
// hold the run with it; each public method takes the shorter of its
// caller's deadline and these.
const (
	// CallTimeout bounds one read of an application's accessibles: a walk
	// of its tree, the focused accessible, a control's place.
	CallTimeout = 10 * time.Second
	// ActionTimeout bounds an accessible action. A toolkit answers it at
	// once (GTK's bridge replies before it acts), so an action that takes
	// longer is stuck, not slow.
	ActionTimeout = 5 * time.Second
)

// ErrActionStuck means an accessible action did not return within its
// bound: the application may be frozen, and the action may or may not
// have happened.
var ErrActionStuck = errors.New("the application did not return from the accessibility action")

// bounded is ctx with a deadline at most d away.
func bounded(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, d)
}
