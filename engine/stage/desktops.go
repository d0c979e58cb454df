package stage

import (
	"context"
	"path/filepath"
	"slices"

	"github.com/kasmrt/kasmrt/drivers/desktop"
)

// StartSession starts the session opts.Desktop names: an X session (the
// default) or a Wayland compositor.
func (Drivers) StartDisplayServer(ctx context.Context, opts desktop.DisplayOptions) (DisplayServer, error) {
	if opts.Desktop == desktop.DesktopWayland {
		return startWayland(ctx, opts)
	}
	return startX11(ctx, opts)
}

// Dial connects to a session by its Display: an X display name (":99"),
// or the absolute path of a Wayland session's socket.
func (Drivers) Dial(display string) (Desktop, error) {
	if filepath.IsAbs(display) {
		return dialWayland(display)
	}
	return dialX11(display)
}

// clientEnv is a session whose clients need more than DISPLAY to reach
// it: a Wayland compositor's, whose socket is named by WAYLAND_DISPLAY and
// whose toolkits must be told to use it.
type clientEnv interface {
	// ClientEnv is what a client adds to its environment.
	ClientEnv() []string
	// ClientUnset names what a client must not inherit: the variables
	// that would reach the operator's own session.
	ClientUnset() []string
}

// missingOps is a session that lacks some of what the X11 session offers,
// and says what, so the run can say so when it starts.
type missingOps interface {
	Missing() []string
}

// appSessionEnv is the environment that puts a client on the session, the
// variables it must not inherit besides the run's secrets, and the X
// display a helper (the session bus) is given ("" for none).
func (st *Stage) appSessionEnv(sess DisplayServer) (env, unset []string, display string) {
	if ce, ok := sess.(clientEnv); ok {
		return ce.ClientEnv(), append(slices.Clone(st.cfg.Unset), ce.ClientUnset()...), ""
	}
	return []string{"DISPLAY=" + sess.Display()}, st.cfg.Unset, sess.Display()
}
