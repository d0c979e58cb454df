package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kasmrt/kasmrt/drivers/desktop"
	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/scenarios"
)

// isAppWindow reports whether w belongs to the application: the window
// found at startup, one whose _NET_WM_PID is the app or a descendant, or,
// for a client that sets no pid (Xt apps), one with the startup window's
// WM_CLASS.
func (e *environment) isAppWindow(w desktop.Window) bool {
	switch {
	case e.hasWin && w.ID == e.win.ID:
		return true
	case w.PID != 0:
		return e.app != nil && (desktop.WindowMatch{PID: e.app.PID(), IncludeHidden: true}).Matches(w)
	}
	return e.hasWin && w.Class != "" && w.Class == e.win.Class && w.Instance == e.win.Instance
}

// appWindow is one of the application's windows as the model and the
// report see it.
type appWindow struct {
	win     desktop.Window
	focused bool
}

// appWindows lists the application's mapped windows with a title, bottom
// of the stack first, marking the one with the focus, and, apart, the
// kinds of the popups (tooltips, menus) it shows over them, which are
// never its windows.
func (e *environment) appWindows() (wins []appWindow, popups []string, err error) {
	if e.desk == nil || !e.hasWin {
		return nil, nil, nil
	}
	ws, err := e.desk.Windows()
	if err != nil {
		return nil, nil, err
	}
	focused, hasFocus, err := e.desk.FocusedWindow()
	if err != nil {
		return nil, nil, err
	}
	for _, w := range ws {
		switch {
		case !w.Viewable:
		case w.Popup != "":
			// A popup is the app's by its pid; one without (an Xt menu)
			// by the startup window's class.
			mine := w.PID != 0 && e.app != nil && (desktop.WindowMatch{PID: e.app.PID()}).Matches(w) ||
				w.PID == 0 && w.Class != "" && w.Class == e.win.Class
			if mine && !slices.Contains(popups, w.Popup) {
				popups = append(popups, w.Popup)
			}
		case w.Title != "" && e.isAppWindow(w):
			wins = append(wins, appWindow{win: w, focused: hasFocus && focused.ID == w.ID})
		}
	}
	return wins, popups, nil
}

// windowTitles describes the application's windows in one line for a tool
// result and the Environment Update: titles in quotes, the focused one
// marked, then the kinds of popup showing over them. Titles are the
// application's text, so they are redacted.
func (e *environment) windowTitles() string {
	ws, popups, err := e.appWindows()
	if err != nil || len(ws) == 0 {
		return ""
	}
	parts := make([]string, 0, len(ws))
	for i := len(ws) - 1; i >= 0; i-- { // top of the stack first
		p := fmt.Sprintf("%q", truncate(e.r.Redact(ws[i].win.Title), 120))
		if ws[i].focused {
			p += " (focused)"
		}
		parts = append(parts, p)
	}
	line := strings.Join(parts, ", ")
	if len(popups) > 0 {
		line += "; showing over them: " + strings.Join(popups, ", ")
	}
	return line
}

// focusForInput makes sure input reaches the application. While the
// window switch_window chose is open, input goes to it. Otherwise it goes
// to the app's focused window, so a dialog the app opened gets the keys;
// only when no window of the app has the focus does the startup window get
// it.
func (e *environment) focusForInput() {
	if !e.hasWin {
		return
	}
	target := e.currentWindow()
	w, ok, err := e.desk.FocusedWindow()
	if err == nil && ok && (w.ID == target.ID || !e.hasTarget && e.isAppWindow(w)) {
		return
	}
	if err := e.desk.Focus(target); err != nil && !errors.Is(err, desktop.ErrWindowGone) {
		e.log("focus the application window: %v", err)
	}
}

// currentWindow is the window click targets and the title condition refer
// to: the one switch_window chose while it exists, else the startup window.
func (e *environment) currentWindow() desktop.Window {
	if e.hasTarget {
		if w, err := e.desk.Window(e.target.ID); err == nil && w.Viewable {
			e.target = w
			return w
		}
		e.hasTarget = false
	}
	return e.win
}

// switchWindow gives the focus to a window the scenario named.
func (a *actor) switchWindow(ctx context.Context, name string) result {
	wm, found := a.files.Scenario.Windows[name]
	if !found {
		return failed(failResolution, "no window %q in the scenario's windows", name)
	}
	m := desktop.WindowMatch{Class: wm.Class, Title: wm.Title}
	if (wm.PID == nil || *wm.PID) && a.env.app != nil {
		m.PID = a.env.app.PID()
	}
	findCtx, cancel := context.WithTimeout(ctx, switchWindowTimeout)
	defer cancel()
	w, err := a.env.desk.FindWindow(findCtx, m)
	if err != nil {
		if ctx.Err() != nil {
			return failed(failResolution, "switch_window was interrupted: %v", context.Cause(ctx))
		}
		msg := fmt.Sprintf("no window matching %s (window %q) is open", m, name)
		if titles := a.env.windowTitles(); titles != "" {
			msg += "; the application's windows: " + titles
		}
		return failed(failResolution, "%s", msg)
	}
	if err := a.env.desk.Focus(w); err != nil {
		return a.driverFailure(err)
	}
	a.env.target, a.env.hasTarget = w, true
	// A dialog can be mapped and focused before it has drawn anything
	// that takes input (GTK 4's file chooser): it is ready by the startup
	// window's rule, painted and then still.
	// A window that stays blank holds the step up for switchWindowTimeout
	// at most.
	op := a.files.Operator.Runner
	paintCtx, cancelPaint := context.WithTimeout(ctx, switchWindowTimeout)
	defer cancelPaint()
	painted, err := a.env.desk.WaitPainted(paintCtx, w, desktop.SettleOptions{
		Interval: time.Duration(op.SettleIntervalMS) * time.Millisecond,
		Cap:      time.Duration(op.SettleCapMS) * time.Millisecond,
	})
	switch {
	case err != nil && ctx.Err() == nil && !errors.Is(err, desktop.ErrWindowGone):
		return a.driverFailure(err)
	case err == nil && !painted && ctx.Err() == nil:
		a.log("window %q was still blank after %s; switch_window goes on", name, switchWindowTimeout)
	}
	return a.settled(ctx, ok(fmt.Sprintf("switched to window %q (%q)", name, a.r.Redact(w.Title))))
}

// switchWindowTimeout is how long switch_window waits for the named window
// to appear (a dialog still opening).
const switchWindowTimeout = 5 * time.Second

// expectExit is the scenario's expected ending, or nil.
func (e *environment) expectExit() *scenarios.ExpectExit {
	if a := e.files.Scenario.App; a != nil {
		return a.ExpectExit
	}
	return nil
}

// exitedAsExpected reports whether the app has exited with a code the
// scenario expects (app.expect_exit).
func (ch *checker) exitedAsExpected() bool {
	e := ch.env.expectExit()
	if e == nil || ch.env.app == nil || ch.env.app.Alive() {
		return false
	}
	st := ch.env.app.ExitStatus()
	if st.Signal != 0 {
		return false
	}
	for _, code := range e.ExitCodes() {
		if st.Code == code {
			return true
		}
	}
	return false
}

// awaitExpectedExit gives an app that must exit the time the scenario
// allows, once the steps or the loop are done.
func (ch *checker) awaitExpectedExit(ctx context.Context) {
	e := ch.env.expectExit()
	if e == nil || ch.env.app == nil || ch.outcome.end != nil {
		return
	}
	within := time.Duration(e.WithinS * float64(time.Second))
	if e.WithinS == 0 {
		within = scenarios.DefaultExpectExitWithinS * time.Second
	}
	select {
	case <-ch.env.app.Done():
	case <-time.After(within):
	case <-ctx.Done():
	}
}

// expectedExitCheck is the final check of app.expect_exit: the app exited,
// with one of the expected codes.
func (ch *checker) expectedExitCheck() (events.Check, bool) {
	e := ch.env.expectExit()
	// A run that stopped early for another reason never reached the end
	// the scenario expects, so there is no exit to check.
	if e == nil || ch.env.app == nil || ch.outcome.end != nil && ch.env.app.Alive() {
		return events.Check{}, false
	}
	c := events.Check{Name: "expected_exit", OK: ch.exitedAsExpected()}
	switch {
	case ch.env.app.Alive():
		within := e.WithinS
		if within == 0 {
			within = scenarios.DefaultExpectExitWithinS
		}
		c.Evidence = fmt.Sprintf("the application was still running %gs after the last step; the scenario expects it to exit (app.expect_exit)", within)
	case c.OK:
		c.Evidence = "the application " + ch.env.app.ExitStatus().String()
	default:
		c.Evidence = fmt.Sprintf("the application %s; the scenario expects exit codes %v", ch.env.app.ExitStatus(), e.ExitCodes())
	}
	return c, true
}
