package x11

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// popupKinds are the _NET_WM_WINDOW_TYPE values of windows shown over an
// application's windows for a moment, and what Window.Popup calls them.
var popupKinds = []struct{ atom, kind string }{
	{"_NET_WM_WINDOW_TYPE_TOOLTIP", "tooltip"},
	{"_NET_WM_WINDOW_TYPE_MENU", "menu"},
	{"_NET_WM_WINDOW_TYPE_POPUP_MENU", "menu"},
	{"_NET_WM_WINDOW_TYPE_DROPDOWN_MENU", "menu"},
	{"_NET_WM_WINDOW_TYPE_COMBO", "menu"},
	{"_NET_WM_WINDOW_TYPE_NOTIFICATION", "notification"},
	{"_NET_WM_WINDOW_TYPE_DND", "drag icon"},
}

// Windows lists the application windows, bottom of the stack first:
// root's children, or, for a child without WM_CLASS, its descendants that
// have one, as a window manager's frames and toolkits that reparent into
// a wrapper window leave them. The window manager's own windows (its
// announcement window, its popups) are not listed.
func (c *Conn) Windows() ([]Window, error) {
	treeC := xproto.QueryTree(c.x, c.root)
	checkC := xproto.GetProperty(c.x, false, c.root, c.atoms.netWMCheck, xproto.AtomWindow, 0, 1)
	tree, err := treeC.Reply()
	if err != nil {
		return nil, fmt.Errorf("list windows: %w", err)
	}
	wmOwns := c.windowManagerOwns(checkC)
	children, err := c.describeAll(tree.Children)
	if err != nil {
		return nil, fmt.Errorf("list windows: %w", err)
	}
	// Children without WM_CLASS (frames, wrappers) are searched all
	// together, a level of the tree per round trip.
	var wrappers []xproto.Window
	for _, w := range children {
		if !isClient(w) {
			wrappers = append(wrappers, xproto.Window(w.ID))
		}
	}
	below := c.clientsBelow(wrappers, 2)
	var out []Window
	for _, w := range children {
		if !isClient(w) {
			out = append(out, below[0]...)
			below = below[1:]
			continue
		}
		if !wmOwns(xproto.Window(w.ID)) {
			out = append(out, w)
		}
	}
	return out, nil
}

// isClient reports whether a child of the root is an application's
// window, not a frame or wrapper around one.
func isClient(w Window) bool {
	return w.Class != "" || w.Instance != "" || w.Title != "" || w.PID != 0
}

// windowManagerOwns returns a test for windows the window manager created:
// those from the same client as the window it announces itself with, told
// by the client's part of the window ID. Without a manager it owns none.
func (c *Conn) windowManagerOwns(check xproto.GetPropertyCookie) func(xproto.Window) bool {
	r, err := check.Reply()
	if err != nil || r.Format != 32 || len(r.Value) < 4 {
		return func(xproto.Window) bool { return false }
	}
	mask := xproto.Window(xproto.Setup(c.x).ResourceIdMask)
	base := xproto.Window(xgb.Get32(r.Value)) &^ mask
	return func(id xproto.Window) bool { return id&^mask == base }
}

// clientsBelow finds, for each of ids, its descendants depth levels down
// at most that carry WM_CLASS, in stacking order. Each level of the tree
// costs one round trip for all of ids (every request of a level is sent
// before any reply is read), and only the windows found are described in
// full: a window manager's frames hold dozens of decoration windows.
func (c *Conn) clientsBelow(ids []xproto.Window, depth int) [][]Window {
	out := make([][]Window, len(ids))
	if depth == 0 || len(ids) == 0 {
		return out
	}
	trees := make([]xproto.QueryTreeCookie, len(ids))
	for i, id := range ids {
		trees[i] = xproto.QueryTree(c.x, id)
	}
	var kids []xproto.Window
	var owner []int // the index in ids each kid is below
	for i, t := range trees {
		tree, err := t.Reply()
		if err != nil {
			continue
		}
		for _, kid := range tree.Children {
			kids = append(kids, kid)
			owner = append(owner, i)
		}
	}
	classes := make([]xproto.GetPropertyCookie, len(kids))
	for j, kid := range kids {
		classes[j] = xproto.GetProperty(c.x, false, kid, c.atoms.wmClass, xproto.AtomString, 0, 256)
	}
	const gone, client, wrapper = 0, 1, 2
	kinds := make([]int, len(kids))
	var clients, deeper []xproto.Window
	for j, cookie := range classes {
		r, err := cookie.Reply()
		switch {
		case err != nil:
			kinds[j] = gone
		case hasClass(r):
			kinds[j] = client
			clients = append(clients, kids[j])
		default:
			kinds[j] = wrapper
			deeper = append(deeper, kids[j])
		}
	}
	described, errs := c.describeEach(clients)
	below := c.clientsBelow(deeper, depth-1)
	for j, kind := range kinds {
		switch kind {
		case client:
			if errs[0] == nil {
				out[owner[j]] = append(out[owner[j]], described[0])
			}
			described, errs = described[1:], errs[1:]
		case wrapper:
			out[owner[j]] = append(out[owner[j]], below[0]...)
			below = below[1:]
		}
	}
	return out
}

// hasClass reports whether a WM_CLASS property names an instance or a
// class, as Window's Instance and Class read it.
func hasClass(r *xproto.GetPropertyReply) bool {
	if r == nil {
		return false
	}
	instance, class := parseClass(r.Value)
	return instance != "" || class != ""
}

// parseClass reads a WM_CLASS property: the instance, then the class.
func parseClass(value []byte) (instance, class string) {
	parts := strings.Split(strings.TrimRight(string(value), "\x00"), "\x00")
	if len(parts) > 1 {
		class = parts[1]
	}
	return parts[0], class
}

// Window reads id afresh (geometry, title, map state); ErrWindowGone when
// it was destroyed.
func (c *Conn) Window(id uint32) (Window, error) {
	w, err := c.describe(xproto.Window(id))
	if err != nil {
		return Window{}, fmt.Errorf("read window 0x%x: %w", id, err)
	}
	return w, nil
}

// describe reads everything Window carries, sending all requests before
// waiting for any reply.
func (c *Conn) describe(id xproto.Window) (Window, error) {
	return c.ask(id).read()
}

// describeAll describes every window of ids in one round trip: all the
// requests are sent before any reply is read. Windows that are gone are
// left out; the first other failure is returned.
func (c *Conn) describeAll(ids []xproto.Window) ([]Window, error) {
	described, errs := c.describeEach(ids)
	out := make([]Window, 0, len(ids))
	var first error
	for i, w := range described {
		switch err := errs[i]; {
		case errors.Is(err, ErrWindowGone):
		case err != nil:
			first = cmp.Or(first, err)
		default:
			out = append(out, w)
		}
	}
	return out, first
}

// describeEach describes every window of ids in one round trip, with
// each one's failure at its index.
func (c *Conn) describeEach(ids []xproto.Window) ([]Window, []error) {
	asked := make([]windowCookies, len(ids))
	for i, id := range ids {
		asked[i] = c.ask(id)
	}
	out := make([]Window, len(ids))
	errs := make([]error, len(ids))
	for i, a := range asked {
		// Every reply is read, so none is left waiting on the connection.
		out[i], errs[i] = a.read()
	}
	return out, errs
}

// windowCookies are the requests describe sends about one window.
type windowCookies struct {
	id                        xproto.Window
	attr                      xproto.GetWindowAttributesCookie
	geom                      xproto.GetGeometryCookie
	pos                       xproto.TranslateCoordinatesCookie
	pid, class, netName, name xproto.GetPropertyCookie
	kind                      xproto.GetPropertyCookie
	popups                    map[xproto.Atom]string
}

func (c *Conn) ask(id xproto.Window) windowCookies {
	return windowCookies{
		id:      id,
		attr:    xproto.GetWindowAttributes(c.x, id),
		geom:    xproto.GetGeometry(c.x, xproto.Drawable(id)),
		pos:     xproto.TranslateCoordinates(c.x, id, c.root, 0, 0),
		pid:     xproto.GetProperty(c.x, false, id, c.atoms.netWMPID, xproto.AtomCardinal, 0, 1),
		class:   xproto.GetProperty(c.x, false, id, c.atoms.wmClass, xproto.AtomString, 0, 256),
		netName: xproto.GetProperty(c.x, false, id, c.atoms.netWMName, c.atoms.utf8String, 0, 1024),
		name:    xproto.GetProperty(c.x, false, id, c.atoms.wmName, xproto.GetPropertyTypeAny, 0, 1024),
		kind:    xproto.GetProperty(c.x, false, id, c.atoms.netWMWindowType, xproto.AtomAtom, 0, 16),
		popups:  c.atoms.popupTypes,
	}
}

func (k windowCookies) read() (Window, error) {
	id := k.id
	attr, errA := k.attr.Reply()
	geom, errG := k.geom.Reply()
	pos, errP := k.pos.Reply()
	pid, _ := k.pid.Reply()
	class, _ := k.class.Reply()
	netName, _ := k.netName.Reply()
	name, _ := k.name.Reply()
	kind, _ := k.kind.Reply()
	for _, err := range []error{errA, errG, errP} {
		if err != nil {
			if isBadWindow(err) {
				return Window{}, ErrWindowGone
			}
			return Window{}, err
		}
	}
	w := Window{
		ID:       uint32(id),
		X:        int(pos.DstX),
		Y:        int(pos.DstY),
		Width:    int(geom.Width),
		Height:   int(geom.Height),
		Viewable: attr.MapState == xproto.MapStateViewable,
	}
	if pid != nil && pid.Format == 32 && len(pid.Value) >= 4 {
		w.PID = int(xgb.Get32(pid.Value))
	}
	if class != nil && len(class.Value) > 0 {
		w.Instance, w.Class = parseClass(class.Value)
	}
	switch {
	case netName != nil && len(netName.Value) > 0:
		w.Title = string(netName.Value)
	case name != nil && len(name.Value) > 0:
		w.Title = latin1ToUTF8(name.Value)
	}
	w.Popup = popupKind(kind, k.popups, attr.OverrideRedirect)
	return w, nil
}

// popupKind names the kind of popup a window is from its
// _NET_WM_WINDOW_TYPE (the first type it lists that names one) and
// whether it bypasses the window manager; "" for an application window.
func popupKind(types *xproto.GetPropertyReply, kinds map[xproto.Atom]string, overrideRedirect bool) string {
	if types != nil && types.Format == 32 {
		for i := 0; i+4 <= len(types.Value); i += 4 {
			if kind, ok := kinds[xproto.Atom(xgb.Get32(types.Value[i:]))]; ok {
				return kind
			}
		}
	}
	if overrideRedirect {
		return "popup"
	}
	return ""
}

// latin1ToUTF8 decodes a STRING property; legacy WM_NAME is ISO 8859-1
// unless it is already valid UTF-8 (COMPOUND_TEXT titles are treated the
// same way, which is right for their ASCII subset).
func latin1ToUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	r := make([]rune, len(b))
	for i, c := range b {
		r[i] = rune(c)
	}
	return string(r)
}

func isBadWindow(err error) bool {
	switch err.(type) {
	case xproto.WindowError, xproto.DrawableError, *xproto.WindowError, *xproto.DrawableError:
		return true
	}
	return false
}

// findPollInterval is how often FindWindow lists windows while waiting.
const findPollInterval = 25 * time.Millisecond

// FindWindow polls until a window matches m, and returns the first (in
// stacking order, bottom first) that does; popups (Window.Popup) never
// match. When ctx ends first, the error wraps ErrNoWindow and says what
// was looked for.
func (c *Conn) FindWindow(ctx context.Context, m WindowMatch) (Window, error) {
	t := time.NewTicker(findPollInterval)
	defer t.Stop()
	for {
		ws, err := c.Windows()
		if err != nil {
			return Window{}, fmt.Errorf("find window (%s): %w", m, err)
		}
		for _, w := range ws {
			// A tooltip or menu carries its application's class and pid,
			// but it is never the window a scenario looks for.
			if w.Popup == "" && m.Matches(w) {
				return w, nil
			}
		}
		select {
		case <-ctx.Done():
			return Window{}, fmt.Errorf("find window (%s): %w: %w", m, ErrNoWindow, ctx.Err())
		case <-t.C:
		}
	}
}

// Focus gives w the keyboard focus and raises it above its siblings. A
// window manager sees the raise as the client's own request and raises
// the window's frame, and it follows the focus it did not give.
func (c *Conn) Focus(w Window) error {
	id := xproto.Window(w.ID)
	raise := xproto.ConfigureWindowChecked(c.x, id, xproto.ConfigWindowStackMode, []uint32{xproto.StackModeAbove})
	focus := xproto.SetInputFocusChecked(c.x, xproto.InputFocusParent, id, xproto.TimeCurrentTime)
	for _, err := range []error{raise.Check(), focus.Check()} {
		if err != nil {
			if isBadWindow(err) {
				return fmt.Errorf("focus window 0x%x: %w", w.ID, ErrWindowGone)
			}
			if isBadMatch(err) {
				return fmt.Errorf("focus window 0x%x: not viewable", w.ID)
			}
			return fmt.Errorf("focus window 0x%x: %w", w.ID, err)
		}
	}
	return nil
}

// FocusedWindow returns the application window that has the keyboard
// focus: the focus window itself or its nearest ancestor carrying
// WM_CLASS (toolkits often focus a child of their top-level window). ok is
// false when the focus is on no application window (none, the root, or a
// window manager's own window).
func (c *Conn) FocusedWindow() (w Window, ok bool, err error) {
	id, err := c.focusedClient()
	if err != nil || id == 0 {
		return Window{}, false, err
	}
	w, err = c.describe(id)
	if errors.Is(err, ErrWindowGone) {
		return Window{}, false, nil
	}
	if err != nil {
		return Window{}, false, fmt.Errorf("read the focused window: %w", err)
	}
	return w, true, nil
}

// focusedClient walks up from the focus window to the nearest window with
// WM_CLASS; 0 when there is none below the root.
func (c *Conn) focusedClient() (xproto.Window, error) {
	f, err := xproto.GetInputFocus(c.x).Reply()
	if err != nil {
		return 0, fmt.Errorf("read the input focus: %w", err)
	}
	id := f.Focus
	for i := 0; i < 16 && id != xproto.WindowNone && id != c.root && id != xproto.Window(xproto.InputFocusPointerRoot); i++ {
		class, err := xproto.GetProperty(c.x, false, id, c.atoms.wmClass, xproto.AtomString, 0, 1).Reply()
		if err != nil {
			if isBadWindow(err) {
				return 0, nil
			}
			return 0, fmt.Errorf("read the input focus: %w", err)
		}
		if class.ValueLen > 0 || class.BytesAfter > 0 {
			return id, nil
		}
		tree, err := xproto.QueryTree(c.x, id).Reply()
		if err != nil {
			if isBadWindow(err) {
				return 0, nil
			}
			return 0, fmt.Errorf("read the input focus: %w", err)
		}
		id = tree.Parent
	}
	return 0, nil
}

// isBadMatch covers SetInputFocus on a window that is no longer viewable.
func isBadMatch(err error) bool {
	switch err.(type) {
	case xproto.MatchError, *xproto.MatchError:
		return true
	}
	return false
}

// WindowAt returns the application window a pointer at x, y (root
// coordinates) would reach: the topmost viewable window there, or, when
// that is a frame or wrapper without WM_CLASS, the client with WM_CLASS
// inside it under the point. ok is false when the point is on the root
// window or on a window manager's own window.
func (c *Conn) WindowAt(x, y int) (hit Hit, ok bool, err error) {
	id := c.root
	for depth := 0; depth < 8; depth++ {
		r, err := xproto.TranslateCoordinates(c.x, c.root, id, int16(x), int16(y)).Reply()
		if err != nil {
			if isBadWindow(err) {
				return Hit{}, false, nil
			}
			return Hit{}, false, fmt.Errorf("find the window at %d,%d: %w", x, y, err)
		}
		if r.Child == xproto.WindowNone {
			return Hit{}, false, nil
		}
		id = r.Child
		if depth == 0 {
			// The root's child is the popup itself, or a managed
			// window's frame.
			attr, err := xproto.GetWindowAttributes(c.x, id).Reply()
			if err != nil {
				if isBadWindow(err) {
					return Hit{}, false, nil
				}
				return Hit{}, false, fmt.Errorf("find the window at %d,%d: %w", x, y, err)
			}
			hit.Popup = attr.OverrideRedirect
		}
		class, err := xproto.GetProperty(c.x, false, id, c.atoms.wmClass, xproto.AtomString, 0, 1).Reply()
		if err != nil {
			if isBadWindow(err) {
				return Hit{}, false, nil
			}
			return Hit{}, false, fmt.Errorf("find the window at %d,%d: %w", x, y, err)
		}
		if class.ValueLen == 0 && class.BytesAfter == 0 {
			continue
		}
		w, err := c.describe(id)
		if errors.Is(err, ErrWindowGone) {
			return Hit{}, false, nil
		}
		if err != nil {
			return Hit{}, false, fmt.Errorf("find the window at %d,%d: %w", x, y, err)
		}
		hit.Window = w
		return hit, true, nil
	}
	return Hit{}, false, nil
}
