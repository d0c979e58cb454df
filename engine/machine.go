package engine

import (
	"context"

	"github.com/kasmrt/kasmrt/drivers/cdp"
	"github.com/kasmrt/kasmrt/drivers/proc"
	"github.com/kasmrt/kasmrt/drivers/x11"
)

// machine is where a run gets its X session, its connection to it, the
// application under test and the browser. The default is the real drivers; the rule tests
// substitute a double that scripts the screen and dies on cue, so the
// engine's rules run without an X server (docs/architecture.md, "Test
// layers").
type machine interface {
	StartSession(ctx context.Context, opts x11.SessionOptions) (session, error)
	Dial(display string) (desktop, error)
	StartApp(ctx context.Context, spec proc.Spec) (app, error)
	// LaunchBrowser starts Chromium for the run; AttachBrowser connects to
	// one already running at a DevTools address.
	LaunchBrowser(ctx context.Context, opts cdp.LaunchOptions) (browser, error)
	AttachBrowser(ctx context.Context, debuggerURL string) (browser, error)
}

// session is what the engine needs of the X server a run uses.
type session interface {
	Display() string
	// Owned reports whether the run started the server itself.
	Owned() bool
	// Done is closed when the server goes away.
	Done() <-chan struct{}
	// WindowManager names the window manager the session runs, or "".
	WindowManager() string
	Close() error
}

// browser is what the engine needs of Chromium, launched or attached.
type browser interface {
	Tab() browserTab
	PID() int
	// Done is closed when a launched browser exits.
	Done() <-chan struct{}
	ExitStatus() proc.Status
	DebuggerURL() string
	Close() error
}

// drivers is the machine made of the real drivers: Xvfb (or a given
// display), an X connection, and a process group for the app.
type drivers struct{}

func (drivers) StartSession(ctx context.Context, opts x11.SessionOptions) (session, error) {
	s, err := x11.StartSession(ctx, opts)
	if err != nil {
		// A nil *x11.Session in a session would not compare equal to nil.
		return nil, err
	}
	return s, nil
}

func (drivers) Dial(display string) (desktop, error) {
	c, err := x11.Dial(display)
	if err != nil {
		return nil, err
	}
	return c, nil
}

func (drivers) StartApp(ctx context.Context, spec proc.Spec) (app, error) {
	p, err := proc.Start(ctx, spec)
	if err != nil {
		return nil, err
	}
	return p, nil
}

func (drivers) LaunchBrowser(ctx context.Context, opts cdp.LaunchOptions) (browser, error) {
	b, err := cdp.Launch(ctx, opts)
	if err != nil {
		return nil, err
	}
	return cdpBrowser{b}, nil
}

func (drivers) AttachBrowser(ctx context.Context, debuggerURL string) (browser, error) {
	b, err := cdp.Attach(ctx, debuggerURL)
	if err != nil {
		return nil, err
	}
	return cdpBrowser{b}, nil
}

// cdpBrowser gives the driver's browser the engine's view of its tab.
type cdpBrowser struct{ *cdp.Browser }

func (b cdpBrowser) Tab() browserTab { return b.Browser.Tab() }

// Ensure the drivers' types satisfy what the engine needs of them.
var (
	_ machine = drivers{}
	_ session = (*x11.Session)(nil)
	_ browser = cdpBrowser{}
)
