package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kasmrt/kasmrt/drivers/atspi"
	"github.com/kasmrt/kasmrt/drivers/x11"
	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/scenarios"
)

// windowManager is the window manager the run's embedded Xvfb runs.
func (s *runState) windowManager() string {
	if wm := s.files.Operator.Session.WindowManager; wm != "" {
		return wm
	}
	return x11.WindowManagerOpenbox
}

// isAppWindow reports whether w belongs to the application: the window
// found at startup, one whose _NET_WM_PID is the app or a descendant, or,
// for a client that sets no pid (Xt apps), one with the startup window's
// WM_CLASS.
func (s *runState) isAppWindow(w x11.Window) bool {
	switch {
	case s.hasWin && w.ID == s.win.ID:
		return true
	case w.PID != 0:
		return s.app != nil && (x11.WindowMatch{PID: s.app.PID(), IncludeHidden: true}).Matches(w)
	}
	return s.hasWin && w.Class != "" && w.Class == s.win.Class && w.Instance == s.win.Instance
}

// appWindow is one of the application's windows as the model and the
// report see it.
type appWindow struct {
	win     x11.Window
	focused bool
}

// appWindows lists the application's mapped windows with a title, bottom
// of the stack first, marking the one with the focus.
func (s *runState) appWindows() ([]appWindow, error) {
	if s.desk == nil || !s.hasWin {
		return nil, nil
	}
	ws, err := s.desk.Windows()
	if err != nil {
		return nil, err
	}
	focused, hasFocus, err := s.desk.FocusedWindow()
	if err != nil {
		return nil, err
	}
	var out []appWindow
	for _, w := range ws {
		if !w.Viewable || w.Title == "" || !s.isAppWindow(w) {
			continue
		}
		out = append(out, appWindow{win: w, focused: hasFocus && focused.ID == w.ID})
	}
	return out, nil
}

// windowTitles describes the application's windows in one line for a tool
// result and the Environment Update: titles in quotes, the focused one
// marked. Titles are the application's text, so they are redacted.
func (s *runState) windowTitles() string {
	ws, err := s.appWindows()
	if err != nil || len(ws) == 0 {
		return ""
	}
	parts := make([]string, 0, len(ws))
	for i := len(ws) - 1; i >= 0; i-- { // top of the stack first
		p := fmt.Sprintf("%q", truncate(s.r.Redact(ws[i].win.Title), 120))
		if ws[i].focused {
			p += " (focused)"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", ")
}

// focusForInput makes sure input reaches the application. While the
// window switch_window chose is open, input goes to it. Otherwise it goes
// to the app's focused window, so a dialog the app opened gets the keys;
// only when no window of the app has the focus does the startup window get
// it.
func (s *runState) focusForInput() {
	if !s.hasWin {
		return
	}
	target := s.currentWindow()
	w, ok, err := s.desk.FocusedWindow()
	if err == nil && ok && (w.ID == target.ID || !s.hasTarget && s.isAppWindow(w)) {
		return
	}
	if err := s.desk.Focus(target); err != nil && !errors.Is(err, x11.ErrWindowGone) {
		s.log("focus the application window: %v", err)
	}
}

// currentWindow is the window click targets and the title condition refer
// to: the one switch_window chose while it exists, else the startup window.
func (s *runState) currentWindow() x11.Window {
	if s.hasTarget {
		if w, err := s.desk.Window(s.target.ID); err == nil && w.Viewable {
			s.target = w
			return w
		}
		s.hasTarget = false
	}
	return s.win
}

// switchWindow gives the focus to a window the scenario named.
func (s *runState) switchWindow(ctx context.Context, name string) result {
	wm, found := s.files.Scenario.Windows[name]
	if !found {
		return failed(failResolution, "no window %q in the scenario's windows", name)
	}
	m := x11.WindowMatch{Class: wm.Class, Title: wm.Title}
	if (wm.PID == nil || *wm.PID) && s.app != nil {
		m.PID = s.app.PID()
	}
	findCtx, cancel := context.WithTimeout(ctx, switchWindowTimeout)
	defer cancel()
	w, err := s.desk.FindWindow(findCtx, m)
	if err != nil {
		if ctx.Err() != nil {
			return failed(failResolution, "switch_window was interrupted: %v", context.Cause(ctx))
		}
		msg := fmt.Sprintf("no window matching %s (window %q) is open", m, name)
		if titles := s.windowTitles(); titles != "" {
			msg += "; the application's windows: " + titles
		}
		return failed(failResolution, "%s", msg)
	}
	if err := s.desk.Focus(w); err != nil {
		return s.driverFailure(err)
	}
	s.target, s.hasTarget = w, true
	return s.settled(ctx, ok(fmt.Sprintf("switched to window %q (%q)", name, s.r.Redact(w.Title))))
}

// switchWindowTimeout is how long switch_window waits for the named window
// to appear (a dialog still opening).
const switchWindowTimeout = 5 * time.Second

// isolation prepares the application's own HOME, XDG directories, TMPDIR
// and D-Bus session bus, and returns their environment. HOME is a fresh
// directory under the report directory (kept with the report, so the files
// the app wrote can be read afterwards) or session.home; the runtime and
// temporary directories are private to the run and removed when it ends. The bus is private
// too: services it starts (dconf keeps GTK apps' settings) write under this
// HOME, and a toolkit without a bus waits on one it tries to start.
func (s *runState) isolation(ctx context.Context, display string) ([]string, error) {
	op := s.files.Operator.Session
	if op.Isolate != nil && !*op.Isolate {
		return nil, nil
	}
	home := filepath.Join(s.rep.Dir(), "home")
	if op.Home != "" {
		home = op.Home
		if !filepath.IsAbs(home) && s.files.Operator.File != "" {
			home = filepath.Join(filepath.Dir(s.files.Operator.File), home)
		}
	}
	// The runtime and temporary directories hold Unix sockets (Chromium's
	// singleton lock, D-Bus, dconf), whose paths may not exceed 107 bytes,
	// so they live in one short private directory under the system's
	// temporary directory rather than deep in the report directory.
	scratch, err := os.MkdirTemp("", "kasmrt-run-")
	if err != nil {
		return nil, fmt.Errorf("prepare the application's runtime directory: %w", err)
	}
	s.scratchDirs = []string{scratch}
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
	bus, err := atspi.StartSessionBus(ctx, display, env...)
	if err != nil {
		return nil, fmt.Errorf("start the application's session bus: %w", err)
	}
	s.appBus = bus
	return append(env, "DBUS_SESSION_BUS_ADDRESS="+bus.Address()), nil
}

// sessionBusAddress is the session bus the app uses: the run's own when it
// is isolated, else the runtime's.
func (s *runState) sessionBusAddress() string {
	if s.appBus != nil {
		return s.appBus.Address()
	}
	return s.r.getenv("DBUS_SESSION_BUS_ADDRESS")
}

// removeScratch stops the isolated session bus and removes the runtime and
// temporary directories.
func (s *runState) removeScratch() {
	if s.appBus != nil {
		if err := s.appBus.Close(); err != nil {
			s.log("stop the application's session bus: %v", err)
		}
	}
	for _, d := range s.scratchDirs {
		if err := os.RemoveAll(d); err != nil {
			s.log("remove %s: %v", d, err)
		}
	}
}

// expectExit is the scenario's expected ending, or nil.
func (s *runState) expectExit() *scenarios.ExpectExit {
	if a := s.files.Scenario.App; a != nil {
		return a.ExpectExit
	}
	return nil
}

// exitedAsExpected reports whether the app has exited with a code the
// scenario expects (app.expect_exit).
func (s *runState) exitedAsExpected() bool {
	e := s.expectExit()
	if e == nil || s.app == nil || s.app.Alive() {
		return false
	}
	st := s.app.ExitStatus()
	if st.Signal != 0 {
		return false
	}
	for _, code := range e.ExitCodes() {
		if st.Code == code {
			return true
		}
	}
	return false
}

// awaitExpectedExit gives an app that must exit the time the scenario
// allows, once the steps or the loop are done.
func (s *runState) awaitExpectedExit(ctx context.Context) {
	e := s.expectExit()
	if e == nil || s.app == nil || s.end != nil {
		return
	}
	within := time.Duration(e.WithinS * float64(time.Second))
	if e.WithinS == 0 {
		within = scenarios.DefaultExpectExitWithinS * time.Second
	}
	select {
	case <-s.app.Done():
	case <-time.After(within):
	case <-ctx.Done():
	}
}

// expectedExitCheck is the final check of app.expect_exit: the app exited,
// with one of the expected codes.
func (s *runState) expectedExitCheck() (events.Check, bool) {
	e := s.expectExit()
	// A run that stopped early for another reason never reached the end
	// the scenario expects, so there is no exit to check.
	if e == nil || s.app == nil || s.end != nil && s.app.Alive() {
		return events.Check{}, false
	}
	c := events.Check{Name: "expected_exit", OK: s.exitedAsExpected()}
	switch {
	case s.app.Alive():
		within := e.WithinS
		if within == 0 {
			within = scenarios.DefaultExpectExitWithinS
		}
		c.Evidence = fmt.Sprintf("the application was still running %gs after the last step; the scenario expects it to exit (app.expect_exit)", within)
	case c.OK:
		c.Evidence = "the application " + s.app.ExitStatus().String()
	default:
		c.Evidence = fmt.Sprintf("the application %s; the scenario expects exit codes %v", s.app.ExitStatus(), e.ExitCodes())
	}
	return c, true
}

// waitReady waits until the application's window has painted: its area of
// the screen is neither blank (one colour, such as a black frame just after
// mapping) nor still changing. ctx bounds it (app.startup_timeout_s); a
// window that never paints is logged, not held against the run: a blank
// window can be what an app shows, and a slow machine's first paint late.
func (s *runState) waitReady(ctx context.Context) {
	start := time.Now()
	op := s.files.Operator.Runner
	painted, err := s.desk.WaitPainted(ctx, s.win, x11.SettleOptions{
		Interval: time.Duration(op.SettleIntervalMS) * time.Millisecond,
		Cap:      time.Duration(op.SettleCapMS) * time.Millisecond,
	})
	switch {
	case err != nil && ctx.Err() == nil:
		s.log("wait for the application window to paint: %v", err)
	case !painted:
		s.log("the application window was still blank after %.1fs (app.startup_timeout_s); the run goes on", time.Since(start).Seconds())
	}
}
