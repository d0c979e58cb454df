package x11

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/res"
	"github.com/jezek/xgb/xproto"
)

// ErrClientsLeft is a display that still has clients after Reset gave
// them every chance to go: it is not as fresh as a new one.
var ErrClientsLeft = errors.New("clients are still connected")

// Fresh is what a new display's root window holds: the properties there
// were before any application ran (Snapshot).
type Fresh struct {
	props map[xproto.Atom]bool
}

// Snapshot records the root window's properties of a display no
// application has used yet, for Reset to return to.
func (c *Conn) Snapshot() (Fresh, error) {
	reply, err := xproto.ListProperties(c.x, c.root).Reply()
	if err != nil {
		return Fresh{}, fmt.Errorf("snapshot display %s: %w", c.display, err)
	}
	f := Fresh{props: map[xproto.Atom]bool{}}
	for _, a := range reply.Atoms {
		f.props[a] = true
	}
	return f, nil
}

// Reset makes a display this process owns look to its next application as
// a new one does: every client but the window manager and this connection
// is disconnected (XKillClient destroys all of a client's windows and
// resources), the root window loses the properties fresh did not have
// (an accessibility bus's AT_SPI_BUS, xrdb's RESOURCE_MANAGER; the window
// manager sets its own again as it needs them), and the pointer is back at
// the screen's centre, where a new Xvfb puts it. It waits, until timeout,
// for the server to confirm the clients are gone through the X-Resource
// extension's client list, and returns ErrClientsLeft when they are not. A
// client whose process the server cannot tell (a remote one) is
// disconnected too.
func (c *Conn) Reset(ctx context.Context, timeout time.Duration, fresh Fresh) error {
	if err := res.Init(c.x); err != nil {
		return fmt.Errorf("reset display %s: X-Resource extension: %w", c.display, err)
	}
	mask := xproto.Setup(c.x).ResourceIdMask
	// The server's own client (base 0), the window manager and this
	// process's connections (the session's own among them) stay.
	keep := map[uint32]bool{0: true}
	if wm, ok := c.windowManagerWindow(); ok {
		keep[uint32(wm)&^mask] = true
	}
	self := uint32(os.Getpid())
	deadline := time.Now().Add(timeout)
	// A client is known by its resource base and its PID together: the
	// server hands a disconnected client's base to the next one, so a
	// client that connects late may get the base of one killed already.
	type client struct{ base, pid uint32 }
	killed := map[client]bool{}
	for {
		reply, err := res.QueryClientIds(c.x, 1, []res.ClientIdSpec{{Client: 0, Mask: res.ClientIdMaskLocalClientPID}}).Reply()
		if err != nil {
			return fmt.Errorf("reset display %s: list clients: %w", c.display, err)
		}
		var left []client
		var pids []string
		for _, id := range reply.Ids {
			base := id.Spec.Client &^ mask
			if keep[base] || len(id.Value) > 0 && id.Value[0] == self {
				continue
			}
			var pid uint32
			if len(id.Value) > 0 {
				pid = id.Value[0]
			}
			left = append(left, client{base, pid})
			if len(id.Value) > 0 {
				pids = append(pids, describePID(id.Value[0]))
			} else {
				pids = append(pids, fmt.Sprintf("client 0x%x", base))
			}
		}
		if len(left) == 0 {
			break
		}
		for _, cl := range left {
			if !killed[cl] {
				killed[cl] = true
				// Any resource id of the client names it; its base is one.
				xproto.KillClient(c.x, cl.base)
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("reset display %s: %d of them (%s): %w", c.display, len(left), strings.Join(pids, ", "), ErrClientsLeft)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("reset display %s: %w", c.display, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
	if fresh.props != nil {
		reply, err := xproto.ListProperties(c.x, c.root).Reply()
		if err != nil {
			return fmt.Errorf("reset display %s: list the root's properties: %w", c.display, err)
		}
		for _, a := range reply.Atoms {
			if !fresh.props[a] {
				if err := xproto.DeletePropertyChecked(c.x, c.root, a).Check(); err != nil {
					return fmt.Errorf("reset display %s: delete a root property: %w", c.display, err)
				}
			}
		}
	}
	err := xproto.WarpPointerChecked(c.x, 0, c.root, 0, 0, 0, 0, int16(c.width/2), int16(c.height/2)).Check()
	if err != nil {
		return fmt.Errorf("reset display %s: centre the pointer: %w", c.display, err)
	}
	return nil
}

// windowManagerWindow is the window the running window manager announces
// itself with (_NET_SUPPORTING_WM_CHECK on the root), if there is one.
func (c *Conn) windowManagerWindow() (xproto.Window, bool) {
	reply, err := xproto.GetProperty(c.x, false, c.root, c.atoms.netWMCheck, xproto.AtomWindow, 0, 1).Reply()
	if err != nil || reply == nil || reply.Format != 32 || len(reply.Value) < 4 {
		return 0, false
	}
	return xproto.Window(xgb.Get32(reply.Value)), true
}

// describePID names a client's process for an error: its PID and, while
// it runs, its command name.
func describePID(pid uint32) string {
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil {
		return fmt.Sprintf("pid %d", pid)
	}
	return fmt.Sprintf("pid %d (%s)", pid, strings.TrimSpace(string(comm)))
}
