package engine

import (
	"context"
	"time"

	"github.com/kasmrt/kasmrt/drivers/desktop"
)

// settleOptions is how the run waits for a still screen
// (runner.settle_*). After an input action it also waits, for up to
// runner.settle_response_ms, for the app to start drawing its answer, so
// a late redraw is captured rather than the screen before it.
func (e *environment) settleOptions(afterInput bool) desktop.SettleOptions {
	op := e.files.Operator.Runner
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	o := desktop.SettleOptions{
		Interval: ms(op.SettleIntervalMS),
		Cap:      ms(op.SettleCapMS),
		Quiet:    ms(op.SettleQuietMS),
	}
	if afterInput {
		o.Response = ms(op.SettleResponseMS)
	}
	return o
}

// settledAfterInput captures the screen once it settles after an input
// action and attaches it to r.
func (a *actor) settledAfterInput(ctx context.Context, r result) result {
	opts := a.env.settleOptions(true)
	r = a.settledWith(ctx, r, opts)
	r.response = opts.Response
	return r
}
