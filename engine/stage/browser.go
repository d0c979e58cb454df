package stage

import (
	"context"
	"fmt"
	"image"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/kasmrt/kasmrt/drivers/cdp"
	"github.com/kasmrt/kasmrt/drivers/desktop"
	"github.com/kasmrt/kasmrt/drivers/proc"
	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/internal/screenpng"
)

// How an attached browser is watched, how the start page is retried and
// how the page is captured.
const (
	attachPingInterval  = 500 * time.Millisecond
	attachPingTimeout   = 2 * time.Second
	attachPingsToGiveUp = 2
	startPageRetry      = 200 * time.Millisecond
	screenshotAttempts  = 4
	screenshotTimeout   = 2 * time.Second
)

// Web is the run's browser: launched by the run or attached to, with its
// one tab. Launched, it ends with the run (process group killed, profile
// removed); attached, the run only disconnects.
type Web struct {
	b        Browser
	Tab      BrowserTab
	Attached bool
	Headless bool
	// pageScreen is set when the page is the screen: the browser's window
	// is the one under test but the browser is headless, so captures come
	// from the browser. An attached browser is left to the X screen: its
	// screenshots were seen to stall (a background tab, or one in the
	// middle of a navigation), and its window may be on any display.
	pageScreen bool
	// done is closed when a launched browser exits, or when an attached
	// browser's DevTools endpoint stops answering.
	done      <-chan struct{}
	stopWatch context.CancelFunc
	// stopConsole ends the watch of the page's console.
	stopConsole func()

	closeOnce sync.Once
	closeErr  error
}

// Close disconnects from the browser and, for a launched one, stops it. It
// is safe on a nil Web and to call more than once.
func (w *Web) Close() error {
	if w == nil {
		return nil
	}
	w.closeOnce.Do(func() {
		if w.stopWatch != nil {
			w.stopWatch()
		}
		if w.stopConsole != nil {
			w.stopConsole()
		}
		w.closeErr = w.b.Close()
	})
	return w.closeErr
}

// PageIsTheScreen reports whether captures come from the page rather than
// the X screen. It is false on a nil Web.
func (w *Web) PageIsTheScreen() bool { return w != nil && w.pageScreen }

// Screenshot captures the page's viewport and decodes it.
func (w *Web) Screenshot(ctx context.Context) (*image.RGBA, error) {
	data, err := w.CapturePNG(ctx)
	if err != nil {
		return nil, err
	}
	img, err := screenpng.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("capture page: decode: %w", err)
	}
	return img, nil
}

// CapturePNG captures the page's viewport as the PNG the browser encoded,
// undecoded: the report keeps it as it is, and a caller that needs the
// pixels decodes it when it does. The driver waits for a load under way
// before it asks, which is when a capture was seen to wait for a frame
// that never came (about once in four right after a click on a link);
// each attempt is still short and a stalled one is asked again.
func (w *Web) CapturePNG(ctx context.Context) ([]byte, error) {
	var data []byte
	var err error
	for range screenshotAttempts {
		attemptCtx, cancel := context.WithTimeout(ctx, screenshotTimeout)
		data, err = w.Tab.CapturePNG(attemptCtx)
		cancel()
		if err == nil || ctx.Err() != nil {
			break
		}
	}
	return data, err
}

// Alive reports whether the browser is still there.
func (w *Web) Alive() bool {
	select {
	case <-w.done:
		return false
	default:
		return true
	}
}

// browserApp is the browser standing in as the application under test when
// the scenario has no app: section, so the deterministic checks and the
// waits follow the browser.
type browserApp struct{ w *Web }

func (a browserApp) PID() int              { return a.w.b.PID() }
func (a browserApp) Alive() bool           { return a.w.Alive() }
func (a browserApp) Done() <-chan struct{} { return a.w.done }

// ExitStatus is how the browser's process ended; an attached browser whose
// connection was lost has no status of ours and reads as exit -1.
func (a browserApp) ExitStatus() proc.Status {
	if a.w.Alive() {
		return proc.Status{Running: true, Code: -1}
	}
	if st := a.w.b.ExitStatus(); !st.Running {
		return st
	}
	return proc.Status{Code: -1}
}

func (a browserApp) Stop(time.Duration) error {
	a.w.Close()
	return nil
}

// BrowserIsTheWindow reports whether the browser's window is the one the
// run checks and focuses: a browser-only scenario, or an app with a
// browser and no app.window (an app that serves the page, such as a web
// server, shows its face in the browser and has no window of its own).
func (st *Stage) BrowserIsTheWindow() bool {
	sc := st.cfg.Files.Scenario
	return sc.Browser != nil && (sc.App == nil || sc.App.Window == nil)
}

// launchBrowser launches or attaches to the scenario's browser, opens the
// start page and offers the cdp_* tools. Without an app: section the
// browser is the application under test: process_alive follows it and
// window_present its window (none when headless or attached). With an app:
// section, the app was launched first and process_alive keeps following
// the app; window_present follows the app's window when app.window names
// one, else the browser's. fatal_patterns see the browser's output too.
func (st *Stage) launchBrowser(ctx, life context.Context) error {
	spec := st.cfg.Files.Scenario.Browser
	underTest := st.cfg.Files.Scenario.App == nil
	ownsWindow := st.BrowserIsTheWindow()
	w := &Web{Attached: spec.Mode == "attach", Headless: spec.Headless}
	w.pageScreen = ownsWindow && w.Headless && !w.Attached
	var err error
	if w.Attached {
		w.b, err = st.cfg.Machine.AttachBrowser(ctx, spec.Attach)
	} else {
		width, height := st.Desk.ScreenSize()
		// The start page is loaded by Navigate below, which waits for it,
		// rather than from the command line, which does not.
		w.b, err = st.cfg.Machine.LaunchBrowser(ctx, cdp.LaunchOptions{
			Display: st.Server.Display(), Headless: spec.Headless,
			Width: width, Height: height, Output: st.cfg.Output(),
			Unset: st.cfg.Unset,
		})
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &Failure{Cause: BrowserCouldNotStart, Attach: w.Attached, Address: spec.Attach, Err: err}
	}
	w.Tab = w.b.Tab()
	st.Web = w
	w.stopConsole = st.watchConsole(life, w)
	if w.Attached {
		w.done = st.watchAttached(life, w)
		st.rep.Logf("attached to Chromium at %s; closing the run only disconnects", spec.Attach)
	} else {
		w.done = w.b.Done()
		if underTest {
			st.rep.Publish(events.Event{Data: events.AppLaunched{
				PID: w.b.PID(), Command: []string{cdp.DefaultExecPath}, Browser: "launch", Headless: spec.Headless,
			}})
		} else {
			st.rep.Logf("launched Chromium (pid %d) beside the application", w.b.PID())
		}
	}
	if underTest {
		st.App = browserApp{w}
	}

	if spec.StartURL != "" {
		if err := st.openStartPage(ctx, w, spec.StartURL); err != nil {
			return err
		}
	}

	if err := st.findBrowserWindow(ctx, w, ownsWindow); err != nil {
		return err
	}
	st.rep.Offer(Offer{Message: "a browser tab is attached over CDP", Tab: true})
	return nil
}

// appDone is closed when the application ends; nil (never) without one.
func (st *Stage) appDone() <-chan struct{} {
	if st.App == nil {
		return nil
	}
	return st.App.Done()
}

// openStartPage navigates to the start page. An app that serves the page
// may not listen yet, so a failed load is retried until the startup
// timeout, for as long as the app and the browser live.
func (st *Stage) openStartPage(ctx context.Context, w *Web, startURL string) error {
	timeout := st.startupTimeout()
	navCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		err := w.Tab.Navigate(navCtx, startURL)
		if err == nil {
			st.awaitStartPageDrawn(ctx, w)
			return nil
		}
		var why string
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-st.appDone():
			status := st.App.ExitStatus()
			st.rep.Publish(events.Event{Kind: events.KindAppExited, Message: status.String()})
			return &Failure{Cause: AppExitedBeforeStartPage, Status: status, Err: err}
		case <-w.done:
			why = "the browser went away"
		case <-navCtx.Done():
			why = fmt.Sprintf("it did not load within %s", timeout)
		case <-time.After(startPageRetry):
			continue
		}
		return &Failure{Cause: StartPageFailed, Err: err, Reason: fmt.Sprintf(
			"open the start page: %s; check browser.start_url and that the server behind it is up (%v)", why, err)}
	}
}

// startPageDrawnTimeout bounds the wait for a headful start page's first
// frames.
const startPageDrawnTimeout = 3 * time.Second

// awaitStartPageDrawn waits, in a headful browser the run launched, for the
// loaded start page to have drawn its frames: its window is captured from
// the X screen, which stays still and blank between the load and the first
// frame, so the run's first screen could show an empty page otherwise.
func (st *Stage) awaitStartPageDrawn(ctx context.Context, w *Web) {
	d, ok := w.Tab.(interface {
		Drawn(ctx context.Context) (time.Duration, error)
	})
	if w.Headless || w.Attached || !ok {
		return
	}
	drawCtx, cancel := context.WithTimeout(ctx, startPageDrawnTimeout)
	defer cancel()
	if _, err := d.Drawn(drawCtx); err != nil && ctx.Err() == nil {
		st.rep.Logf("wait for the start page to be drawn: %v", err)
	}
}

// findBrowserWindow finds a launched, headful browser's window. When the
// browser is the application under test, that window is the one
// window_present checks and input focuses.
func (st *Stage) findBrowserWindow(ctx context.Context, w *Web, ownsWindow bool) error {
	switch {
	case w.Attached:
		if ownsWindow {
			st.rep.Logf("the attached browser's window is not the run's to check; window_present is skipped and screens show the run's X display only")
		}
		return nil
	case w.Headless:
		if ownsWindow {
			st.rep.Logf("the browser is headless: it has no window, so window_present is skipped and screens come from the page")
		}
		return nil
	}
	timeout := st.startupTimeout()
	findCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// The PID match covers the wrapper script's children, which is where
	// Chromium's windows come from.
	m := desktop.WindowMatch{PID: w.b.PID()}
	win, err := st.Desk.FindWindow(findCtx, m)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !w.Alive() {
			return &Failure{Cause: BrowserExited, Reason: "the browser exited before its window appeared", Err: err}
		}
		if !ownsWindow {
			st.rep.Logf("no browser window matching %s appeared within %s", m, timeout)
			return nil
		}
		return &Failure{Cause: NoWindow, Match: m, Timeout: timeout, What: "browser window", Err: err}
	}
	if !ownsWindow {
		return nil
	}
	st.Window, st.HasWindow = win, true
	st.rep.Publish(events.Event{
		Box:  &events.Rect{X: win.X, Y: win.Y, W: win.Width, H: win.Height},
		Data: events.AppWindow{ID: fmt.Sprintf("0x%x", win.ID), Title: win.Title, Class: win.Class}})
	if err := st.Desk.Focus(win); err != nil {
		st.rep.Logf("focus the browser window: %v", err)
	}
	return nil
}

// watchAttached returns a channel closed once an attached browser's
// DevTools endpoint stops answering: the browser, or the way to it, is gone.
// It asks the HTTP endpoint rather than the page, so a page that is busy or
// shows a dialog does not pass for a lost browser.
func (st *Stage) watchAttached(life context.Context, w *Web) <-chan struct{} {
	done := make(chan struct{})
	ctx, cancel := context.WithCancel(life)
	w.stopWatch = cancel
	version := versionURL(w.b.DebuggerURL())
	go func() {
		failures := 0
		tick := time.NewTicker(attachPingInterval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if ping(ctx, version) == nil {
				failures = 0
				continue
			}
			if ctx.Err() != nil {
				return
			}
			if failures++; failures >= attachPingsToGiveUp {
				close(done)
				return
			}
		}
	}()
	return done
}

// versionURL is the /json/version address of a browser websocket address.
func versionURL(ws string) string {
	u, err := url.Parse(ws)
	if err != nil {
		return ""
	}
	scheme := "http"
	if u.Scheme == "wss" || u.Scheme == "https" {
		scheme = "https"
	}
	return scheme + "://" + u.Host + "/json/version"
}

func ping(ctx context.Context, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, attachPingTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, addr, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", addr, resp.Status)
	}
	return nil
}
