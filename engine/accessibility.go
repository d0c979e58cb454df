package engine

import (
	"context"
	"errors"
	"fmt"
	"image"
	"time"

	"github.com/kasmrt/kasmrt/drivers/atspi"
	"github.com/kasmrt/kasmrt/drivers/desktop"
	"github.com/kasmrt/kasmrt/engine/events"
)

// click_element looks again for a control it did not find for
// findAgainFor, since a control can appear a moment after the previous
// action; findBound bounds the whole search, as one walk of a busy
// application's tree can take seconds on a loaded machine.
const (
	findAgainFor = 2 * time.Second
	findBound    = 5 * time.Second
)

// whyNotOffered is " (click_element is not offered: why)" for a
// click_element call the run cannot take, and "" otherwise.
func (e *environment) whyNotOffered(tool string) string {
	if tool != "click_element" || e.a11y == nil || e.a11y.Missing == "" {
		return ""
	}
	return " (click_element is not offered: " + e.a11y.Missing + ")"
}

// clickElement clicks a named control as a person would: with the pointer
// at the centre of its extents, once the runtime has checked that the
// point hits that control (the application's window is the one under it,
// and the control holds the point as it is laid out now). Only a control
// no pointer can reach (no extents, off the screen, covered) is pressed
// through its accessibility action, within a bounded time. An action runs
// inside the application's handling of the bus call, and an action that
// opens a modal dialog (Mousepad's File → "Save As...") runs the dialog's
// loop there, where GTK's bridge freezes the application; a pointer click
// goes through the application's own event loop.
func (a *actor) clickElement(ctx context.Context, c call) result {
	name, _ := c.Args["name"].(string)
	if a.env.a11y == nil || !a.env.a11y.Found {
		why := "the application publishes no named controls"
		if a.env.a11y != nil && a.env.a11y.Missing != "" {
			why = "click_element is not offered: " + a.env.a11y.Missing
		}
		return failed(failResolution, "%s", why)
	}
	findCtx, cancel := context.WithTimeout(ctx, findBound)
	defer cancel()
	again := time.Now().Add(findAgainFor)
	// Controls can appear a moment after an action; look again briefly,
	// and report the last "not found" (with the names there are) rather
	// than the timeout.
	var ctl atspi.Control
	var err, notFound error
	for {
		ctl, err = a.env.a11y.App.Find(findCtx, name)
		var nf *atspi.NotFoundError
		if errors.As(err, &nf) {
			notFound = err
			if findCtx.Err() == nil && time.Now().Before(again) {
				time.Sleep(100 * time.Millisecond)
				continue
			}
		}
		if err != nil && notFound != nil && findCtx.Err() != nil {
			err = notFound
		}
		break
	}
	if err != nil {
		return failed(failResolution, "%s", explainDriverError(err))
	}
	centre := ctl.Centre()
	p := &events.Point{X: centre.X, Y: centre.Y}
	why := a.env.pointerMisses(ctx, ctl, centre)
	if why == "" {
		r := a.input(ctx, func() error { return a.env.desk.Click(ctx, centre.X, centre.Y) }, "", p)
		if r.status == events.StatusOK {
			r.message = fmt.Sprintf("clicked the %s %q with the pointer at its centre", ctl.Role, ctl.Name)
		}
		return r
	}
	how := "its accessibility action (no pointer click reaches it: " + why + ")"
	var actErr error
	r := a.input(ctx, func() error { actErr = a.env.a11y.App.Activate(ctx, ctl); return actErr }, "", p)
	switch {
	case r.status == events.StatusOK:
		r.message = fmt.Sprintf("clicked the %s %q through %s", ctl.Role, ctl.Name, how)
	case errors.Is(actErr, atspi.ErrActionStuck):
		// The action may have happened; the application did not give the
		// call back, so nothing says it is still working.
		r.message = fmt.Sprintf("pressed the %s %q through %s, and the call did not return: %s", ctl.Role, ctl.Name, how, r.message)
	}
	return r
}

// pointerMisses says why a pointer click at p would not reach the control,
// or "" when it would: p is on the screen, the window under it is the
// application's, and the control holds p as the application lays it out
// now.
func (e *environment) pointerMisses(ctx context.Context, ctl atspi.Control, p image.Point) string {
	if ctl.Extents.Empty() {
		return "the toolkit reports no extents"
	}
	w, h := e.desk.ScreenSize()
	if !p.In(image.Rect(0, 0, w, h)) {
		return fmt.Sprintf("its centre %d,%d is off the %dx%d screen", p.X, p.Y, w, h)
	}
	if at, ok := e.desk.(windowAtPoint); ok {
		hit, found, err := at.WindowAt(p.X, p.Y)
		switch {
		case err != nil:
			return fmt.Sprintf("the window under %d,%d cannot be read: %v", p.X, p.Y, err)
		case !found:
			return fmt.Sprintf("no application window is under %d,%d", p.X, p.Y)
		case !e.ownsWindow(hit.Window):
			return fmt.Sprintf("another program's window (%s) covers %d,%d", describeWindow(hit.Window), p.X, p.Y)
		case !hit.Popup:
			// A popup of the app (a menu) stands above the window that
			// opened it, which is the window its items are in; a managed
			// window under the point must be the control's own, not a
			// dialog over it.
			own, err := e.a11y.App.WindowExtents(ctx, ctl)
			box := image.Rect(hit.X, hit.Y, hit.X+hit.Width, hit.Y+hit.Height)
			if err == nil && !own.Empty() && !sameBox(own, box) {
				return fmt.Sprintf("another of the application's windows (%s) covers %d,%d", describeWindow(hit.Window), p.X, p.Y)
			}
		}
	}
	in, err := e.a11y.App.Contains(ctx, ctl, p)
	switch {
	case err != nil:
		return fmt.Sprintf("the application cannot say what is at %d,%d: %v", p.X, p.Y, err)
	case !in:
		return fmt.Sprintf("the control no longer holds %d,%d", p.X, p.Y)
	}
	return ""
}

// windowAtPoint finds the application window a pointer at a point reaches.
type windowAtPoint interface {
	WindowAt(x, y int) (desktop.Hit, bool, error)
}

// sameBox reports whether two rectangles are the same window's, as the
// accessibility tree and the X server each place it: they overlap by at
// least three quarters of their union, which leaves room for a frame or a
// toolkit's shadow and none for a dialog over its parent.
func sameBox(a, b image.Rectangle) bool {
	inter := a.Intersect(b)
	union := area(a) + area(b) - area(inter)
	return union > 0 && 4*area(inter) >= 3*union
}

func area(r image.Rectangle) int { return r.Dx() * r.Dy() }

// ownsWindow reports whether w belongs to the application under test.
func (e *environment) ownsWindow(w desktop.Window) bool {
	appPID := 0
	if e.app != nil {
		appPID = e.app.PID()
	}
	return ownedBy(w, appPID, e.session != nil && e.session.Owned())
}
