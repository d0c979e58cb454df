package stage

import (
	"context"
	"fmt"
	"time"

	"github.com/kasmrt/kasmrt/drivers/desktop"
	"github.com/kasmrt/kasmrt/drivers/x11"
)

// This file is the stage's X11 adapter: the one place outside the driver
// that names drivers/x11 (TestOnlyTheStageAdaptersImportTheirDrivers).
// Everything else sees the desktop through the stage's interfaces and the
// desktop contract's types; wayland.go is the second desktop's adapter.

// startX11 starts (or borrows) an X session.
func startX11(ctx context.Context, opts desktop.DisplayOptions) (DisplayServer, error) {
	s, err := x11.StartServer(ctx, opts)
	if err != nil {
		// A nil *x11.Server in a DisplayServer would not compare equal to nil.
		return nil, err
	}
	return s, nil
}

// dialX11 connects to an X display.
func dialX11(display string) (Desktop, error) {
	c, err := x11.Dial(display)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// CheckChord reports whether the desktop understands the key chord,
// without a session: an unknown modifier or key name is a
// *desktop.UnknownKeyError. Whether the keyboard has the key is only known
// at run time.
func CheckChord(chord string) error { return x11.CheckChord(chord) }

// StartKeepable starts a session a suite worker can keep between its runs
// (Keepable); with opts.Display set it borrows that display.
func StartKeepable(ctx context.Context, opts desktop.DisplayOptions) (Keepable, error) {
	s, err := x11.StartServer(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &x11Keepable{Server: s}, nil
}

// x11Keepable is an X session kept between runs, with what its display
// held when new.
type x11Keepable struct {
	*x11.Server
	fresh x11.Fresh
}

func (k *x11Keepable) Snapshot() error {
	c, err := x11.Dial(k.Display())
	if err != nil {
		return err
	}
	defer c.Close()
	f, err := c.Snapshot()
	if err != nil {
		return err
	}
	k.fresh = f
	return nil
}

func (k *x11Keepable) Reset(ctx context.Context, timeout time.Duration, width, height int) error {
	c, err := x11.Dial(k.Display())
	if err != nil {
		return fmt.Errorf("keep display %s: %w", k.Display(), err)
	}
	defer c.Close()
	if w, h := c.ScreenSize(); width != 0 && (w != width || h != height) {
		return fmt.Errorf("keep display %s: the screen is %dx%d, not %dx%d", k.Display(), w, h, width, height)
	}
	return c.Reset(ctx, timeout, k.fresh)
}

// Ensure the X11 driver's types satisfy what a run needs of them.
var (
	_ DisplayServer = (*x11.Server)(nil)
	_ Desktop       = (*x11.Conn)(nil)
	_ Keepable      = (*x11Keepable)(nil)
)
