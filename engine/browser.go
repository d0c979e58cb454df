package engine

import (
	"context"
	"errors"
	"fmt"
	"image"
	"image/draw"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/kasmrt/kasmrt/drivers/cdp"
	"github.com/kasmrt/kasmrt/drivers/proc"
	"github.com/kasmrt/kasmrt/drivers/x11"
	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/scenarios"
)

// browserTab is what the engine needs of the attached browser tab.
type browserTab interface {
	URL(ctx context.Context) (string, error)
	Navigate(ctx context.Context, url string) error
	ListInteractive(ctx context.Context, filter string) ([]cdp.Element, error)
	ClickDescribed(ctx context.Context, handle, text string) (cdp.Element, error)
	ViewportOrigin(ctx context.Context) (image.Point, error)
	Query(ctx context.Context, selector string) (cdp.ElementState, error)
	Click(ctx context.Context, selector string) error
	Fill(ctx context.Context, selector, value string) error
	Wait(ctx context.Context, spec cdp.WaitSpec) error
	Screenshot(ctx context.Context) (image.Image, error)
}

// Bounds of what the cdp_* tools tell the model, so one busy page cannot
// flood its context.
const (
	maxListedElements   = 60
	maxListChars        = 6000
	maxQueryTextChars   = 500
	defaultCDPWaitS     = 10
	cdpCallTimeout      = 15 * time.Second
	attachPingInterval  = 500 * time.Millisecond
	attachPingTimeout   = 2 * time.Second
	attachPingsToGiveUp = 2
	startPageRetry      = 200 * time.Millisecond
	screenshotAttempts  = 4
	screenshotTimeout   = 2 * time.Second
)

// browserRun is the run's browser: launched by the run or attached to, with
// its one tab. Launched, it ends with the run (process group killed,
// profile removed); attached, the run only disconnects.
type browserRun struct {
	b        browser
	tab      browserTab
	attached bool
	headless bool
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

// close disconnects from the browser and, for a launched one, stops it. It
// is safe on a nil browserRun and to call more than once.
func (w *browserRun) close() error {
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

// pageIsTheScreen reports whether captures come from the page rather than
// the X screen. It is false on a nil browserRun.
func (w *browserRun) pageIsTheScreen() bool { return w != nil && w.pageScreen }

// screenshot captures the page's viewport. A capture asked for while the
// page navigates can wait for a frame that never comes (seen about once in
// four right after a click that follows a link), so each attempt is short
// and a stalled one is asked again.
func (w *browserRun) screenshot(ctx context.Context) (*image.RGBA, error) {
	var img image.Image
	var err error
	for range screenshotAttempts {
		attemptCtx, cancel := context.WithTimeout(ctx, screenshotTimeout)
		img, err = w.tab.Screenshot(attemptCtx)
		cancel()
		if err == nil || ctx.Err() != nil {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	if rgba, ok := img.(*image.RGBA); ok {
		return rgba, nil
	}
	rgba := image.NewRGBA(img.Bounds())
	draw.Draw(rgba, rgba.Bounds(), img, img.Bounds().Min, draw.Src)
	return rgba, nil
}

func (w *browserRun) alive() bool {
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
type browserApp struct{ w *browserRun }

func (a browserApp) PID() int              { return a.w.b.PID() }
func (a browserApp) Alive() bool           { return a.w.alive() }
func (a browserApp) Done() <-chan struct{} { return a.w.done }

// ExitStatus is how the browser's process ended; an attached browser whose
// connection was lost has no status of ours and reads as exit -1.
func (a browserApp) ExitStatus() proc.Status {
	if a.w.alive() {
		return proc.Status{Running: true, Code: -1}
	}
	if st := a.w.b.ExitStatus(); !st.Running {
		return st
	}
	return proc.Status{Code: -1}
}

func (a browserApp) Stop(time.Duration) error {
	a.w.close()
	return nil
}

// browserIsTheWindow reports whether the browser's window is the one the
// run checks and focuses: a browser-only scenario, or an app with a
// browser and no app.window (an app that serves the page, such as a web
// server, shows its face in the browser and has no window of its own).
func (s *runState) browserIsTheWindow() bool {
	sc := s.files.Scenario
	return sc.Browser != nil && (sc.App == nil || sc.App.Window == nil)
}

// launchBrowser launches or attaches to the scenario's browser, opens the
// start page and offers the cdp_* tools. Without an app: section the
// browser is the application under test: process_alive follows it and
// window_present its window (none when headless or attached). With an app:
// section, the app was launched first and process_alive keeps following
// the app; window_present follows the app's window when app.window names
// one, else the browser's. fatal_patterns see the browser's output too.
func (s *runState) launchBrowser(ctx context.Context) error {
	spec := s.files.Scenario.Browser
	underTest := s.files.Scenario.App == nil
	ownsWindow := s.browserIsTheWindow()
	w := &browserRun{attached: spec.Mode == "attach", headless: spec.Headless}
	w.pageScreen = ownsWindow && w.headless && !w.attached
	var err error
	if w.attached {
		w.b, err = s.r.machine.AttachBrowser(ctx, spec.Attach)
	} else {
		width, height := s.desk.ScreenSize()
		// The start page is loaded by Navigate below, which waits for it,
		// rather than from the command line, which does not.
		w.b, err = s.r.machine.LaunchBrowser(ctx, cdp.LaunchOptions{
			Display: s.session.Display(), Headless: spec.Headless,
			Width: width, Height: height, Output: s.outputScanner(),
			Unset: s.r.secretVariables(),
		})
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		s.stop(events.VerdictTestError, OutcomeLaunchFailed, explainBrowserStart(spec.Mode == "attach", spec.Attach, err))
		return err
	}
	w.tab = w.b.Tab()
	s.web = w
	w.stopConsole = s.watchConsole(w)
	if w.attached {
		w.done = s.watchAttached(w)
		s.log("attached to Chromium at %s; closing the run only disconnects", spec.Attach)
	} else {
		w.done = w.b.Done()
		if underTest {
			s.publish(events.Event{Data: events.AppLaunched{
				PID: w.b.PID(), Command: []string{cdp.DefaultExecPath}, Browser: "launch", Headless: spec.Headless,
			}})
		} else {
			s.log("launched Chromium (pid %d) beside the application", w.b.PID())
		}
	}
	if underTest {
		s.app = browserApp{w}
	}

	if spec.StartURL != "" {
		if err := s.openStartPage(ctx, w, spec.StartURL); err != nil {
			return err
		}
	}

	if err := s.findBrowserWindow(ctx, w, ownsWindow); err != nil {
		return err
	}

	offers := s.offers
	offers.CDPTab = true
	s.setTools(offers)
	s.publish(events.Event{Message: "a browser tab is attached over CDP",
		Data: events.ToolList{Tools: s.names, CDPTab: true}})
	return nil
}

// openStartPage navigates to the start page. An app that serves the page
// may not listen yet, so a failed load is retried until the startup
// timeout, for as long as the app and the browser live.
func (s *runState) openStartPage(ctx context.Context, w *browserRun, startURL string) error {
	timeout := s.startupTimeout()
	navCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		err := w.tab.Navigate(navCtx, startURL)
		if err == nil {
			return nil
		}
		var why string
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.appDone():
			st := s.app.ExitStatus()
			s.publish(events.Event{Kind: events.KindAppExited, Message: st.String()})
			s.stop(events.VerdictAppFailed, OutcomeAppExited, fmt.Sprintf("the application %s before the start page opened", st))
			return err
		case <-w.done:
			why = "the browser went away"
		case <-navCtx.Done():
			why = fmt.Sprintf("it did not load within %s", timeout)
		case <-time.After(startPageRetry):
			continue
		}
		// The screen shows what the browser made of it (an error page, a
		// dialog, a blank tab).
		if _, noScreen := s.failureScreen(ctx, 0); noScreen != "" {
			s.log("no screen at the start page's failure: %s", noScreen)
		}
		s.stop(events.VerdictAppFailed, OutcomeStartup, fmt.Sprintf(
			"open the start page: %s; check browser.start_url and that the server behind it is up (%v)", why, err))
		return err
	}
}

// findBrowserWindow finds a launched, headful browser's window. When the
// browser is the application under test, that window is the one
// window_present checks and input focuses.
func (s *runState) findBrowserWindow(ctx context.Context, w *browserRun, ownsWindow bool) error {
	switch {
	case w.attached:
		if ownsWindow {
			s.log("the attached browser's window is not the run's to check; window_present is skipped and screens show the run's X display only")
		}
		return nil
	case w.headless:
		if ownsWindow {
			s.log("the browser is headless: it has no window, so window_present is skipped and screens come from the page")
		}
		return nil
	}
	timeout := s.startupTimeout()
	findCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// The PID match covers the wrapper script's children, which is where
	// Chromium's windows come from.
	m := x11.WindowMatch{PID: w.b.PID()}
	win, err := s.desk.FindWindow(findCtx, m)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !w.alive() {
			s.stop(events.VerdictAppFailed, OutcomeAppExited, "the browser exited before its window appeared")
			return errors.New("browser exited")
		}
		if !ownsWindow {
			s.log("no browser window matching %s appeared within %s", m, timeout)
			return nil
		}
		s.startupTimedOut(ctx, m, timeout, "browser window")
		return err
	}
	if !ownsWindow {
		return nil
	}
	s.win, s.hasWin = win, true
	s.publish(events.Event{
		Box:  &events.Rect{X: win.X, Y: win.Y, W: win.Width, H: win.Height},
		Data: events.AppWindow{ID: fmt.Sprintf("0x%x", win.ID), Title: win.Title, Class: win.Class}})
	if err := s.desk.Focus(win); err != nil {
		s.log("focus the browser window: %v", err)
	}
	return nil
}

// startupTimeout is the app's startup timeout, or the default.
func (s *runState) startupTimeout() time.Duration {
	if a := s.files.Scenario.App; a != nil && a.StartupTimeout > 0 {
		return time.Duration(a.StartupTimeout * float64(time.Second))
	}
	return scenarios.DefaultStartupTimeoutS * time.Second
}

// watchAttached returns a channel closed once an attached browser's
// DevTools endpoint stops answering: the browser, or the way to it, is gone.
// It asks the HTTP endpoint rather than the page, so a page that is busy or
// shows a dialog does not pass for a lost browser.
func (s *runState) watchAttached(w *browserRun) <-chan struct{} {
	done := make(chan struct{})
	ctx, cancel := context.WithCancel(s.life)
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

// cdpCall is the body of a cdp_* tool: ctx bounds the step, callCtx one
// DevTools call (cdpCallTimeout).
type cdpCall func(s *runState, ctx, callCtx context.Context, c call) result

// cdpTool makes a cdp_* tool's body a built-in tool: it needs the attached
// tab, and every DevTools call it makes is bounded. The model names
// elements by handle, by text or by a cdp_targets name, never by selector
// or script; values come from provides: by ref, and only their length is
// ever reported.
func cdpTool(body cdpCall) builtinTool {
	return func(s *runState, ctx context.Context, _ int, c call) result {
		if s.web == nil {
			return failed(failResolution, "%s: no browser tab is attached", c.Tool)
		}
		callCtx, cancel := context.WithTimeout(ctx, cdpCallTimeout)
		defer cancel()
		return body(s, ctx, callCtx, c)
	}
}

func (s *runState) cdpURL(_, callCtx context.Context, _ call) result {
	u, err := s.web.tab.URL(callCtx)
	if err != nil {
		return s.cdpFailure(err)
	}
	return ok(u)
}

func (s *runState) cdpListInteractive(_, callCtx context.Context, c call) result {
	filter, _ := c.Args["filter"].(string)
	els, err := s.web.tab.ListInteractive(callCtx, filter)
	if err != nil {
		return s.cdpFailure(err)
	}
	return ok(listInteractive(els, filter, s.r.Redact))
}

// cdpTarget resolves a call's target, a cdp_targets name, to the selector
// the scenario gives it.
func (s *runState) cdpTarget(c call) (target, selector string, r result) {
	target, _ = c.Args["target"].(string)
	selector, found := s.files.Scenario.CDPTargets[target]
	if !found {
		return target, "", failed(failResolution, "no cdp target %q", target)
	}
	return target, selector, result{}
}

func (s *runState) cdpQuery(_, callCtx context.Context, c call) result {
	target, sel, r := s.cdpTarget(c)
	if r.status != "" {
		return r
	}
	st, err := s.web.tab.Query(callCtx, sel)
	if err != nil {
		return s.cdpFailure(err)
	}
	if !st.Found && c.Source == "script" {
		// A script reads an element it expects to be there; the model,
		// exploring, is told and carries on.
		return failed(failAssertion, "%s", describeState(target, st, s.r.Redact))
	}
	return ok(describeState(target, st, s.r.Redact))
}

func (s *runState) cdpClick(ctx, callCtx context.Context, c call) result {
	target, sel, r := s.cdpTarget(c)
	if r.status != "" {
		return r
	}
	return s.cdpInput(ctx, func() error { return s.web.tab.Click(callCtx, sel) }, "clicked "+target)
}

// cdpFill fills a named element with a provided value; the result names
// its ref and length, never the value.
func (s *runState) cdpFill(ctx, callCtx context.Context, c call) result {
	target, sel, r := s.cdpTarget(c)
	if r.status != "" {
		return r
	}
	ref, _ := c.Args["ref"].(string)
	value, secret, found := s.files.Scenario.Value(ref)
	if !found {
		return failed(failResolution, "no provided value %q", ref)
	}
	if r := s.secretPlaceRefusal(ctx, c.Tool, ref, target); r.status != "" {
		return r
	}
	what := "value"
	if secret {
		what = "secret value"
	}
	return s.cdpInput(ctx, func() error { return s.web.tab.Fill(callCtx, sel, value) },
		fmt.Sprintf("filled %s with the %s %q (%d characters)", target, what, ref, len([]rune(value))))
}

// cdpClickDescribed clicks an element by handle or text; not found and
// ambiguous go back to the model with the candidates.
func (s *runState) cdpClickDescribed(ctx, callCtx context.Context, c call) result {
	handle, _ := c.Args["handle"].(string)
	text, _ := c.Args["text"].(string)
	handle, text = strings.TrimSpace(handle), strings.TrimSpace(text)
	if (handle == "") == (text == "") {
		return failed(failMalformed, "cdp_click_described takes a handle or a text: exactly one of them")
	}
	var el cdp.Element
	r := s.cdpInput(ctx, func() error {
		var err error
		el, err = s.web.tab.ClickDescribed(callCtx, handle, text)
		return err
	}, "")
	if r.status != events.StatusOK {
		return r
	}
	r.message = "clicked " + el.String()
	if s.web.pageIsTheScreen() && !el.Box.Empty() {
		// The capture is the page's viewport, so the box is where it shows.
		r.point = &events.Point{X: (el.Box.Min.X + el.Box.Max.X) / 2, Y: (el.Box.Min.Y + el.Box.Max.Y) / 2}
	} else if s.hasWin && !s.web.headless && !s.web.attached && !el.Box.Empty() {
		if origin, err := s.web.tab.ViewportOrigin(callCtx); err == nil {
			c := el.Box.Add(origin)
			r.point = &events.Point{X: (c.Min.X + c.Max.X) / 2, Y: (c.Min.Y + c.Max.Y) / 2}
		}
	}
	return r
}

// cdpInput runs a page-changing action and captures the settled screen,
// like the X11 input tools (step clears the observation record).
func (s *runState) cdpInput(ctx context.Context, act func() error, done string) result {
	err := act()
	if err != nil {
		return s.cdpFailure(err)
	}
	return s.settled(ctx, ok(done))
}

// cdpWait waits for a condition the scenario named, counted against the
// waiting budget.
func (s *runState) cdpWait(ctx context.Context, c call) result {
	name, _ := c.Args["name"].(string)
	cw, found := s.files.Scenario.CDPWaits[name]
	if !found {
		return failed(failResolution, "no cdp wait %q", name)
	}
	spec := cdp.WaitSpec{State: cw.State, URLContains: cw.URL}
	if cw.Target != "" {
		spec.Selector = s.files.Scenario.CDPTargets[cw.Target]
	}
	timeout := time.Duration(cw.Timeout * float64(time.Second))
	if timeout <= 0 {
		timeout = defaultCDPWaitS * time.Second
	}
	return s.hold(ctx, timeout, func(ctx context.Context) result {
		waitCtx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		start := time.Now()
		err := s.web.tab.Wait(waitCtx, spec)
		if err != nil {
			var te *cdp.WaitTimeoutError
			if errors.As(err, &te) {
				return failed(failResolution, "%s did not hold within %.1fs; last seen: %s", name, time.Since(start).Seconds(), te.Last)
			}
			return s.cdpFailure(err)
		}
		return s.settled(ctx, ok(fmt.Sprintf("%s held after %.1fs", name, time.Since(start).Seconds())))
	})
}

// cdpFailure turns a driver error into a resolution failure the model can
// act on; a browser that is gone is left to the checks after the step.
func (s *runState) cdpFailure(err error) result {
	if s.web != nil && !s.web.alive() {
		return failed(failResolution, "the browser is gone: %v", err)
	}
	return failed(failResolution, "%s", explainDriverError(err))
}

// listInteractive formats elements one a line, as the model uses them in
// cdp_click_described ("e12 button \"Log in\""), capped.
func listInteractive(els []cdp.Element, filter string, redact func(string) string) string {
	if len(els) == 0 {
		if filter != "" {
			return fmt.Sprintf("no interactive elements match %q", filter)
		}
		return "the page has no interactive elements"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d interactive elements (click one with cdp_click_described by handle):", len(els))
	shown := 0
	for _, e := range els {
		// Redact page text before it is quoted, or an escaped secret
		// would slip past the redactor.
		e.Name, e.Text = redact(e.Name), redact(e.Text)
		line := "\n" + e.String()
		if shown == maxListedElements || b.Len()+len(line) > maxListChars {
			break
		}
		b.WriteString(line)
		shown++
	}
	if rest := len(els) - shown; rest > 0 {
		fmt.Fprintf(&b, "\n… %d more not shown; narrow the list with a filter", rest)
	}
	return b.String()
}

// describeState says what cdp_query found. A password input's value is
// never read (the driver leaves it empty), and the text is cut short.
func describeState(target string, st cdp.ElementState, redact func(string) string) string {
	if !st.Found {
		return target + ": not found"
	}
	vis := "hidden"
	if st.Visible {
		vis = "visible"
	}
	msg := fmt.Sprintf("%s: found, %s", target, vis)
	if st.Text != "" {
		msg += fmt.Sprintf(", text %q", truncate(redact(st.Text), maxQueryTextChars))
	}
	if st.Value != "" {
		msg += fmt.Sprintf(", value %q", truncate(redact(st.Value), maxQueryTextChars))
	}
	return msg
}
