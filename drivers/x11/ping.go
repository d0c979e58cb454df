package x11

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// Ping asks the client of window id whether it still handles its events,
// as a window manager does before it offers to kill a frozen program: it
// sends the window a _NET_WM_PING client message, and the client's event
// loop sends it back to the root window. Ping returns nil once the answer
// arrives, and the context's error when it does not come in time: a client
// whose main loop is blocked never answers. A window that does not list
// _NET_WM_PING in WM_PROTOCOLS is ErrPingUnsupported; one that is gone is
// ErrWindowGone.
func (c *Conn) Ping(ctx context.Context, id uint32) error {
	w, err := c.pinger()
	if err != nil {
		return err
	}
	return w.ping(ctx, xproto.Window(id))
}

// pinger returns the connection's ping watch, opening it on first use.
func (c *Conn) pinger() (*pingWatch, error) {
	c.pingMu.Lock()
	defer c.pingMu.Unlock()
	if c.ping != nil {
		return c.ping, nil
	}
	w, err := watchPings(c.display, c.root)
	if err != nil {
		return nil, err
	}
	c.ping = w
	return w, nil
}

// pingWatch sends pings and receives their answers on a connection of its
// own, since the answers arrive as events on the root window, which must be
// read continuously and which the main connection never reads.
type pingWatch struct {
	x    *xgb.Conn
	root xproto.Window
	// wmProtocols and netWMPing are the atoms of the protocol.
	wmProtocols, netWMPing xproto.Atom

	mu sync.Mutex
	// serial numbers the pings, so an answer is matched to its request
	// (it stands in the timestamp field, which the client echoes).
	serial uint32
	// waiting are the pings sent and not answered yet, by serial.
	waiting map[uint32]chan struct{}
	// err is set when the connection failed.
	err  error
	done chan struct{}
}

func watchPings(display string, root xproto.Window) (*pingWatch, error) {
	x, err := xgb.NewConnDisplay(display)
	if err != nil {
		return nil, fmt.Errorf("ping: dial %s: %w", display, err)
	}
	w := &pingWatch{x: x, root: root, waiting: map[uint32]chan struct{}{}, done: make(chan struct{}), serial: 1}
	atoms := []*xproto.Atom{&w.wmProtocols, &w.netWMPing}
	for i, name := range []string{"WM_PROTOCOLS", "_NET_WM_PING"} {
		r, err := xproto.InternAtom(x, false, uint16(len(name)), name).Reply()
		if err != nil {
			x.Close()
			return nil, fmt.Errorf("ping: intern atom %s: %w", name, err)
		}
		*atoms[i] = r.Atom
	}
	// The answer is sent to the root window for its substructure
	// redirection (the window manager's) and, by GTK, for substructure
	// notification, by Qt 5 for structure notification: any client may
	// listen to both.
	err = xproto.ChangeWindowAttributesChecked(x, root, xproto.CwEventMask,
		[]uint32{xproto.EventMaskStructureNotify | xproto.EventMaskSubstructureNotify}).Check()
	if err != nil {
		x.Close()
		return nil, fmt.Errorf("ping: listen on the root window: %w", err)
	}
	go w.read()
	return w, nil
}

// read matches answers to waiting pings until the connection closes.
func (w *pingWatch) read() {
	defer close(w.done)
	for {
		ev, xerr := w.x.WaitForEvent()
		if ev == nil && xerr == nil {
			w.mu.Lock()
			w.err = errors.New("ping: the connection to the X server closed")
			w.mu.Unlock()
			return
		}
		cm, ok := ev.(xproto.ClientMessageEvent)
		if !ok || cm.Type != w.wmProtocols || cm.Format != 32 || cm.Window != w.root {
			continue
		}
		data := cm.Data.Data32
		if len(data) < 2 || xproto.Atom(data[0]) != w.netWMPing {
			continue
		}
		w.mu.Lock()
		if answered, ok := w.waiting[data[1]]; ok {
			close(answered)
			delete(w.waiting, data[1])
		}
		w.mu.Unlock()
	}
}

func (w *pingWatch) ping(ctx context.Context, win xproto.Window) error {
	protocols, err := xproto.GetProperty(w.x, false, win, w.wmProtocols, xproto.AtomAtom, 0, 64).Reply()
	if err != nil {
		if isBadWindow(err) {
			return fmt.Errorf("ping window 0x%x: %w", win, ErrWindowGone)
		}
		return fmt.Errorf("ping window 0x%x: read WM_PROTOCOLS: %w", win, err)
	}
	if !listsAtom(protocols, w.netWMPing) {
		return fmt.Errorf("ping window 0x%x: %w", win, ErrPingUnsupported)
	}
	w.mu.Lock()
	if w.err != nil {
		w.mu.Unlock()
		return w.err
	}
	serial := w.serial
	w.serial++
	answered := make(chan struct{})
	w.waiting[serial] = answered
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		delete(w.waiting, serial)
		w.mu.Unlock()
	}()
	ev := xproto.ClientMessageEvent{
		Format: 32, Window: win, Type: w.wmProtocols,
		Data: xproto.ClientMessageDataUnionData32New([]uint32{uint32(w.netWMPing), serial, uint32(win), 0, 0}),
	}
	if err := xproto.SendEventChecked(w.x, false, win, xproto.EventMaskNoEvent, string(ev.Bytes())).Check(); err != nil {
		if isBadWindow(err) {
			return fmt.Errorf("ping window 0x%x: %w", win, ErrWindowGone)
		}
		return fmt.Errorf("ping window 0x%x: %w", win, err)
	}
	select {
	case <-answered:
		return nil
	case <-w.done:
		return fmt.Errorf("ping window 0x%x: the connection to the X server closed", win)
	case <-ctx.Done():
		return fmt.Errorf("ping window 0x%x: no answer: %w", win, ctx.Err())
	}
}

// listsAtom reports whether a property of type ATOM holds a.
func listsAtom(r *xproto.GetPropertyReply, a xproto.Atom) bool {
	if r == nil || r.Format != 32 {
		return false
	}
	var atoms []xproto.Atom
	for i := 0; i+4 <= len(r.Value); i += 4 {
		atoms = append(atoms, xproto.Atom(xgb.Get32(r.Value[i:])))
	}
	return slices.Contains(atoms, a)
}

func (w *pingWatch) close() {
	w.x.Close()
	<-w.done
}
