package x11

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/kasmrt/kasmrt/drivers/proc"
)

// ErrWindowGone is returned for a window that no longer exists.
var ErrWindowGone = errors.New("window gone")

// ErrNoWindow is wrapped by FindWindow when no window matched in time.
var ErrNoWindow = errors.New("no matching window")

// Window is an application window as the X server sees it. Its geometry is
// the inside of the window, excluding the X border.
type Window struct {
	ID uint32
	// PID is _NET_WM_PID, or 0 when the client did not set it.
	PID int
	// Instance and Class are the two halves of WM_CLASS.
	Instance, Class string
	// Title is _NET_WM_NAME, or WM_NAME when that is absent.
	Title string
	// X and Y are the window's position in root coordinates; they can be
	// negative or past the screen edge, since nothing keeps windows on
	// screen without a window manager.
	X, Y, Width, Height int
	// Viewable means mapped with all ancestors mapped.
	Viewable bool
}

// Center is the middle of the window in root coordinates.
func (w Window) Center() (x, y int) { return w.X + w.Width/2, w.Y + w.Height/2 }

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
	var out []Window
	for _, id := range tree.Children {
		w, err := c.describe(id)
		if errors.Is(err, ErrWindowGone) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list windows: %w", err)
		}
		if w.Class != "" || w.Instance != "" || w.Title != "" || w.PID != 0 {
			if !wmOwns(id) {
				out = append(out, w)
			}
			continue
		}
		out = append(out, c.clientsBelow(id, 2)...)
	}
	return out, nil
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

// clientsBelow finds descendants of id, depth levels down at most, that
// carry WM_CLASS.
func (c *Conn) clientsBelow(id xproto.Window, depth int) []Window {
	if depth == 0 {
		return nil
	}
	tree, err := xproto.QueryTree(c.x, id).Reply()
	if err != nil {
		return nil
	}
	var out []Window
	for _, child := range tree.Children {
		w, err := c.describe(child)
		if err != nil {
			continue
		}
		if w.Class != "" || w.Instance != "" {
			out = append(out, w)
			continue
		}
		out = append(out, c.clientsBelow(child, depth-1)...)
	}
	return out
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
	attrC := xproto.GetWindowAttributes(c.x, id)
	geomC := xproto.GetGeometry(c.x, xproto.Drawable(id))
	posC := xproto.TranslateCoordinates(c.x, id, c.root, 0, 0)
	pidC := xproto.GetProperty(c.x, false, id, c.atoms.netWMPID, xproto.AtomCardinal, 0, 1)
	classC := xproto.GetProperty(c.x, false, id, c.atoms.wmClass, xproto.AtomString, 0, 256)
	netNameC := xproto.GetProperty(c.x, false, id, c.atoms.netWMName, c.atoms.utf8String, 0, 1024)
	nameC := xproto.GetProperty(c.x, false, id, c.atoms.wmName, xproto.GetPropertyTypeAny, 0, 1024)

	attr, errA := attrC.Reply()
	geom, errG := geomC.Reply()
	pos, errP := posC.Reply()
	pid, _ := pidC.Reply()
	class, _ := classC.Reply()
	netName, _ := netNameC.Reply()
	name, _ := nameC.Reply()
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
		parts := strings.Split(strings.TrimRight(string(class.Value), "\x00"), "\x00")
		w.Instance = parts[0]
		if len(parts) > 1 {
			w.Class = parts[1]
		}
	}
	switch {
	case netName != nil && len(netName.Value) > 0:
		w.Title = string(netName.Value)
	case name != nil && len(name.Value) > 0:
		w.Title = latin1ToUTF8(name.Value)
	}
	return w, nil
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

// WindowMatch selects a window. Every non-zero field must match.
type WindowMatch struct {
	// PID matches _NET_WM_PID equal to PID or to a descendant of PID, so a
	// wrapper script's PID finds the window of the program it started.
	PID int
	// Class matches either half of WM_CLASS exactly, ignoring case.
	Class string
	// Title matches a substring of the title, case-sensitively.
	Title string
	// IncludeHidden also matches windows that are not viewable.
	IncludeHidden bool
}

func (m WindowMatch) String() string {
	var parts []string
	if m.PID != 0 {
		parts = append(parts, fmt.Sprintf("pid %d", m.PID))
	}
	if m.Class != "" {
		parts = append(parts, fmt.Sprintf("class %q", m.Class))
	}
	if m.Title != "" {
		parts = append(parts, fmt.Sprintf("title containing %q", m.Title))
	}
	if len(parts) == 0 {
		return "any window"
	}
	return strings.Join(parts, ", ")
}

// Matches reports whether w is a window m selects.
func (m WindowMatch) Matches(w Window) bool { return m.matches(w) }

func (m WindowMatch) matches(w Window) bool {
	if !m.IncludeHidden && !w.Viewable {
		return false
	}
	if m.Class != "" && !strings.EqualFold(w.Class, m.Class) && !strings.EqualFold(w.Instance, m.Class) {
		return false
	}
	if m.Title != "" && !strings.Contains(w.Title, m.Title) {
		return false
	}
	if m.PID != 0 && !descendsFrom(w.PID, m.PID) {
		return false
	}
	return true
}

// descendsFrom reports whether pid is ancestor or one of its descendants.
func descendsFrom(pid, ancestor int) bool {
	for i := 0; pid > 1 && i < 64; i++ {
		if pid == ancestor {
			return true
		}
		pid = proc.ParentPID(pid)
	}
	return false
}

// findPollInterval is how often FindWindow lists windows while waiting.
const findPollInterval = 25 * time.Millisecond

// FindWindow polls until a window matches m, and returns the first (in
// stacking order, bottom first) that does. When ctx ends first, the error
// wraps ErrNoWindow and says what was looked for.
func (c *Conn) FindWindow(ctx context.Context, m WindowMatch) (Window, error) {
	t := time.NewTicker(findPollInterval)
	defer t.Stop()
	for {
		ws, err := c.Windows()
		if err != nil {
			return Window{}, fmt.Errorf("find window (%s): %w", m, err)
		}
		for _, w := range ws {
			if m.Matches(w) {
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
