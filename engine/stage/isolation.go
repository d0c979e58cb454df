package stage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// isolation prepares the application's own HOME, XDG directories, TMPDIR
// and D-Bus session bus, and returns their environment. HOME is a fresh
// directory under the report directory (kept with the report, so the files
// the app wrote can be read afterwards) or session.home; the runtime and
// temporary directories are private to the run and removed when it ends.
// The bus is private too: services it starts (dconf keeps GTK apps'
// settings) write under this HOME, and a toolkit without a bus waits on
// one it tries to start.
//
// sessionEnv is what puts a client on the desktop session beyond DISPLAY
// (a Wayland compositor's socket): the bus's services get it too, so a
// service the application activates (a portal) reaches the same screen.
func (st *Stage) isolation(ctx context.Context, display string, sessionEnv []string) ([]string, error) {
	op := st.cfg.Files.Operator.Desktop
	if op.Isolate != nil && !*op.Isolate {
		return nil, nil
	}
	home := filepath.Join(st.cfg.ReportDir, "home")
	if op.Home != "" {
		home = op.Home
		if !filepath.IsAbs(home) && st.cfg.Files.Operator.File != "" {
			home = filepath.Join(filepath.Dir(st.cfg.Files.Operator.File), home)
		}
	}
	// The application starts in app.dir, not where the runtime was
	// started: a relative HOME (from a relative --report) would name a
	// directory beside the scenario, so the app's settings and files would
	// land there and a stray folder would show in its file dialogs.
	home, err := filepath.Abs(home)
	if err != nil {
		return nil, fmt.Errorf("prepare the application's HOME: %w", err)
	}
	// The runtime and temporary directories hold Unix sockets (Chromium's
	// singleton lock, D-Bus, dconf), whose paths may not exceed 107 bytes,
	// so they live in one short private directory under the system's
	// temporary directory rather than deep in the report directory.
	scratch, err := os.MkdirTemp("", "kasmrt-run-")
	if err != nil {
		return nil, fmt.Errorf("prepare the application's runtime directory: %w", err)
	}
	st.scratchDirs = []string{scratch}
	runtime := filepath.Join(scratch, "runtime")
	tmp := filepath.Join(scratch, "tmp")
	dirs := map[string]string{
		"HOME":            home,
		"XDG_CONFIG_HOME": filepath.Join(home, ".config"),
		"XDG_DATA_HOME":   filepath.Join(home, ".local", "share"),
		"XDG_CACHE_HOME":  filepath.Join(home, ".cache"),
		"XDG_STATE_HOME":  filepath.Join(home, ".local", "state"),
		"XDG_RUNTIME_DIR": runtime,
		"TMPDIR":          tmp,
	}
	var env []string
	for _, k := range sortedKeys(dirs) {
		// The runtime directory must be private to the user (XDG base
		// directory specification); the others follow a home's usual mode.
		if err := os.MkdirAll(dirs[k], 0o700); err != nil {
			return nil, fmt.Errorf("prepare the application's %s: %w", k, err)
		}
		env = append(env, k+"="+dirs[k])
	}
	bus, err := st.cfg.Machine.StartSessionBus(ctx, display, append(slices.Clone(sessionEnv), env...)...)
	if err != nil {
		return nil, fmt.Errorf("start the application's session bus: %w", err)
	}
	st.appBus = bus
	return append(env, "DBUS_SESSION_BUS_ADDRESS="+bus.Address()), nil
}

// sessionBusAddress is the session bus the app uses: the run's own when it
// is isolated, else the runtime's.
func (st *Stage) sessionBusAddress() string {
	if st.appBus != nil {
		return st.appBus.Address()
	}
	return st.cfg.Getenv("DBUS_SESSION_BUS_ADDRESS")
}

// removeScratch stops the isolated session bus and removes the runtime and
// temporary directories.
func (st *Stage) removeScratch() {
	if st.appBus != nil {
		if err := st.appBus.Close(); err != nil {
			st.rep.Logf("stop the application's session bus: %v", err)
		}
	}
	for _, d := range st.scratchDirs {
		if err := os.RemoveAll(d); err != nil {
			st.rep.Logf("remove %s: %v", d, err)
		}
	}
}
