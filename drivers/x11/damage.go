package x11

import (
	"fmt"
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
	// err is set when the connection failed; settling then falls back to
	// comparing captures.
	err error
	// kick is signalled (without blocking) on every report, to wake a
	// waiter.
	kick chan struct{}
	done chan struct{}
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
	// NonEmpty sends one report each time the damaged region stops being
	// empty; subtracting after each report re-arms it. A burst of drawing
	// costs a report per round trip, not one per rectangle.
	if err := damage.CreateChecked(x, id, xproto.Drawable(root), damage.ReportLevelNonEmpty).Check(); err != nil {
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
		if _, ok := ev.(damage.NotifyEvent); !ok {
			continue
		}
		damage.Subtract(w.x, w.damage, 0, 0)
		w.mu.Lock()
		w.last = time.Now()
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

func (w *damageWatch) close() {
	w.x.Close()
	<-w.done
}
