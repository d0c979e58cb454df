package stage

import (
	"context"
	"image"
	"strings"

	"github.com/kasmrt/kasmrt/drivers/atspi"
	"github.com/kasmrt/kasmrt/drivers/desktop"
)

// windowLocal is a session whose applications report their accessible
// extents relative to their own window, not the screen: a Wayland client
// is never told where the compositor placed its windows.
type windowLocal interface {
	AccessibleExtentsInWindow() bool
}

// extentsInWindow reports whether sess is such a session.
func extentsInWindow(sess DisplayServer) bool {
	l, ok := sess.(windowLocal)
	return ok && l.AccessibleExtentsInWindow()
}

// toolkitPlacesInWindow reports whether a toolkit, as AT-SPI names it
// ("GTK 4.8.3"), reports its controls' extents relative to their window
// even on X11, where the screen position is known: GTK 4's accessibility
// backend does, so a button's centre lies near the screen's top left, off
// the window a pointer click must reach.
func toolkitPlacesInWindow(toolkit string) bool {
	return strings.HasPrefix(strings.ToUpper(toolkit), "GTK 4")
}

// placedApp gives an application that reports window-relative extents the
// screen coordinates the run works in: a control's extents are moved by
// the origin of the application's window it is in, found among the
// desktop's windows by the size the application gives that window. A
// control whose window cannot be told apart reports no extents, so the
// run presses it through its action, and masks by other means, rather
// than act on the wrong place.
type placedApp struct {
	AccessibleApp
	desk Desktop
	pid  int
}

// origin is where the window holding c is on the screen, less where the
// application says that window is.
func (a placedApp) origin(ctx context.Context, c atspi.Control) (image.Point, bool) {
	own, err := a.AccessibleApp.WindowExtents(ctx, c)
	if err != nil {
		return image.Point{}, false
	}
	w, ok := a.window(own.Size())
	if !ok {
		return image.Point{}, false
	}
	return offset(w, own), true
}

// offset is what moves a point of the application's window own onto the
// screen, where the desktop has that window as w. A window the application
// measures larger than the desktop does has client-side decorations: GTK
// draws its shadow (and resize border) around the window on Wayland, and
// its coordinates count from the shadow's corner while the compositor's
// count from the window's (the xdg_surface geometry). The toolkit does not
// say how the shadow is split, so it is taken as even on both sides, which
// is GTK's within its few pixels of vertical offset; without this a GTK 3
// dialog's buttons are pressed a shadow's width (26 px) off their centre,
// past the edge of a narrow one.
func offset(w desktop.Window, own image.Rectangle) image.Point {
	o := image.Pt(w.X, w.Y).Sub(own.Min)
	if shadow := own.Size().Sub(image.Pt(w.Width, w.Height)).Div(2); shadow.X > 0 && shadow.Y > 0 {
		o = o.Sub(shadow)
	}
	return o
}

// window is the application's window of that size (the focused one when
// the size is unknown or shared), if one can be told apart.
func (a placedApp) window(size image.Point) (desktop.Window, bool) {
	ws, err := a.desk.Windows()
	if err != nil {
		return desktop.Window{}, false
	}
	match := desktop.WindowMatch{PID: a.pid}
	var found []desktop.Window
	for _, w := range ws {
		if !match.Matches(w) {
			continue
		}
		if size == (image.Point{}) || nearSize(size, image.Pt(w.Width, w.Height)) {
			found = append(found, w)
		}
	}
	if len(found) == 1 {
		return found[0], true
	}
	if f, ok, err := a.desk.FocusedWindow(); err == nil && ok {
		for _, w := range found {
			if w.ID == f.ID {
				return w, true
			}
		}
	}
	return desktop.Window{}, false
}

// nearSize reports whether two sizes are one window's as the toolkit and
// the compositor each measure it: within a toolkit's shadow of each other.
func nearSize(a, b image.Point) bool {
	const shadow = 64
	d := a.Sub(b)
	return abs(d.X) <= shadow && abs(d.Y) <= shadow
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// place moves c's extents onto the screen, or empties them when its
// window cannot be found.
func (a placedApp) place(ctx context.Context, c atspi.Control) atspi.Control {
	if c.Extents.Empty() {
		return c
	}
	off, ok := a.origin(ctx, c)
	if !ok {
		c.Extents = image.Rectangle{}
		return c
	}
	c.Extents = c.Extents.Add(off)
	return c
}

func (a placedApp) Controls(ctx context.Context) ([]atspi.Control, error) {
	cs, err := a.AccessibleApp.Controls(ctx)
	if err != nil {
		return nil, err
	}
	// Controls of one window share its origin: ask for it once per
	// window size the application reports.
	type key struct{ own image.Rectangle }
	origins := map[key]image.Point{}
	owns, errs := a.windowsOf(ctx, cs)
	for i, c := range cs {
		if c.Extents.Empty() {
			continue
		}
		own, err := owns[i], errs[i]
		if err != nil {
			cs[i].Extents = image.Rectangle{}
			continue
		}
		off, seen := origins[key{own}]
		if !seen {
			w, ok := a.window(own.Size())
			if !ok {
				cs[i].Extents = image.Rectangle{}
				continue
			}
			off = offset(w, own)
			origins[key{own}] = off
		}
		cs[i].Extents = c.Extents.Add(off)
	}
	return cs, nil
}

// windowsReader finds the windows of many controls at once (the AT-SPI
// driver's atspi.WindowsOf).
type windowsReader interface {
	WindowsOf(ctx context.Context, cs []atspi.Control) ([]image.Rectangle, []error)
}

// windowsOf is the window of every control with extents: all at once when
// the application can say (asked one control after the other, the climbs
// to the windows took hundreds of round trips per read of a GTK 4
// window), else one by one.
func (a placedApp) windowsOf(ctx context.Context, cs []atspi.Control) ([]image.Rectangle, []error) {
	owns, errs := make([]image.Rectangle, len(cs)), make([]error, len(cs))
	var placed []int
	for i, c := range cs {
		if !c.Extents.Empty() {
			placed = append(placed, i)
		}
	}
	if r, ok := a.AccessibleApp.(windowsReader); ok {
		some := make([]atspi.Control, len(placed))
		for j, i := range placed {
			some[j] = cs[i]
		}
		o, e := r.WindowsOf(ctx, some)
		for j, i := range placed {
			owns[i], errs[i] = o[j], e[j]
		}
		return owns, errs
	}
	for _, i := range placed {
		owns[i], errs[i] = a.AccessibleApp.WindowExtents(ctx, cs[i])
	}
	return owns, errs
}

func (a placedApp) Find(ctx context.Context, name string) (atspi.Control, error) {
	c, err := a.AccessibleApp.Find(ctx, name)
	if err != nil {
		return c, err
	}
	return a.place(ctx, c), nil
}

// Focused places the focused accessible in the focused window, which is
// where the keyboard focus is.
func (a placedApp) Focused(ctx context.Context) (atspi.Accessible, bool, error) {
	acc, ok, err := a.AccessibleApp.Focused(ctx)
	if err != nil || !ok || acc.Extents.Empty() {
		return acc, ok, err
	}
	f, fok, ferr := a.desk.FocusedWindow()
	if ferr != nil || !fok || !(desktop.WindowMatch{PID: a.pid}).Matches(f) {
		acc.Extents = image.Rectangle{}
		return acc, ok, nil
	}
	acc.Extents = acc.Extents.Add(image.Pt(f.X, f.Y))
	return acc, ok, nil
}

// Contains hit-tests p in the application's own coordinates.
func (a placedApp) Contains(ctx context.Context, c atspi.Control, p image.Point) (bool, error) {
	off, ok := a.origin(ctx, c)
	if !ok {
		return false, nil
	}
	return a.AccessibleApp.Contains(ctx, c, p.Sub(off))
}

func (a placedApp) WindowExtents(ctx context.Context, c atspi.Control) (image.Rectangle, error) {
	own, err := a.AccessibleApp.WindowExtents(ctx, c)
	if err != nil || own.Empty() {
		return own, err
	}
	w, ok := a.window(own.Size())
	if !ok {
		return image.Rectangle{}, nil
	}
	return image.Rect(w.X, w.Y, w.X+w.Width, w.Y+w.Height), nil
}
