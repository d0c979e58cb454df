package x11

import (
	"context"
	"fmt"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// TypingPause is how long PressKey lets pass after the application has
// read the characters TypeText typed before it presses a key. Toolkits act
// on a name typed into a field only after the typing stops: GTK's file
// chooser (GTK 3 and 4) unselects the file list 150 ms after the name
// last changed, and a Return that arrives before then leaves the dialog
// open. A person always pauses that long between the last letter of a
// name and Return; measured on mousepad's Save As dialog, Return sent
// 130 ms after the name was dropped every time and 150 ms after saved.
const TypingPause = 250 * time.Millisecond

// pingTimeout bounds how long markTyped waits for the focused application
// to answer its ping: an application that is busy for longer gets the
// pause counted from the moment the keys were sent.
const pingTimeout = time.Second

// markTyped records when the keys TypeText just sent were read by the
// application that has the focus, for PressKey to pause after. Callers
// hold inputMu and have synced, so the server has delivered the keys.
func (c *Conn) markTyped(ctx context.Context) {
	c.typedAt = time.Now()
	id, err := c.focusedClient()
	if err != nil || id == 0 {
		return
	}
	if answered, _ := c.pingClient(ctx, id); answered {
		c.typedAt = time.Now()
	}
}

// pauseAfterTyping waits until TypingPause has passed since the keys
// TypeText typed last were read. Callers hold inputMu.
func (c *Conn) pauseAfterTyping(ctx context.Context) error {
	if c.typedAt.IsZero() {
		return nil
	}
	wait := time.Until(c.typedAt.Add(TypingPause))
	c.typedAt = time.Time{}
	if wait <= 0 {
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// pingClient sends the window manager's _NET_WM_PING to the client window
// id and waits for the answer. An application answers from its main
// loop while it reads its events in the order the server queued them, so
// the answer proves it has read every event sent before the ping: the
// keys just typed. answered is false when the window does not take part
// in the protocol or did not answer within pingTimeout. It uses a
// connection of its own, so the answer (sent to the root window) is read
// there and no event ever waits unread on c's connection.
func (c *Conn) pingClient(ctx context.Context, id xproto.Window) (answered bool, err error) {
	x, err := xgb.NewConnDisplay(c.display)
	if err != nil {
		return false, fmt.Errorf("ping window 0x%x: %w", id, err)
	}
	defer x.Close()
	protocols, ping, err := internTwo(x, "WM_PROTOCOLS", "_NET_WM_PING")
	if err != nil {
		return false, fmt.Errorf("ping window 0x%x: %w", id, err)
	}
	if !c.speaks(x, id, protocols, ping) {
		return false, nil
	}
	root := xproto.Setup(x).DefaultScreen(x).Root
	if err := xproto.ChangeWindowAttributesChecked(x, root, xproto.CwEventMask,
		[]uint32{xproto.EventMaskStructureNotify | xproto.EventMaskSubstructureNotify}).Check(); err != nil {
		return false, fmt.Errorf("ping window 0x%x: watch the root window: %w", id, err)
	}
	// Toolkits answer to the root window with the mask a window manager
	// selects (GTK SubstructureNotify, Qt StructureNotify); both are
	// watched above. A distinct timestamp field tells the answer from the
	// window manager's own pings and from earlier ones.
	c.pings++
	stamp := c.pings
	msg := xproto.ClientMessageEvent{
		Format: 32, Window: id, Type: protocols,
		Data: xproto.ClientMessageDataUnionData32New([]uint32{uint32(ping), stamp, uint32(id), 0, 0}),
	}
	if err := xproto.SendEventChecked(x, false, id, xproto.EventMaskNoEvent, string(msg.Bytes())).Check(); err != nil {
		if isBadWindow(err) {
			return false, nil
		}
		return false, fmt.Errorf("ping window 0x%x: %w", id, err)
	}
	// The reader ends when the answer comes or when the deferred Close
	// ends the connection; the buffer lets it leave after a timeout.
	answers := make(chan bool, 1)
	go func() {
		for {
			ev, xerr := x.WaitForEvent()
			if ev == nil && xerr == nil {
				answers <- false
				return
			}
			cm, ok := ev.(xproto.ClientMessageEvent)
			if ok && cm.Type == protocols && cm.Format == 32 {
				d := cm.Data.Data32
				if len(d) >= 2 && d[0] == uint32(ping) && d[1] == stamp {
					answers <- true
					return
				}
			}
		}
	}()
	t := time.NewTimer(pingTimeout)
	defer t.Stop()
	select {
	case ok := <-answers:
		return ok, nil
	case <-ctx.Done():
		return false, nil
	case <-t.C:
		return false, nil
	}
}

// speaks reports whether window id lists protocol among its WM_PROTOCOLS.
func (c *Conn) speaks(x *xgb.Conn, id xproto.Window, protocols, protocol xproto.Atom) bool {
	r, err := xproto.GetProperty(x, false, id, protocols, xproto.AtomAtom, 0, 64).Reply()
	if err != nil || r.Format != 32 {
		return false
	}
	for i := 0; i+4 <= len(r.Value); i += 4 {
		if xproto.Atom(xgb.Get32(r.Value[i:])) == protocol {
			return true
		}
	}
	return false
}

// internTwo interns two atom names in one round trip.
func internTwo(x *xgb.Conn, a, b string) (xproto.Atom, xproto.Atom, error) {
	ca := xproto.InternAtom(x, false, uint16(len(a)), a)
	cb := xproto.InternAtom(x, false, uint16(len(b)), b)
	ra, errA := ca.Reply()
	rb, errB := cb.Reply()
	if errA != nil {
		return 0, 0, fmt.Errorf("intern atom %s: %w", a, errA)
	}
	if errB != nil {
		return 0, 0, fmt.Errorf("intern atom %s: %w", b, errB)
	}
	return ra.Atom, rb.Atom, nil
}
