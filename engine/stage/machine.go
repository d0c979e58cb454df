package stage

import (
	"context"
	"image"
	"time"

	"github.com/kasmrt/kasmrt/drivers/atspi"
	"github.com/kasmrt/kasmrt/drivers/cdp"
	"github.com/kasmrt/kasmrt/drivers/desktop"
	"github.com/kasmrt/kasmrt/drivers/proc"
)

// Machine is where a run gets its X session, its connection to it, the
// application under test and the browser. The default is the real drivers
// (Drivers); the engine's rule tests substitute a double that scripts the
// screen and dies on cue, so the engine's rules run without an X server
// (docs/architecture.md, "Test layers").
type Machine interface {
	StartDisplayServer(ctx context.Context, opts desktop.DisplayOptions) (DisplayServer, error)
	Dial(display string) (Desktop, error)
	StartApp(ctx context.Context, spec proc.Spec) (App, error)
	// LaunchBrowser starts Chromium for the run; AttachBrowser connects to
	// one already running at a DevTools address.
	LaunchBrowser(ctx context.Context, opts cdp.LaunchOptions) (Browser, error)
	AttachBrowser(ctx context.Context, debuggerURL string) (Browser, error)
	// StartSessionBus starts a private D-Bus session bus on the display:
	// the isolated application's own, or one for the accessibility bus
	// when the runtime has none.
	StartSessionBus(ctx context.Context, display string, env ...string) (SessionBus, error)
	// ConnectAccessibility connects to the accessibility bus the session
	// bus at sessionAddress announces.
	ConnectAccessibility(ctx context.Context, sessionAddress string) (AccessibilityBus, error)
}

// SessionBus is a D-Bus session bus the stage started.
type SessionBus interface {
	Address() string
	// Env is the environment that points a program at the bus.
	Env() []string
	Close() error
}

// AccessibilityBus is what a run needs of the accessibility bus.
type AccessibilityBus interface {
	// Discover waits until the application whose process is pid, or one of
	// its descendants, shows named controls.
	Discover(ctx context.Context, pid int, opts atspi.DiscoverOptions) (Discovery, error)
	Close() error
}

// Discovery is the application found on the accessibility bus: its name,
// its toolkit ("GTK 4.8.3", or ""), its node and its named controls then.
type Discovery struct {
	Name     string
	Toolkit  string
	App      AccessibleApp
	Controls []atspi.Control
	// NoCache says why App reads the controls by walking the
	// application's tree every time, when it does.
	NoCache error
}

// AccessibleApp is what a run needs of the application over AT-SPI.
type AccessibleApp interface {
	// Controls are the application's showing named controls now.
	Controls(ctx context.Context) ([]atspi.Control, error)
	// Find looks for the control of that name (an *atspi.NotFoundError
	// lists the names there are).
	Find(ctx context.Context, name string) (atspi.Control, error)
	// Focused is the accessible with the keyboard focus, if any.
	Focused(ctx context.Context) (atspi.Accessible, bool, error)
	// Activate performs the control's activation action within a bounded
	// time; an error means the toolkit refused it, or the call did not
	// return (atspi.ErrActionStuck).
	Activate(ctx context.Context, c atspi.Control) error
	// Contains says whether the control, as it is laid out now, holds the
	// screen point p.
	Contains(ctx context.Context, c atspi.Control, p image.Point) (bool, error)
	// WindowExtents is where the window the control is in is on the
	// screen (empty when the toolkit does not say).
	WindowExtents(ctx context.Context, c atspi.Control) (image.Rectangle, error)
}

// DisplayServer is what a run needs of the display server it uses (an X
// server: an embedded Xvfb, or one named by the operator file's
// session.display).
type DisplayServer interface {
	Display() string
	// Owned reports whether the run started the server itself.
	Owned() bool
	// Done is closed when the server goes away.
	Done() <-chan struct{}
	// WindowManager names the window manager the server runs, or "".
	WindowManager() string
	Close() error
}

// kept reports whether the session is a display kept from an earlier run
// (a suite worker's), which a session says by having Kept() true.
func kept(s DisplayServer) bool {
	k, ok := s.(interface{ Kept() bool })
	return ok && k.Kept()
}

// Desktop is what a run needs of the desktop session's connection, in the
// desktop contract's terms (drivers/desktop); the X11 adapter (x11.go)
// gives the X11 driver's connection.
type Desktop interface {
	Capture(ctx context.Context) (*image.RGBA, error)
	WaitSettled(ctx context.Context, opts desktop.SettleOptions) (*image.RGBA, bool, error)
	PressKey(ctx context.Context, chord string) error
	TypeText(ctx context.Context, s string) error
	Click(ctx context.Context, x, y int) error
	Window(id uint32) (desktop.Window, error)
	Windows() ([]desktop.Window, error)
	FindWindow(ctx context.Context, m desktop.WindowMatch) (desktop.Window, error)
	FocusedWindow() (desktop.Window, bool, error)
	Focus(w desktop.Window) error
	WaitPainted(ctx context.Context, w desktop.Window, opts desktop.SettleOptions) (bool, error)
	ScreenSize() (w, h int)
	Close() error
}

// App is what a run needs of the launched application.
type App interface {
	PID() int
	Alive() bool
	Done() <-chan struct{}
	ExitStatus() proc.Status
	Stop(grace time.Duration) error
}

// Browser is what a run needs of Chromium, launched or attached.
type Browser interface {
	Tab() BrowserTab
	PID() int
	// Done is closed when a launched browser exits.
	Done() <-chan struct{}
	ExitStatus() proc.Status
	DebuggerURL() string
	Close() error
}

// BrowserTab is what a run needs of the attached browser tab.
type BrowserTab interface {
	URL(ctx context.Context) (string, error)
	Navigate(ctx context.Context, url string) error
	ListInteractive(ctx context.Context, filter string) ([]cdp.Element, error)
	ClickDescribed(ctx context.Context, handle, text string) (cdp.Element, error)
	ViewportOrigin(ctx context.Context) (image.Point, error)
	Query(ctx context.Context, selector string) (cdp.ElementState, error)
	Click(ctx context.Context, selector string) error
	Fill(ctx context.Context, selector, value string) error
	Wait(ctx context.Context, spec cdp.WaitSpec) error
	// CapturePNG captures the page as the PNG the browser encoded,
	// undecoded.
	CapturePNG(ctx context.Context) ([]byte, error)
}

// Drivers is the machine made of the real drivers: Xvfb (or a given
// display), an X connection, a process group for the app and Chromium.
type Drivers struct{}

func (Drivers) StartApp(ctx context.Context, spec proc.Spec) (App, error) {
	p, err := proc.Start(ctx, spec)
	if err != nil {
		return nil, err
	}
	return p, nil
}

func (Drivers) LaunchBrowser(ctx context.Context, opts cdp.LaunchOptions) (Browser, error) {
	b, err := cdp.Launch(ctx, opts)
	if err != nil {
		return nil, err
	}
	return cdpBrowser{b}, nil
}

func (Drivers) AttachBrowser(ctx context.Context, debuggerURL string) (Browser, error) {
	b, err := cdp.Attach(ctx, debuggerURL)
	if err != nil {
		return nil, err
	}
	return cdpBrowser{b}, nil
}

func (Drivers) StartSessionBus(ctx context.Context, display string, env ...string) (SessionBus, error) {
	b, err := atspi.StartSessionBus(ctx, display, env...)
	if err != nil {
		return nil, err
	}
	return b, nil
}

func (Drivers) ConnectAccessibility(ctx context.Context, sessionAddress string) (AccessibilityBus, error) {
	b, err := atspi.ConnectSession(ctx, sessionAddress)
	if err != nil {
		return nil, err
	}
	return atspiBus{b}, nil
}

// atspiBus gives the driver's bus the stage's view of what it discovers.
type atspiBus struct{ *atspi.Bus }

func (b atspiBus) Discover(ctx context.Context, pid int, opts atspi.DiscoverOptions) (Discovery, error) {
	found, err := b.Bus.Discover(ctx, pid, opts)
	if err != nil {
		return Discovery{}, err
	}
	// Later reads answer from a cache the application's events keep
	// current. A registry that refuses the events leaves every read a
	// walk of the tree: slower, never wrong.
	app := found.App
	cached, noCache := app.Cached(ctx)
	if noCache == nil {
		app = cached
	}
	return Discovery{Name: found.App.Name, Toolkit: found.App.Toolkit, App: atspiApp{app}, Controls: found.Controls, NoCache: noCache}, nil
}

// atspiApp acts on a control through the bus it was read from.
type atspiApp struct{ atspi.App }

func (atspiApp) Activate(ctx context.Context, c atspi.Control) error { return c.Click(ctx) }

func (atspiApp) Contains(ctx context.Context, c atspi.Control, p image.Point) (bool, error) {
	return c.Contains(ctx, p)
}

func (atspiApp) WindowExtents(ctx context.Context, c atspi.Control) (image.Rectangle, error) {
	return c.WindowExtents(ctx)
}

func (atspiApp) WindowsOf(ctx context.Context, cs []atspi.Control) ([]image.Rectangle, []error) {
	return atspi.WindowsOf(ctx, cs)
}

// cdpBrowser gives the driver's browser the stage's view of its tab.
type cdpBrowser struct{ *cdp.Browser }

func (b cdpBrowser) Tab() BrowserTab { return b.Browser.Tab() }

// Ensure the drivers' types satisfy what a run needs of them.
var (
	_ Machine       = Drivers{}
	_ App           = (*proc.Process)(nil)
	_ Browser       = cdpBrowser{}
	_ SessionBus    = (*atspi.SessionBus)(nil)
	_ AccessibleApp = atspiApp{}
)
