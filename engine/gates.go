package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/kasmrt/kasmrt/engine/capacity"
	"github.com/kasmrt/kasmrt/engine/events"
)

// gate returns the wait for a slot of a capacity group before a request
// made for what ("model" or a declared tool's name). A wait shows as
// capacity.wait and capacity.acquired events. It runs under the run's
// context, so waiting uses the deadline; it is no model call, so it uses
// no model budget.
func (a *actor) gate(what, group string) func(ctx context.Context) (func(), error) {
	w := capacity.Waiter{
		Waiting: func(group string, limit int) {
			a.publish(events.Event{
				Message: fmt.Sprintf("%s waits for capacity group %s: its %d request(s) at once are in flight (services.%s.max_concurrent)", what, group, limit, group),
				Data:    events.CapacityWait{Group: group, Limit: limit, For: what},
			})
		},
		Acquired: func(group string, limit int, waited time.Duration) {
			a.publish(events.Event{DurationMS: waited.Milliseconds(),
				Message: fmt.Sprintf("%s has a slot of capacity group %s after waiting %s", what, group, waited.Round(time.Millisecond)),
				Data:    events.CapacityAcquired{Group: group, Limit: limit, For: what, WaitedMS: waited.Milliseconds()}})
		},
	}
	return func(ctx context.Context) (func(), error) {
		return a.r.opts.Gates.Acquire(ctx, group, w)
	}
}
