// Package desktop is the contract between the runtime and a desktop
// session driver: the windows a run finds and checks, how it selects one,
// how long it waits for the screen to settle, which session it asks for,
// and the errors a driver's input and window calls answer with. It holds
// no driver: drivers/x11 speaks X11 in these terms, and the engine and the
// suite see a desktop only through them (via engine/stage), so a second
// desktop adapts to this package instead of the engine adapting to it.
package desktop

import (
	"fmt"
	"image"
	"strings"
	"time"

	"github.com/kasmrt/kasmrt/drivers/proc"
)

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
	// Popup says what kind of transient window this is when it is not
	// one of the application's windows but something shown over them:
	// "tooltip", "menu", "notification", "drag icon", or "popup" for any
	// other window that bypasses the window manager (override-redirect).
	// It is "" for an application window.
	Popup string
}

// Center is the middle of the window in root coordinates.
func (w Window) Center() (x, y int) { return w.X + w.Width/2, w.Y + w.Height/2 }

// Hit is the window a pointer at a point reaches.
type Hit struct {
	Window
	// Popup is set for an override-redirect window (a menu, a combo box's
	// list, a tooltip): the window manager does not manage it, and it
	// stands above the window that opened it.
	Popup bool
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

// DisplayOptions says which display server a run uses and how it is
// started (an X server, for drivers/x11; a Wayland compositor, for
// drivers/wayland); the operator file's session: block.
type DisplayOptions struct {
	// Desktop is DesktopX11 (or "") or DesktopWayland.
	Desktop string
	// Display borrows an existing server (":0"); empty starts our own Xvfb.
	Display string
	// Width, Height and Depth size an owned Xvfb screen; zero values mean
	// 1280x800x24. They are ignored when borrowing.
	Width, Height, Depth int
	// StartTimeout bounds how long an owned Xvfb may take to announce its
	// display; zero means 10 s.
	StartTimeout time.Duration
	// WindowManager is run on an owned Xvfb: WindowManagerOpenbox, or ""
	// or WindowManagerNone for none. A borrowed display keeps whatever
	// manages it.
	WindowManager string
}

// The desktops a session can be.
const (
	DesktopX11     = "x11"
	DesktopWayland = "wayland"
)

// Window managers an owned session can run.
const (
	// WindowManagerOpenbox runs Debian's openbox with a generated
	// configuration: new windows placed inside the screen, dialogs centred
	// on their parent, oversized windows shrunk to fit, focus given to every
	// new window and back to the last one when it closes, no decorations,
	// no key or mouse bindings of its own except click-to-focus.
	WindowManagerOpenbox = "openbox"
	// WindowManagerNone leaves the screen without a window manager, as a
	// bare X server is: windows map where they ask, and keep no focus.
	WindowManagerNone = "none"
)

// SettleOptions bounds a desktop's WaitSettled: how long it waits for the
// screen to stop changing, and how it tells.
type SettleOptions struct {
	// Interval is the pause between captures when settling compares
	// captures; zero means 100 ms.
	Interval time.Duration
	// Cap is the longest WaitSettled waits; zero means 2 s.
	Cap time.Duration
	// Quiet is, with DAMAGE, how long nothing may be drawn for the screen
	// to count as settled; zero means 30 ms.
	Quiet time.Duration
	// Response is, with DAMAGE, how long to wait for the screen to start
	// changing (after an action) before taking it as unchanged; zero
	// means not to wait for a change at all. A late redraw within
	// Response is waited for; comparing captures cannot tell one apart
	// from a screen that will not change.
	Response time.Duration
	// Since is, with DAMAGE and Response, when the action whose drawing
	// is waited for began: drawing reported after it counts as the
	// response having begun, so the wait need not see a report of its
	// own. An answer drawn before the caller could ask (a browser's tab
	// answering that its frame is done takes longer than the frame took
	// to reach the screen) is then quiet for Quiet since it was drawn,
	// not for Response since the wait began. Zero means the wait's start.
	Since time.Time
	// Ignore is, with DAMAGE, a part of the screen whose drawing does not
	// count: drawing entirely inside it, such as a browser's tab strip
	// animating after a load, does not keep the screen from counting as
	// settled. Empty means all drawing counts. The capture is of the
	// whole screen either way.
	Ignore image.Rectangle
	// Compare compares captures even when the server offers DAMAGE.
	Compare bool
}

// WithDefaults fills what o leaves unset with the values every desktop
// driver settles by: captures 100 ms apart, a 2 s cap, 30 ms of quiet.
func (o SettleOptions) WithDefaults() SettleOptions {
	if o.Interval <= 0 {
		o.Interval = 100 * time.Millisecond
	}
	if o.Cap <= 0 {
		o.Cap = 2 * time.Second
	}
	if o.Quiet <= 0 {
		o.Quiet = 30 * time.Millisecond
	}
	return o
}
