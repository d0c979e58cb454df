package engine

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/godbus/dbus/v5"

	"github.com/kasmrt/kasmrt/drivers/atspi"
	"github.com/kasmrt/kasmrt/drivers/cdp"
	"github.com/kasmrt/kasmrt/drivers/desktop"
	"github.com/kasmrt/kasmrt/engine/vision"
)

// explanation says why a driver call failed in the author's terms and what
// to try; a zero explanation leaves the driver's own message alone, for the
// errors that already speak to the author.
type explanation struct {
	why, try string
}

// explainRule recognises one kind of driver failure.
type explainRule struct {
	matches func(err error, text string) bool
	explanation
}

// containsAny is a rule on the driver's message, for the protocol errors
// that have no type of their own (Chromium's and the X server's replies).
func containsAny(fragments ...string) func(error, string) bool {
	return func(_ error, text string) bool {
		for _, f := range fragments {
			if strings.Contains(text, f) {
				return true
			}
		}
		return false
	}
}

func is(target error) func(error, string) bool {
	return func(err error, _ string) bool { return errors.Is(err, target) }
}

func as[T error]() func(error, string) bool {
	return func(err error, _ string) bool {
		var t T
		return errors.As(err, &t)
	}
}

// explainRules are tried in order; the first that matches words the error.
func explainRules() []explainRule {
	return []explainRule{
		// Errors that already say what to do for the author: left as they are.
		{matches: as[*cdp.DescribedNotFoundError]()},
		{matches: as[*cdp.AmbiguousError]()},
		{matches: as[*cdp.WaitTimeoutError]()},
		{matches: as[*atspi.NotFoundError]()},
		{matches: as[*atspi.AmbiguousError]()},
		{matches: is(vision.ErrNotFound)},
		{matches: is(vision.ErrAmbiguous)},

		{as[*cdp.SelectorError](), explanation{
			"the cdp target's CSS selector is not valid",
			"fixing the selector in cdp_targets"}},
		{is(cdp.ErrNotFound), explanation{
			"no element on the page matches the cdp target's selector",
			"checking the selector in cdp_targets against the page, or waiting for the element first with a cdp_wait (state: visible)"}},
		{containsAny("Could not find node with given id", "No node with given id", "Node is detached from document",
			"Cannot find context with specified id", "Execution context was destroyed", "Inspected target navigated or closed",
			"Cannot find object with id", "Could not find object with given id"), explanation{
			"the page changed (it navigated or re-rendered) while the element was in use",
			"waiting for the page to settle with a cdp_wait, then acting again; list the elements again after the page changes"}},
		{containsAny("does not have a layout object", "Could not compute box model", "Could not compute content quads",
			"has no layout box", "Element is not focusable", "Node is not an Element"), explanation{
			"the element is not rendered (hidden, collapsed or of zero size), so it cannot be clicked or typed into",
			"waiting until it is visible with a cdp_wait (state: visible), or first acting on what reveals it"}},
		{containsAny("net::ERR_"), explanation{
			"the browser could not load the page (Chromium's network error is at the end)",
			"checking the address in cdp_urls and that its server runs and answers from this machine"}},
		{is(desktop.ErrUnknownKey), explanation{
			"press_key does not know that key name",
			// The model reads this too: it names the keys rather than a
			// document the model cannot open.
			keyNames + ", after any modifiers joined with + (ctrl+shift+s)"}},
		{is(desktop.ErrKeyNotOnLayout), explanation{
			"the session's keyboard layout has no key that produces it, so no person at this keyboard could press it",
			"a key the layout maps; to enter such a character into a field, type it with type_text from a provided value"}},
		{is(desktop.ErrOffScreen), explanation{
			"the point is outside the screen",
			"checking the click target's x and y: click_targets are pixels from the window's top-left corner and must land inside session.width × session.height"}},
		{is(desktop.ErrWindowGone), explanation{
			"the application's window no longer exists (it closed or was replaced by another)",
			"naming the window that is open now with app.window; the checks after this step say whether the application still runs"}},
		{func(err error, _ string) bool {
			var de dbus.Error
			var dep *dbus.Error
			return errors.As(err, &de) || errors.As(err, &dep)
		}, explanation{
			"the application did not answer over the accessibility bus (it may be busy, have closed the window, or have removed the control)",
			"observing the screen and calling again once the application is idle; the control names it publishes are in the tools event"}},
		{is(context.DeadlineExceeded), explanation{
			"it did not finish in time",
			"checking whether the application is stuck: a long script or a modal dialog (alert, confirm) blocks a page; the screen shows how it was"}},
		{func(err error, text string) bool {
			return errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) ||
				strings.Contains(text, "websocket: close") || strings.Contains(text, "connection closed")
		}, explanation{
			"the connection to the driver closed (the browser or the X server went away)",
			"looking at app.log and the checks after this step for why it ended"}},
	}
}

// explainDriverError words a driver failure for the scenario's author:
// what was attempted, why it failed and what to try, with the driver's own
// message kept in parentheses for maintainers. Errors the drivers already
// word for the author come back unchanged.
func explainDriverError(err error) string {
	raw := err.Error()
	for _, r := range explainRules() {
		if !r.matches(err, raw) {
			continue
		}
		if r.why == "" {
			return raw
		}
		return worded(attemptOf(raw), r.explanation, raw)
	}
	return worded(attemptOf(raw), explanation{why: "the driver refused the request"}, raw)
}

// worded puts the parts of an explained failure together.
func worded(attempt string, e explanation, raw string) string {
	var b strings.Builder
	if attempt != "" {
		b.WriteString(attempt)
		b.WriteString(" failed: ")
	}
	b.WriteString(e.why)
	if e.try != "" {
		b.WriteString("; try ")
		b.WriteString(e.try)
	}
	b.WriteString(" (")
	b.WriteString(raw)
	b.WriteString(")")
	return b.String()
}

// attemptOf reads what was attempted from a driver error: the drivers wrap
// their errors as "what they did: why", so the first part names the action
// ("click #go", "press ctrl+s", "capture screen").
func attemptOf(raw string) string {
	attempt, _, found := strings.Cut(raw, ": ")
	if !found || len(attempt) > 120 {
		return ""
	}
	return attempt
}

// explainBrowserStart words a browser that could not be launched or
// attached to: the environment or the scenario's browser: section is at
// fault, never the application.
func explainBrowserStart(attach bool, addr string, err error) string {
	if attach {
		return worded("attach to the browser at "+addr, explanation{
			"nothing answered there as a DevTools endpoint",
			"checking browser.attach and that the browser runs with --remote-debugging-port"}, err.Error())
	}
	e := explanation{"Chromium did not start", "checking that " + cdp.DefaultExecPath + " starts on this machine; its output is in app.log"}
	if errors.Is(err, context.DeadlineExceeded) {
		e.why = "Chromium did not open its DevTools endpoint in time"
	}
	return worded("start the browser", e, err.Error())
}
