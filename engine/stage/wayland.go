package stage

import (
	"context"

	"github.com/kasmrt/kasmrt/drivers/desktop"
	"github.com/kasmrt/kasmrt/drivers/wayland"
)

// This file is the stage's Wayland adapter: the one place outside the
// driver that names drivers/wayland (TestOnlyTheStageAdaptersImportTheirDrivers).

// startWayland starts a headless compositor of the run's own.
func startWayland(ctx context.Context, opts desktop.DisplayOptions) (DisplayServer, error) {
	s, err := wayland.StartServer(ctx, opts)
	if err != nil {
		// A nil *wayland.Server in a Session would not compare equal to nil.
		return nil, err
	}
	return s, nil
}

// dialWayland connects to the compositor whose socket is at display.
func dialWayland(display string) (Desktop, error) {
	c, err := wayland.Dial(display)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Lacks says what a session of the desktop lacks that the X11 session
// offers (nothing, for X11), for validate to name before a run.
func Lacks(desktopName string) []string {
	if desktopName == desktop.DesktopWayland {
		return wayland.Missing()
	}
	return nil
}

// Ensure the Wayland driver's types satisfy what a run needs of them.
var (
	_ DisplayServer = (*wayland.Server)(nil)
	_ clientEnv     = (*wayland.Server)(nil)
	_ missingOps    = (*wayland.Server)(nil)
	_ windowLocal   = (*wayland.Server)(nil)
	_ Desktop       = (*wayland.Conn)(nil)
)
