package engine

import (
	"context"
	"errors"
	"fmt"
	"image"
	"strings"
	"time"

	"github.com/kasmrt/kasmrt/drivers/cdp"
	"github.com/kasmrt/kasmrt/engine/events"
)

// Bounds of what the cdp_* tools tell the model, so one busy page cannot
// flood its context.
const (
	maxListedElements = 60
	maxListChars      = 6000
	maxQueryTextChars = 500
	defaultCDPWaitS   = 10
	cdpCallTimeout    = 15 * time.Second
	// pageDrawnTimeout bounds the wait for a headful page to have drawn
	// what an action led to; the screen is captured when it settles
	// either way.
	pageDrawnTimeout = 3 * time.Second
)

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
		if s.env.web == nil {
			return failed(failResolution, "%s: no browser tab is attached", c.Tool)
		}
		callCtx, cancel := context.WithTimeout(ctx, cdpCallTimeout)
		defer cancel()
		return body(s, ctx, callCtx, c)
	}
}

func (a *actor) cdpURL(_, callCtx context.Context, _ call) result {
	u, err := a.env.web.Tab.URL(callCtx)
	if err != nil {
		return a.cdpFailure(err)
	}
	return ok(u)
}

func (a *actor) cdpListInteractive(_, callCtx context.Context, c call) result {
	filter, _ := c.Args["filter"].(string)
	els, err := a.env.web.Tab.ListInteractive(callCtx, filter)
	if err != nil {
		return a.cdpFailure(err)
	}
	return ok(listInteractive(els, filter, a.r.Redact))
}

// cdpTarget resolves a call's target, a cdp_targets name, to the selector
// the scenario gives it.
func (a *actor) cdpTarget(c call) (target, selector string, r result) {
	target, _ = c.Args["target"].(string)
	selector, found := a.files.Scenario.CDPTargets[target]
	if !found {
		return target, "", failed(failResolution, "no cdp target %q", target)
	}
	return target, selector, result{}
}

func (a *actor) cdpQuery(_, callCtx context.Context, c call) result {
	target, sel, r := a.cdpTarget(c)
	if r.status != "" {
		return r
	}
	st, err := a.env.web.Tab.Query(callCtx, sel)
	if err != nil {
		return a.cdpFailure(err)
	}
	if !st.Found && c.Source == events.SourceScript {
		// A script reads an element it expects to be there; the model,
		// exploring, is told and carries on.
		return failed(failAssertion, "%s", describeState(target, st, a.r.Redact))
	}
	return ok(describeState(target, st, a.r.Redact))
}

func (a *actor) cdpClick(ctx, callCtx context.Context, c call) result {
	target, sel, r := a.cdpTarget(c)
	if r.status != "" {
		return r
	}
	pc, marks := a.env.web.Tab.(pointClicker)
	if !marks {
		return a.cdpInput(ctx, func() error { return a.env.web.Tab.Click(callCtx, sel) }, "clicked "+target)
	}
	var at image.Point
	r = a.cdpInput(ctx, func() error {
		var err error
		at, err = pc.ClickPoint(callCtx, sel)
		return err
	}, "clicked "+target)
	if r.status == events.StatusOK {
		r.point = a.env.screenPoint(callCtx, at)
	}
	return r
}

// pageOnScreen reports whether the page's viewport can be placed on the
// run's captures: the page is the screen, or a headful browser the run
// launched shows it in its window.
func (e *environment) pageOnScreen() bool {
	return e.web.PageIsTheScreen() || e.hasWin && !e.web.Headless && !e.web.Attached
}

// pointClicker is a tab that says where a click by selector landed, so
// the report can mark it.
type pointClicker interface {
	ClickPoint(ctx context.Context, selector string) (image.Point, error)
}

// screenPoint maps a point of the page's viewport to the run's captures,
// or nil when they cannot be related (an attached or a headless browser
// whose page is not the screen).
func (e *environment) screenPoint(ctx context.Context, p image.Point) *events.Point {
	if e.web.PageIsTheScreen() {
		// The capture is the page's viewport.
		return &events.Point{X: p.X, Y: p.Y}
	}
	if !e.pageOnScreen() {
		return nil
	}
	origin, err := e.web.Tab.ViewportOrigin(ctx)
	if err != nil {
		return nil
	}
	q := p.Add(origin)
	return &events.Point{X: q.X, Y: q.Y}
}

// cdpFill fills a named element with a provided value; the result names
// its ref and length, never the value.
func (a *actor) cdpFill(ctx, callCtx context.Context, c call) result {
	target, sel, r := a.cdpTarget(c)
	if r.status != "" {
		return r
	}
	ref, _ := c.Args["ref"].(string)
	value, secret, found := a.env.value(ref)
	if !found {
		return failed(failResolution, "no provided value %q", ref)
	}
	if r := a.env.secretPlaceRefusal(ctx, c.Tool, ref, target); r.status != "" {
		return r
	}
	what := "value"
	if secret {
		what = "secret value"
		a.env.secretGoesIn(callCtx, ref, value, sel)
	}
	return a.cdpInput(ctx, func() error { return a.env.web.Tab.Fill(callCtx, sel, value) },
		fmt.Sprintf("filled %s with the %s %q (%d characters)", target, what, ref, len([]rune(value))))
}

// cdpClickDescribed clicks an element by handle or text; not found and
// ambiguous go back to the model with the candidates.
func (a *actor) cdpClickDescribed(ctx, callCtx context.Context, c call) result {
	handle, _ := c.Args["handle"].(string)
	text, _ := c.Args["text"].(string)
	handle, text = strings.TrimSpace(handle), strings.TrimSpace(text)
	if (handle == "") == (text == "") {
		return failed(failMalformed, "cdp_click_described takes a handle or a text: exactly one of them")
	}
	var el cdp.Element
	r := a.cdpInput(ctx, func() error {
		var err error
		el, err = a.env.web.Tab.ClickDescribed(callCtx, handle, text)
		return err
	}, "")
	if r.status != events.StatusOK {
		return r
	}
	r.message = "clicked " + el.String()
	if !el.Box.Empty() {
		r.point = a.env.screenPoint(callCtx, image.Pt((el.Box.Min.X+el.Box.Max.X)/2, (el.Box.Min.Y+el.Box.Max.Y)/2))
	}
	return r
}

// cdpInput runs a page-changing action and captures the settled screen,
// like the X11 input tools (step clears the observation record).
func (a *actor) cdpInput(ctx context.Context, act func() error, done string) result {
	began := a.env.pageMark()
	err := act()
	if err != nil {
		return a.cdpFailure(err)
	}
	return a.pageSettled(ctx, ok(done), began)
}

// pageAction is when a cdp_* action began, and how many loads its tab's
// main frame had begun by then.
type pageAction struct {
	at    time.Time
	loads uint64
}

// pageMark marks the start of a cdp_* action.
func (e *environment) pageMark() pageAction {
	m := pageAction{at: time.Now()}
	if d, ok := e.web.Tab.(pageDrawer); ok {
		m.loads = d.LoadsBegun()
	}
	return m
}

// pageDrawer is a tab that can wait until what the last action changed,
// or the document a navigation brought, is drawn on its window, counts
// the loads its main frame began, and says where on the screen its
// window and page are.
type pageDrawer interface {
	Drawn(ctx context.Context) (frames time.Duration, err error)
	LoadsBegun() uint64
	Placement(ctx context.Context) (cdp.Placement, error)
}

// pageSettleAttempts bounds how often the screen after a cdp_* action is
// waited for again because a navigation began while it settled.
const pageSettleAttempts = 3

// pageSettled captures the settled screen after a cdp_* action that began
// at began. A headful browser the run launched is captured from the X
// screen, whose stillness alone says nothing while the page is between
// documents (it draws nothing until the server answers), so the tab is
// asked first to have drawn what the action led to. A headless page's
// capture waits for that itself, and an attached browser's tab may be in
// the background, where it draws no frames at all.
//
// The page's frame is then on its way to the screen, or already on it: a
// click's new frame was measured on the X screen 5 ms after the click
// returned, before the tab could answer for it (two animation frames, up
// to 33 ms later). So, while the page is the document the action began
// on, the screen must have been still, since the action began, for the
// quiet interval after its newest drawing; after a navigation, or when
// nothing was drawn since, the screen is given the quiet interval after the tab's
// answer to start drawing, or half the time the page took for its last
// two frames when that is longer (one frame's time, which a loaded
// machine stretches), up to runner.settle_response_ms. The browser's own
// tab strip and toolbar are not waited for: the tab's icon animates for a
// quarter of a second after a load, long after the page is drawn. A
// navigation the browser announces only meanwhile (a click on a link,
// announced late on a loaded machine) means the still screen may be the
// page being left: the page is waited for again before anything is kept.
func (a *actor) pageSettled(ctx context.Context, r result, began pageAction) result {
	if a.env.web.Headless || a.env.web.Attached {
		return a.settled(ctx, r)
	}
	d, ok := a.env.web.Tab.(pageDrawer)
	if !ok || a.env.desk == nil {
		return a.settled(ctx, r)
	}
	for attempt := 1; ; attempt++ {
		drawCtx, cancel := context.WithTimeout(ctx, pageDrawnTimeout)
		frames, err := d.Drawn(drawCtx)
		cancel()
		if err != nil && ctx.Err() == nil {
			a.log("wait for the page to be drawn: %v", err)
		}
		begun := d.LoadsBegun()
		opts := a.env.settleOptions(false)
		opts.Response = max(opts.Quiet, min(frames/2, a.env.settleOptions(true).Response))
		// Drawing since the action is the response only while the
		// document is the one the action began on: after a navigation,
		// what was drawn since may be the page left (a link's pressed
		// state), and the new document's frame must be seen arriving.
		if begun == began.loads {
			opts.Since = began.at
		}
		if p, err := d.Placement(ctx); err == nil {
			opts.Ignore = p.Chrome()
		} else if ctx.Err() == nil {
			// All drawing counts then: slower, not wrong.
			a.log("read where the browser is on the screen: %v", err)
		}
		img, settled, err := a.env.desk.WaitSettled(ctx, opts)
		if err != nil {
			if ctx.Err() != nil {
				return r
			}
			return a.driverFailure(fmt.Errorf("capture the screen: %w", err))
		}
		if d.LoadsBegun() != begun && attempt < pageSettleAttempts {
			continue
		}
		rel, _, err := a.keepCapture(ctx, img, nil, settled, false)
		if err != nil {
			return a.driverFailure(fmt.Errorf("capture the screen: %w", err))
		}
		r.screen = rel
		return r
	}
}

// cdpWait waits for a condition the scenario named, counted against the
// waiting budget.
func (a *actor) cdpWait(ctx context.Context, c call) result {
	name, _ := c.Args["name"].(string)
	cw, found := a.files.Scenario.CDPWaits[name]
	if !found {
		return failed(failResolution, "no cdp wait %q", name)
	}
	spec := cdp.WaitSpec{State: cw.State, URLContains: cw.URL}
	if cw.Target != "" {
		spec.Selector = a.files.Scenario.CDPTargets[cw.Target]
	}
	timeout := time.Duration(cw.Timeout * float64(time.Second))
	if timeout <= 0 {
		timeout = defaultCDPWaitS * time.Second
	}
	return a.hold(ctx, timeout, func(ctx context.Context) result {
		began := a.env.pageMark()
		waitCtx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		start := time.Now()
		err := a.env.web.Tab.Wait(waitCtx, spec)
		if err != nil {
			var te *cdp.WaitTimeoutError
			if errors.As(err, &te) {
				return failed(failResolution, "%s did not hold within %.1fs; last seen: %s", name, time.Since(start).Seconds(), te.Last)
			}
			return a.cdpFailure(err)
		}
		return a.pageSettled(ctx, ok(fmt.Sprintf("%s held after %.1fs", name, time.Since(start).Seconds())), began)
	})
}

// cdpNavigate opens a page the scenario names in cdp_urls.
func (a *actor) cdpNavigate(ctx context.Context, c call) result {
	name, _ := c.Args["target"].(string)
	u, err := a.files.Scenario.CDPURL(name)
	if err != nil {
		return failed(failResolution, "%v", err)
	}
	navCtx, cancel := context.WithTimeout(ctx, cdpCallTimeout)
	defer cancel()
	start, began := time.Now(), a.env.pageMark()
	if err := a.env.web.Tab.Navigate(navCtx, u); err != nil {
		return a.cdpFailure(err)
	}
	return a.pageSettled(ctx, ok(fmt.Sprintf("opened %s (%s) in %.1fs", name, u, time.Since(start).Seconds())), began)
}

// cdpFailure turns a driver error into a resolution failure the model can
// act on; a browser that is gone is left to the checks after the step.
func (a *actor) cdpFailure(err error) result {
	if a.env.web != nil && !a.env.web.Alive() {
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
