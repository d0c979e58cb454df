// Package stage sets the stage a run plays on and strikes it afterwards:
// the X session and its window manager, the application under test and
// its window, the browser, the accessibility bus and the application's
// isolated home. What happens on the way goes out through a Reporter as
// events; why the stage could not be set comes back as a *Failure, which
// the engine judges (docs/architecture.md, "How a run flows"). The package
// knows nothing of tools, guards or verdicts.
package stage

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/kasmrt/kasmrt/drivers/desktop"
	"github.com/kasmrt/kasmrt/drivers/proc"
	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/scenarios"
)

// Reporter is how the stage tells the run what happens while it is set
// and struck.
type Reporter interface {
	// Publish adds an event to the run's stream.
	Publish(e events.Event)
	// Logf adds a log line to the run's stream.
	Logf(format string, args ...any)
	// Offer says what the stage found that decides part of the run's tool
	// list: named controls over AT-SPI (or why there are none), or a
	// browser tab over CDP.
	Offer(o Offer)
}

// Offer is one finding that widens, or explains, the run's tool list.
type Offer struct {
	// Message says what was found, in words.
	Message string
	// Controls is set when the application published named controls, and
	// ControlCount says how many.
	Controls     bool
	ControlCount int
	// NoControls says why click_element cannot be offered.
	NoControls string
	// Tab is set when a browser tab is attached over CDP.
	Tab bool
}

// Config is what the stage needs to know of the run.
type Config struct {
	Files   *scenarios.Files
	Machine Machine
	// Display is the X display to use, or "" for an embedded Xvfb.
	Display string
	// ReportDir holds the application's isolated home (REPORT_DIR/home).
	ReportDir string
	// AppDir is where the application runs.
	AppDir string
	// Unset names the variables the application and the browser must not
	// inherit (the run's secrets).
	Unset []string
	// Getenv reads the runtime's environment.
	Getenv func(string) string
	// Output returns the sink of one process's output (app.log, fatal
	// patterns); it is called once per process.
	Output func() io.Writer
	// Redact removes the run's secrets from text the stage cuts short
	// before it publishes it (console messages).
	Redact func(string) string
}

// Stage is what a run launched: read its fields once Set has returned,
// whatever it returned, and call Strike when the run is done with them.
type Stage struct {
	cfg Config
	rep Reporter

	Server DisplayServer
	Desk   Desktop
	// App is the application under test: the launched app, or the
	// browser standing in for it when the scenario has no app: section.
	App App
	// Window is the window the run checks and focuses, while HasWindow.
	Window    desktop.Window
	HasWindow bool
	// Web is the browser, when the scenario has a browser: section.
	Web *Web
	// A11y is the application over AT-SPI, when the run looks for named
	// controls (or says why it does not).
	A11y *Accessibility
	// AppEnv is what the run adds to the application's environment
	// (display, isolation); declared tools get it too.
	AppEnv []string

	// scratchDirs are the isolated runtime and temporary directories,
	// removed when the stage is struck.
	scratchDirs []string
	// appBus is the app's private session bus, when the run is isolated.
	appBus SessionBus
}

// New prepares a stage; nothing is started until Set.
func New(cfg Config, rep Reporter) *Stage {
	if cfg.Getenv == nil {
		cfg.Getenv = func(string) string { return "" }
	}
	if cfg.Redact == nil {
		cfg.Redact = func(s string) string { return s }
	}
	return &Stage{cfg: cfg, rep: rep}
}

// Set starts the session, the application and finds its window, looks for
// named controls, and starts or attaches the browser. ctx bounds the
// waiting; life bounds what is started, and outlasts ctx so the run's
// final checks still see the application after the work is cut short. An
// error is a *Failure, or ctx's error when the run was cut short.
func (st *Stage) Set(ctx, life context.Context) error {
	files := st.cfg.Files
	op := files.Operator
	sess, err := st.cfg.Machine.StartDisplayServer(ctx, desktop.DisplayOptions{
		Desktop: op.Desktop.Desktop,
		Display: st.cfg.Display, Width: op.Desktop.Width, Height: op.Desktop.Height, Depth: op.Desktop.Depth,
		WindowManager: st.windowManager(),
	})
	if err != nil {
		return couldNotStart(fmt.Sprintf("start the X session: %v", err), err)
	}
	st.Server = sess
	conn, err := st.cfg.Machine.Dial(sess.Display())
	if err != nil {
		return couldNotStart(fmt.Sprintf("connect to the X session: %v", err), err)
	}
	st.Desk = conn
	w, h := conn.ScreenSize()
	st.rep.Publish(events.Event{Data: events.DisplayStarted{
		Display: sess.Display(), Owned: sess.Owned(), Width: w, Height: h,
		WindowManager: sess.WindowManager(), Kept: kept(sess),
	}})
	if m, ok := sess.(missingOps); ok {
		for _, what := range m.Missing() {
			st.rep.Logf("this session lacks %s", what)
		}
	}

	a := files.Scenario.App
	if a == nil {
		// The browser is the application under test.
		return st.launchBrowser(ctx, life)
	}
	st.parkPointer(ctx, nil)
	env, unset, busDisplay := st.appSessionEnv(sess)
	var busEnv []string
	if busDisplay == "" {
		busEnv = env
	}
	isolated, err := st.isolation(life, busDisplay, busEnv)
	if err != nil {
		return couldNotStart(err.Error(), err)
	}
	env = append(env, isolated...)
	st.AppEnv = env
	env = append(env, st.prepareAccessibility(life, busDisplay)...)
	for _, k := range sortedKeys(a.Env) {
		env = append(env, k+"="+a.Env[k])
	}
	p, err := st.cfg.Machine.StartApp(life, proc.Spec{Argv: a.Command, Env: env, Unset: unset, Dir: st.cfg.AppDir, Output: st.cfg.Output()})
	if err != nil {
		return couldNotStart(err.Error(), err)
	}
	st.App = p
	st.rep.Publish(events.Event{Data: events.AppLaunched{PID: p.PID(), Command: a.Command}})
	if st.BrowserIsTheWindow() {
		return st.launchBrowser(ctx, life)
	}

	timeout := st.startupTimeout()
	findCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type found struct {
		w   desktop.Window
		err error
	}
	ch := make(chan found, 1)
	go func() {
		w, err := conn.FindWindow(findCtx, st.windowMatch())
		ch <- found{w, err}
	}()
	select {
	case <-p.Done():
		cancel()
		<-ch
		status := p.ExitStatus()
		st.rep.Publish(events.Event{Kind: events.KindAppExited, Message: status.String()})
		return &Failure{Cause: AppExitedBeforeWindow, Status: status, Err: fmt.Errorf("app %s", status)}
	case f := <-ch:
		if f.err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return &Failure{Cause: NoWindow, Match: st.windowMatch(), Timeout: timeout, What: "window", Err: f.err}
		}
		st.Window, st.HasWindow = f.w, true
	}
	st.rep.Publish(events.Event{
		Box:  &events.Rect{X: st.Window.X, Y: st.Window.Y, W: st.Window.Width, H: st.Window.Height},
		Data: events.AppWindow{ID: fmt.Sprintf("0x%x", st.Window.ID), Title: st.Window.Title, Class: st.Window.Class}})
	if err := st.Desk.Focus(st.Window); err != nil {
		st.rep.Logf("focus the application window: %v", err)
	}
	st.parkPointer(ctx, &st.Window)
	offer := st.discoverControls(ctx)
	st.waitReady(findCtx)
	offer()
	if files.Scenario.Browser != nil {
		return st.launchBrowser(ctx, life)
	}
	return nil
}

// windowMatch describes the application's window as app.window does, or
// by the application's pid when it says nothing.
func (st *Stage) windowMatch() desktop.WindowMatch {
	m := desktop.WindowMatch{}
	if wm := st.cfg.Files.Scenario.App.Window; wm != nil {
		m.Class, m.Title = wm.Class, wm.Title
		if wm.PID == nil || *wm.PID {
			if m.Class == "" && m.Title == "" || wm.PID != nil {
				m.PID = st.App.PID()
			}
		}
	} else {
		m.PID = st.App.PID()
	}
	return m
}

// waitReady waits until the application's window has painted: its area of
// the screen is neither one colour nor changing.
func (st *Stage) waitReady(ctx context.Context) {
	start := time.Now()
	op := st.cfg.Files.Operator.Runner
	painted, err := st.Desk.WaitPainted(ctx, st.Window, desktop.SettleOptions{
		Interval: time.Duration(op.SettleIntervalMS) * time.Millisecond,
		Cap:      time.Duration(op.SettleCapMS) * time.Millisecond,
	})
	switch {
	case err != nil && ctx.Err() == nil:
		st.rep.Logf("wait for the application window to paint: %v", err)
	case !painted:
		st.rep.Logf("the application window was still blank after %.1fs (app.startup_timeout_s); the run goes on", time.Since(start).Seconds())
	}
}

// startupTimeout is the app's startup timeout, or the default.
func (st *Stage) startupTimeout() time.Duration {
	if a := st.cfg.Files.Scenario.App; a != nil && a.StartupTimeout > 0 {
		return time.Duration(a.StartupTimeout * float64(time.Second))
	}
	return scenarios.DefaultStartupTimeoutS * time.Second
}

// windowManager is the window manager the run's embedded Xvfb runs (none
// asked of a Wayland session, whose compositor manages its windows).
func (st *Stage) windowManager() string {
	if st.cfg.Files.Operator.Desktop.Desktop == desktop.DesktopWayland {
		return ""
	}
	if wm := st.cfg.Files.Operator.Desktop.WindowManager; wm != "" {
		return wm
	}
	return desktop.WindowManagerOpenbox
}

// Strike stops everything Set started, in the order that lets each part
// go cleanly: the browser, the application, the accessibility connection
// and bus, the isolated session bus and directories, the X connection and
// the X server. Nothing the run started outlives it.
func (st *Stage) Strike() {
	if err := st.Web.Close(); err != nil {
		st.rep.Logf("close the browser: %v", err)
	}
	if st.App != nil {
		grace := time.Duration(0)
		if st.App.Alive() {
			grace = 2 * time.Second
		}
		if err := st.App.Stop(grace); err != nil {
			st.rep.Logf("stop the application: %v", err)
		}
	}
	st.A11y.close(st.rep)
	st.removeScratch()
	if st.Desk != nil {
		if err := st.Desk.Close(); err != nil {
			st.rep.Logf("close the connection to the X session: %v", err)
		}
	}
	if st.Server != nil {
		if err := st.Server.Close(); err != nil {
			st.rep.Logf("stop the X session: %v", err)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
