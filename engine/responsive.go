package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kasmrt/kasmrt/drivers/desktop"
	"github.com/kasmrt/kasmrt/drivers/proc"
	"github.com/kasmrt/kasmrt/engine/events"
)

// OutcomeAppHung ends a run whose application stopped answering: the
// app_responsive check failed.
const OutcomeAppHung = "app-hung"

// checkAppResponsive is the name of the deterministic check that the
// application still answers.
const checkAppResponsive = "app_responsive"

// appPinger asks a window's client whether its event loop still runs
// (the X11 driver's Conn.Ping).
type appPinger interface {
	Ping(ctx context.Context, id uint32) error
}

// pingRound is how long one ping waits before the runtime asks again,
// of the windows there are then: a dialog that closed while it was asked
// never answers, though the application goes on.
const pingRound = time.Second

// checkResponsive asks the application, after an action, whether it still
// answers: its windows that take part in _NET_WM_PING, the current one
// first, asked again every pingRound, until one answers or
// app.hang_timeout_s has passed without an answer. A toolkit answers from
// its main loop, so a handler that blocks it, or a nested loop that
// deadlocked, leaves the ping unanswered however fine the screen looks;
// a busy one answers late, which is fine. The check is kept for the final
// checks; an application none of whose windows takes part (xterm) is not
// judged, and neither is one the run's end cut short.
func (s *runState) checkResponsive(ctx context.Context) {
	pinger, ok := s.env.desk.(appPinger)
	if !ok || s.env.app == nil || !s.env.app.Alive() || !s.env.hasWin || ctx.Err() != nil {
		return
	}
	timeout := time.Duration(s.files.Scenario.App.HangTimeoutS() * float64(time.Second))
	deadline := time.Now().Add(timeout)
	var silent desktop.Window
	for {
		w, asked, err := s.env.pingOnce(ctx, pinger, time.Until(deadline))
		switch {
		case err == nil && asked:
			s.env.responsive = &events.Check{Name: checkAppResponsive, OK: true}
			return
		case !asked || ctx.Err() != nil || !s.env.app.Alive():
			// No window takes part, the run is ending, or the app died
			// while it was asked (process_alive says so).
			return
		}
		silent = w
		if !time.Now().Before(deadline) {
			break
		}
	}
	evidence := fmt.Sprintf("the application stopped answering: its window %s did not answer _NET_WM_PING within %s (app.hang_timeout_s)",
		describeWindow(silent), timeout)
	s.env.responsive = &events.Check{Name: checkAppResponsive, OK: false, Evidence: evidence}
	s.diagnoseHang(ctx, silent, timeout, evidence)
}

// pingOnce asks every window of the application that takes part in
// _NET_WM_PING at once, waiting at most pingRound (and at most left) for
// the first answer: a dialog closing as it is asked never answers, while
// the window under it does. asked is false when no window takes part; err
// is nil when one answered, and w is then the one that did, else the
// first one asked.
func (e *environment) pingOnce(ctx context.Context, pinger appPinger, left time.Duration) (w desktop.Window, asked bool, err error) {
	ws := e.pingable()
	pctx, cancel := context.WithTimeout(ctx, max(min(pingRound, left), 0))
	defer cancel()
	type answer struct {
		w   desktop.Window
		err error
	}
	answers := make(chan answer, len(ws))
	for _, w := range ws {
		go func() { answers <- answer{w, pinger.Ping(pctx, w.ID)} }()
	}
	var first *answer
	for range ws {
		a := <-answers
		switch {
		case a.err == nil:
			// The others are cut short, and their answers dropped.
			cancel()
			return a.w, true, nil
		case errors.Is(a.err, desktop.ErrPingUnsupported), errors.Is(a.err, desktop.ErrWindowGone):
			continue
		case !errors.Is(a.err, context.DeadlineExceeded) && ctx.Err() == nil:
			e.log("ask the application whether it answers: %v", a.err)
			continue
		}
		if first == nil || a.w.ID == ws[0].ID {
			first = &a
		}
	}
	if first == nil {
		return desktop.Window{}, false, nil
	}
	return first.w, true, first.err
}

// pingable lists the application's windows to ask, the current one first.
func (e *environment) pingable() []desktop.Window {
	current := e.currentWindow()
	out := []desktop.Window{current}
	for _, w := range e.seeWindows().shown {
		if w.ID != current.ID {
			out = append(out, w)
		}
	}
	return out
}

// diagnoseHang records what an author needs to see why the application
// stopped answering: the screen, every window on the display and the
// threads of the application's processes with the kernel function each
// waits in (a main thread parked in futex_wait_queue waits on a lock).
func (s *runState) diagnoseHang(ctx context.Context, w desktop.Window, timeout time.Duration, evidence string) {
	rel, noScreen := s.act.failureScreen(ctx, s.book.stepN)
	var threads []events.ThreadSeen
	for _, t := range proc.Threads(s.env.app.PID()) {
		threads = append(threads, events.ThreadSeen{PID: t.PID, TID: t.TID, Name: t.Name, State: t.State, WChan: t.WChan})
	}
	s.bus.Publish(events.Event{Message: evidence, Screen: rel, Data: events.AppHung{
		Window: describeWindow(w), TimeoutS: timeout.Seconds(),
		Windows: s.env.seeWindows().listed(), Threads: threads, NoScreen: noScreen,
	}})
}
