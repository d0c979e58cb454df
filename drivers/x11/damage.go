package x11

import (
	"fmt"
	"image"
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
	w := &damageWatch{x: x, damage: id, kick: make(chan struct{}, 1), done: make(chan struct{})}
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
		ne, ok := ev.(damage.NotifyEvent)
		if !ok {
			continue
		}
		damage.Subtract(w.x, w.damage, 0, 0)
		a := ne.Area
		area := image.Rect(int(a.X), int(a.Y), int(a.X)+int(a.Width), int(a.Y)+int(a.Height))
		w.mu.Lock()
		w.last = time.Now()
		w.recent[w.reports%recentReports] = damageReport{at: w.last, area: area}
		w.reports++
		w.mu.Unlock()
		select {
		case w.kick <- struct{}{}:
		default:
		}
	}
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
