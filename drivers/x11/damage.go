package x11

import (
	"fmt"
	"image"
	"slices"
	"sync"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/damage"
	"github.com/jezek/xgb/xproto"
)

// damageWatch follows the X DAMAGE extension's reports for the root window
// on a connection of its own, so the server tells us when anything on the
// screen is drawn instead of us comparing captures. Its own connection
// keeps the event stream, which must be read continuously, apart from the
// main connection, whose events nobody reads.
type damageWatch struct {
	x      *xgb.Conn
	damage damage.Damage

	mu sync.Mutex
	// last is when the newest damage report arrived; zero before any.
	last time.Time
	// reports counts the reports received.
	reports uint64
	// recent are the newest reports, recent[(reports-1)%len] the newest
	// of all, for a wait that ignores the drawing in part of the screen.
	recent [recentReports]damageReport
	// err is set when the connection failed; settling then falls back to
	// comparing captures.
	err error
	// screen is the root window's area; a window's area is clipped to it.
	screen image.Rectangle
	// unpainted are the top-level windows mapped lately, and the areas
	// windows unmapped lately uncovered, that have not all been drawn
	// since (see unpaintedWindow), oldest first.
	unpainted []unpaintedWindow
	// shown is where each top-level window mapped since the watch began
	// is, so an unmap knows what it uncovers.
	shown map[xproto.Window]image.Rectangle
	// kick is signalled (without blocking) on every report, to wake a
	// waiter.
	kick chan struct{}
	done chan struct{}
}

// recentReports is how many reports a damageWatch keeps. A wait that
// ignores part of the screen and finds all of them there takes the oldest
// kept as drawn elsewhere, so fewer only costs such a wait time.
const recentReports = 64

// damageReport is one report: when it arrived and the bounding box of
// what was drawn since the report before it.
type damageReport struct {
	at   time.Time
	area image.Rectangle
}

// unpaintedWindow is a top-level window that mapped at a time and has not
// painted all of area since. A toolkit's window maps with no background
// (GTK's do): until the app paints it, the screen shows what was under it
// and nothing is reported drawn, so a screen quiet after the drawing that
// came before the map (a menu closing) is not yet the screen the action
// leads to.
//
// A window that unmaps uncovers the windows under it the same way: a
// window with no background keeps the unmapped one's pixels until its app
// repaints what was uncovered (a menu closing while its app is busy
// opening the dialog its item asked for). Such an area is followed with
// id 0.
type unpaintedWindow struct {
	id    xproto.Window
	at    time.Time
	area  image.Rectangle
	drawn image.Rectangle
}

// unpaintedLimit is how long after it maps a window that has not painted
// all its area holds settling up: a window that only ever paints part of
// itself costs the waits within this time, not every wait after. Its
// painting can also go unreported: a report is sent when the box of what
// was drawn since the last one grows, so a window painted inside a box
// not yet taken back is never seen painted and holds settling this long.
const unpaintedLimit = time.Second

// maxUnpainted bounds the windows followed; a burst of maps beyond it
// drops the oldest.
const maxUnpainted = 16

// watchDamage opens a second connection to display and asks for a report
// whenever the root window (and so anything on the screen) goes from
// undamaged to damaged. It fails when the server has no DAMAGE extension.
func watchDamage(display string, root xproto.Window) (*damageWatch, error) {
	x, err := xgb.NewConnDisplay(display)
	if err != nil {
		return nil, fmt.Errorf("watch damage: dial %s: %w", display, err)
	}
	if err := initExtension(x, "DAMAGE", damage.Init); err != nil {
		x.Close()
		return nil, fmt.Errorf("watch damage: %w", err)
	}
	// The server refuses DAMAGE requests from a client that has not said
	// which version it speaks.
	if _, err := damage.QueryVersion(x, 1, 1).Reply(); err != nil {
		x.Close()
		return nil, fmt.Errorf("watch damage: query version: %w", err)
	}
	id, err := damage.NewDamageId(x)
	if err != nil {
		x.Close()
		return nil, fmt.Errorf("watch damage: %w", err)
	}
	// BoundingBox sends a report each time the damaged region's bounding
	// box grows, with that box; subtracting after each report empties the
	// region again. A burst of drawing costs a report per round trip and
	// per growth, not one per rectangle. Unlike NonEmpty, whose report
	// names the whole screen and which says nothing of what is drawn
	// between a report and the subtraction, every drawing is inside some
	// report's box, so a wait can ignore part of the screen: a browser
	// whose tab strip animates for a quarter of a second after a load
	// would otherwise keep the page from counting as still.
	if err := damage.CreateChecked(x, id, xproto.Drawable(root), damage.ReportLevelBoundingBox).Check(); err != nil {
		x.Close()
		return nil, fmt.Errorf("watch damage: create: %w", err)
	}
	// The maps, moves and unmaps of the root's children (the top-level
	// windows, or their window manager's frames) say where a window has
	// yet to paint. Many clients may select these on the root.
	if err := xproto.ChangeWindowAttributesChecked(x, root, xproto.CwEventMask,
		[]uint32{xproto.EventMaskSubstructureNotify}).Check(); err != nil {
		x.Close()
		return nil, fmt.Errorf("watch damage: follow the top-level windows: %w", err)
	}
	screen := xproto.Setup(x).DefaultScreen(x)
	w := &damageWatch{x: x, damage: id, kick: make(chan struct{}, 1), done: make(chan struct{}),
		screen: image.Rect(0, 0, int(screen.WidthInPixels), int(screen.HeightInPixels))}
	go w.read()
	return w, nil
}

// read receives reports until the connection closes.
func (w *damageWatch) read() {
	defer close(w.done)
	for {
		ev, xerr := w.x.WaitForEvent()
		if ev == nil && xerr == nil {
			w.mu.Lock()
			if w.err == nil {
				w.err = fmt.Errorf("watch damage: the connection closed")
			}
			w.mu.Unlock()
			return
		}
		var area image.Rectangle
		switch ev := ev.(type) {
		case damage.NotifyEvent:
			damage.Subtract(w.x, w.damage, 0, 0)
			a := ev.Area
			area = image.Rect(int(a.X), int(a.Y), int(a.X)+int(a.Width), int(a.Y)+int(a.Height))
		case xproto.MapNotifyEvent:
			w.mapped(ev.Window)
			continue
		case xproto.ConfigureNotifyEvent:
			w.follow(ev.Window, image.Rect(int(ev.X), int(ev.Y), int(ev.X)+int(ev.Width), int(ev.Y)+int(ev.Height)))
			continue
		case xproto.UnmapNotifyEvent:
			w.unmapped(ev.Window)
			continue
		case xproto.DestroyNotifyEvent:
			w.forget(ev.Window)
			continue
		default:
			continue
		}
		w.mu.Lock()
		w.last = time.Now()
		w.recent[w.reports%recentReports] = damageReport{at: w.last, area: area}
		w.reports++
		w.painted(area)
		w.mu.Unlock()
		select {
		case w.kick <- struct{}{}:
		default:
		}
	}
}

// mapped starts following a top-level window that has just mapped until
// it has painted its area. A window that draws nothing (InputOnly) or is
// off the screen is not followed. It runs on the reading goroutine: the
// replies come on the connection's own, so asking here is safe.
func (w *damageWatch) mapped(id xproto.Window) {
	at := time.Now()
	attrs, err := xproto.GetWindowAttributes(w.x, id).Reply()
	if err != nil || attrs.Class == xproto.WindowClassInputOnly {
		return
	}
	g, err := xproto.GetGeometry(w.x, xproto.Drawable(id)).Reply()
	if err != nil {
		return
	}
	// A top-level window's position is relative to the root.
	area := image.Rect(int(g.X), int(g.Y), int(g.X)+int(g.Width)+2*int(g.BorderWidth), int(g.Y)+int(g.Height)+2*int(g.BorderWidth)).Intersect(w.screen)
	if area.Empty() {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.dropUnpainted(id)
	if w.shown == nil {
		w.shown = map[xproto.Window]image.Rectangle{}
	}
	w.shown[id] = area
	w.followArea(unpaintedWindow{id: id, at: at, area: area})
}

// unmapped follows what a top-level window uncovered by unmapping, until
// it has been drawn; the window itself has nothing left to paint.
func (w *damageWatch) unmapped(id xproto.Window) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.dropUnpainted(id)
	area, ok := w.shown[id]
	delete(w.shown, id)
	if ok {
		w.followArea(unpaintedWindow{at: time.Now(), area: area})
	}
}

// followArea adds u to the areas followed, dropping the oldest beyond
// maxUnpainted; w.mu is held.
func (w *damageWatch) followArea(u unpaintedWindow) {
	if len(w.unpainted) == maxUnpainted {
		w.unpainted = w.unpainted[1:]
	}
	w.unpainted = append(w.unpainted, u)
}

// follow moves a followed window's area; what it had painted counts no
// more (a window manager places a frame, the app paints it there). A
// restack, which reports the same area, changes nothing.
func (w *damageWatch) follow(id xproto.Window, area image.Rectangle) {
	w.mu.Lock()
	defer w.mu.Unlock()
	area = area.Intersect(w.screen)
	if _, ok := w.shown[id]; ok {
		w.shown[id] = area
	}
	for i := range w.unpainted {
		if u := &w.unpainted[i]; u.id == id && u.area != area {
			u.area, u.drawn = area, image.Rectangle{}
		}
	}
	// A window moved off the screen has nothing left to paint.
	w.unpainted = slices.DeleteFunc(w.unpainted, func(u unpaintedWindow) bool { return u.area.Empty() })
}

// forget stops following a window that went away before it painted.
func (w *damageWatch) forget(id xproto.Window) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.dropUnpainted(id)
	delete(w.shown, id)
}

// dropUnpainted removes id from the windows followed; w.mu is held.
func (w *damageWatch) dropUnpainted(id xproto.Window) {
	w.unpainted = slices.DeleteFunc(w.unpainted, func(u unpaintedWindow) bool { return u.id == id })
}

// painted counts a report's area as drawn in the windows followed and
// stops following those it has painted all of; w.mu is held. The reports
// of one window's first paint may be several boxes, so what is drawn is
// their bounding box within the window.
func (w *damageWatch) painted(area image.Rectangle) {
	for i := range w.unpainted {
		u := &w.unpainted[i]
		if in := area.Intersect(u.area); !in.Empty() {
			u.drawn = u.drawn.Union(in)
		}
	}
	w.unpainted = slices.DeleteFunc(w.unpainted, func(u unpaintedWindow) bool { return u.drawn == u.area })
}

// unpaintedUntil returns how long the windows followed hold settling up:
// the latest time one of them, outside ignore, may still paint by, or zero
// when none has yet to paint.
func (w *damageWatch) unpaintedUntil(now time.Time, ignore image.Rectangle) time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	var until time.Time
	for _, u := range w.unpainted {
		by := u.at.Add(unpaintedLimit)
		if !by.After(now) || !ignore.Empty() && u.area.In(ignore) {
			continue
		}
		if by.After(until) {
			until = by
		}
	}
	return until
}

// state returns the time of the newest report, how many there were, and
// the connection's failure, if any.
func (w *damageWatch) state() (last time.Time, reports uint64, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last, w.reports, w.err
}

// lastOutside returns when the newest report that drew outside ignore
// arrived (the screen's newest report when ignore is empty): zero when
// there was none. A report older than the ones kept may have drawn
// outside ignore, so when none of those kept did and some were dropped,
// the oldest kept is taken as the answer: too late rather than too early.
func (w *damageWatch) lastOutside(ignore image.Rectangle) (time.Time, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if ignore.Empty() || w.err != nil {
		return w.last, w.err
	}
	kept := min(w.reports, recentReports)
	for i := uint64(1); i <= kept; i++ {
		r := w.recent[(w.reports-i)%recentReports]
		if !r.area.In(ignore) {
			return r.at, nil
		}
	}
	if w.reports > recentReports {
		return w.recent[w.reports%recentReports].at, nil
	}
	return time.Time{}, nil
}

func (w *damageWatch) close() {
	w.x.Close()
	<-w.done
}
