package cdp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/kasmrt/kasmrt/internal/screenpng"
)

// Tab is the page target a Browser is attached to. Its methods are safe for
// concurrent use, though a test step normally runs one at a time.
type Tab struct {
	// ctx carries chromedp's browser and target; it ends when the Browser
	// closes. Calls take their deadline from the caller's context instead.
	ctx context.Context
	// loads says whether a document is loading, for Screenshot.
	loads *pageLoads
}

// callContext joins the caller's cancellation with the tab's chromedp
// values: chromedp finds its target through context values, while the
// caller decides how long a call may take. The call also ends when the
// browser connection closes.
func (t *Tab) callContext(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(valuesFrom{Context: ctx, values: t.ctx})
	stop := context.AfterFunc(t.ctx, cancel)
	return ctx, func() {
		stop()
		cancel()
	}
}

// valuesFrom is ctx with the values of another context behind its own.
type valuesFrom struct {
	context.Context
	values context.Context
}

func (v valuesFrom) Value(key any) any {
	if x := v.Context.Value(key); x != nil {
		return x
	}
	return v.values.Value(key)
}

// run runs one chromedp action on the tab within ctx.
func (t *Tab) run(ctx context.Context, a chromedp.Action[chromedp.Void]) error {
	ctx, cancel := t.callContext(ctx)
	defer cancel()
	return chromedp.Do(ctx, a)
}

// target runs f with the attached target, within ctx.
func (t *Tab) target(ctx context.Context, f func(ctx context.Context, tgt *chromedp.Target) error) error {
	return t.run(ctx, chromedp.Func(f))
}

// URL returns the address of the page shown now.
func (t *Tab) URL(ctx context.Context) (string, error) {
	ctx, cancel := t.callContext(ctx)
	defer cancel()
	u, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		return "", fmt.Errorf("read page URL: %w", err)
	}
	return u, nil
}

// Navigate loads url and waits for its load event.
func (t *Tab) Navigate(ctx context.Context, url string) error {
	if err := t.run(ctx, chromedp.Navigate(url)); err != nil {
		return fmt.Errorf("navigate to %s: %w", url, err)
	}
	return nil
}

// captureAttempts bounds how often Screenshot captures again because a
// navigation began while it captured; a page that keeps navigating is
// shown as it was last seen.
const captureAttempts = 3

// Screenshot captures the viewport through the browser. The engine captures
// through X11 when the browser is headful; this is the headless path. A
// navigation under way, or a document not yet seen rendering, is waited for
// first (see Rendered), so the capture shows the page the last action led
// to and never waits on a frame of a document being replaced. Otherwise
// the page is captured at once: the capture asks the renderer for a fresh
// frame itself, so what the last action changed is in it. A navigation
// that the last click started but the browser announces only while the
// capture runs ends that capture; the load is waited for and the page
// captured again.
func (t *Tab) Screenshot(ctx context.Context) (image.Image, error) {
	img, _, err := t.ScreenshotPNG(ctx)
	return img, err
}

// ScreenshotPNG is Screenshot, also returning the PNG the browser encoded
// the capture as: the same pixels, which a caller that keeps the capture
// can write as they are rather than encode them again.
func (t *Tab) ScreenshotPNG(ctx context.Context) (image.Image, []byte, error) {
	buf, err := t.CapturePNG(ctx)
	if err != nil {
		return nil, nil, err
	}
	img, err := screenpng.Decode(buf)
	if err != nil {
		return nil, nil, fmt.Errorf("capture page: decode: %w", err)
	}
	return img, buf, nil
}

// CapturePNG captures the viewport as Screenshot does and returns the PNG
// the browser encoded, not decoded: a caller that only keeps the capture,
// or needs only its size (the PNG's header has it), is spared the decode.
func (t *Tab) CapturePNG(ctx context.Context) ([]byte, error) {
	var buf []byte
	for attempt := 1; ; attempt++ {
		if t.loads.busy() || t.loads.newDocument() {
			if err := t.Rendered(ctx); err != nil {
				return nil, fmt.Errorf("capture page: wait for the page to render: %w", err)
			}
		}
		begun, begins := t.loads.nextBegin()
		// A capture asked for while a navigation replaces the document
		// was seen waiting seconds for a frame, so one the browser
		// announces while the capture runs (a click on a link, announced
		// late on a loaded machine) ends it, and the page is captured
		// again once the load is done.
		shotCtx, cancel := context.WithCancel(ctx)
		if attempt < captureAttempts {
			go func() {
				select {
				case <-begins:
					cancel()
				case <-shotCtx.Done():
				}
			}()
		}
		err := t.target(shotCtx, func(ctx context.Context, tgt *chromedp.Target) error {
			res, err := cdp.Call(ctx, tgt, page.CaptureScreenshot, page.CaptureScreenshotParams{
				FromSurface: new(true), OptimizeForSpeed: new(true)})
			if err != nil {
				return err
			}
			buf = res.Data
			return nil
		})
		cancel()
		if t.loads.loadsBegun() != begun && attempt < captureAttempts {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("capture page: %w", err)
		}
		return buf, nil
	}
}

// Expressions that resolve at the document's next animation frame but
// one: the second callback runs after the first frame was committed, so
// the document has produced a frame with whatever changed before it. A
// document fresh from a link was seen drawing no frame for seconds (once
// in a hundred headless navigations on a loaded machine), so a timer in the
// page ends each wait after maxFramesWait (ms) either way; a headless
// capture asks for a frame itself. For a new document the second
// expression first lets its images decode (they paint in a later frame
// than the text), and also waits for the document's first paint to be
// presented: Chromium adds that entry to the page's timeline once the
// frame is on the display, which for a headful browser's window is when
// the X server has its pixels. A committed frame was seen not yet drawn on
// the X screen two animation frames later on a loaded machine.
const (
	maxFramesWait        = "300"
	nextFrameFunction    = `new Promise(r => { requestAnimationFrame(() => r(true)); setTimeout(() => r(false), ` + maxFramesWait + `); })`
	framesDrawnFunction  = `new Promise(r => { requestAnimationFrame(() => requestAnimationFrame(() => r(true))); setTimeout(() => r(false), ` + maxFramesWait + `); })`
	firstPaintedFunction = `Promise.race([
		new Promise(r => setTimeout(r, ` + maxFramesWait + `)),
		Promise.all(Array.from(document.images, i => i.decode().catch(() => {}))),
	]).then(() => Promise.all([` + framesDrawnFunction + `, new Promise(r => {
		if (performance.getEntriesByType('paint').length > 0) return r(true);
		new PerformanceObserver((_, o) => { o.disconnect(); r(true); }).observe({type: 'paint'});
		setTimeout(() => r(false), ` + maxFramesWait + `);
	})]))`
	// maxFramesCall bounds one of those calls from here: a page that
	// answers no call at all is taken as rendered as far as can be told.
	maxFramesCall = 2 * time.Second
)

// retryRendered is how soon a page between documents is asked again.
const retryRendered = 10 * time.Millisecond

// Rendered returns once no navigation is under way and the document has
// produced a frame since the call, with no load begun in between. A
// capture right after a load would otherwise show the surface the old
// document left (Chromium holds the old paint until the new document's
// first frame; one animation frame was measured not to be enough), or
// wait for a frame of the document being replaced.
func (t *Tab) Rendered(ctx context.Context) error {
	_, err := t.rendered(ctx, false)
	return err
}

// LoadsBegun counts the loads the tab's main frame began since it was
// attached: a caller that saw it change while it looked at the window
// may have seen the page being left.
func (t *Tab) LoadsBegun() uint64 { return t.loads.loadsBegun() }

// Drawn is Rendered for a headful browser, whose window is captured from
// the X screen: a new document is also waited for until its first paint
// is on the display (at most 300 ms, for a page that paints nothing). It
// is what makes the screen that settles after an action the one the
// action led to: a page between documents draws nothing for as long as
// its server takes, and a new document's first frame reaches the screen
// some time after it was committed, both of which a wait for a still
// screen alone would take for the answer. It returns how long the page
// took to produce its last two frames: how long a frame then takes to
// reach the screen grows with it on a loaded machine.
func (t *Tab) Drawn(ctx context.Context) (time.Duration, error) { return t.rendered(ctx, true) }

func (t *Tab) rendered(ctx context.Context, presented bool) (time.Duration, error) {
	// A page that keeps loading, or whose document keeps going away under
	// the calls, is shown as it is once the load wait's bound has passed,
	// rather than not at all.
	budget := maxLoadWait
	if dl, ok := ctx.Deadline(); ok {
		budget = min(budget, time.Until(dl)/2)
	}
	giveUp := time.Now().Add(budget)
	for {
		if err := t.loads.wait(ctx); err != nil {
			return 0, err
		}
		if time.Now().After(giveUp) {
			return 0, nil
		}
		begun := t.loads.loadsBegun()
		expr := framesDrawnFunction
		if presented && t.loads.newDocument() {
			expr = firstPaintedFunction
		}
		callCtx, cancel := context.WithTimeout(ctx, maxFramesCall)
		start := time.Now()
		err := t.target(callCtx, func(ctx context.Context, tgt *chromedp.Target) error {
			_, err := evaluate(ctx, tgt, expr, true)
			return err
		})
		took := time.Since(start)
		stuck := callCtx.Err() != nil && ctx.Err() == nil
		cancel()
		if stuck {
			return took, nil
		}
		if err == nil && !t.loads.busy() && t.loads.loadsBegun() == begun {
			t.loads.rendered()
			return took, nil
		}
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		if err != nil {
			// The document went away under the call: a navigation.
			select {
			case <-ctx.Done():
				return 0, ctx.Err()
			case <-time.After(retryRendered):
			}
		}
		// Otherwise a load began during the frames: wait for it.
	}
}

// ViewportOrigin is where the top-left corner of the page's viewport is on
// the X screen, for a headful browser: the window position plus the height
// of the toolbar and infobars above the page. Add it to an Element's Box to
// get screen coordinates.
func (t *Tab) ViewportOrigin(ctx context.Context) (image.Point, error) {
	p, err := t.Placement(ctx)
	if err != nil {
		return image.Point{}, fmt.Errorf("read viewport origin: %w", err)
	}
	return p.Viewport.Min, nil
}

// Placement is where a headful browser's window, and the page's viewport
// in it, are on the X screen.
type Placement struct {
	Window, Viewport image.Rectangle
}

// Chrome is the part of the window above the page: the tab strip, the
// toolbar and the infobars, which the browser draws itself.
func (p Placement) Chrome() image.Rectangle {
	return image.Rect(p.Window.Min.X, p.Window.Min.Y, p.Window.Max.X, p.Viewport.Min.Y)
}

// Placement reads where the window and the page's viewport are on the X
// screen.
func (t *Tab) Placement(ctx context.Context) (Placement, error) {
	var m []int
	err := t.target(ctx, func(ctx context.Context, tgt *chromedp.Target) error {
		return evaluateJSON(ctx, tgt, `[window.screenX, window.screenY, window.outerWidth, window.outerHeight,
			window.innerWidth, window.innerHeight]`, &m)
	})
	if err != nil {
		return Placement{}, fmt.Errorf("read the window's placement: %w", err)
	}
	if len(m) != 6 {
		return Placement{}, fmt.Errorf("read the window's placement: got %v", m)
	}
	win := image.Rect(m[0], m[1], m[0]+m[2], m[1]+m[3])
	// Chromium has no side borders without a window manager; whatever
	// width the frame takes is split evenly, and the rest sits on top.
	origin := image.Pt(m[0]+(m[2]-m[4])/2, m[1]+m[3]-m[5])
	return Placement{Window: win, Viewport: image.Rectangle{Min: origin, Max: origin.Add(image.Pt(m[4], m[5]))}}, nil
}

// ElementState is what Query found for a selector.
type ElementState struct {
	// Found is true when the selector matches an element.
	Found bool
	// Visible is true when that element is rendered with a non-empty box and
	// not hidden by CSS.
	Visible bool
	// Text is the element's rendered text, trimmed and cut to 2,000
	// characters.
	Text string
	// Value is the value of an input, textarea or select. It is always empty
	// for a password input: its value is a secret.
	Value string
	// Count is how many elements the selector matches.
	Count int
}

// queryFunction reads the state of the first match of a selector. It is
// fixed script; the selector arrives as an argument, never as code.
const queryFunction = `function(sel) {
	const count = document.querySelectorAll(sel).length;
	const el = document.querySelector(sel);
	if (!el) return {found: false, count};
	const rects = el.getClientRects();
	let visible = rects.length > 0 && Array.from(rects).some(r => r.width > 0 && r.height > 0);
	if (visible && el.checkVisibility) visible = el.checkVisibility({visibilityProperty: true, opacityProperty: true});
	let text = (el.innerText ?? el.textContent ?? '').trim();
	if (text.length > 2000) text = text.slice(0, 2000);
	let value = '';
	if ('value' in el && typeof el.value === 'string' && !(el.tagName === 'INPUT' && el.type === 'password')) value = el.value;
	return {found: true, visible, text, value, count};
}`

// Query reports whether selector matches an element, whether it is visible,
// its text and value, and how many elements match. A selector that matches nothing is not an error.
func (t *Tab) Query(ctx context.Context, selector string) (ElementState, error) {
	var st struct {
		Found, Visible bool
		Text, Value    string
		Count          int
	}
	err := t.target(ctx, func(ctx context.Context, tgt *chromedp.Target) error {
		return callJSON(ctx, tgt, queryFunction, &st, selector)
	})
	if err != nil {
		return ElementState{}, fmt.Errorf("query %s: %w", selector, err)
	}
	return ElementState(st), nil
}

// Click clicks the centre of the first element matching selector with the
// mouse, after scrolling it into view.
func (t *Tab) Click(ctx context.Context, selector string) error {
	_, err := t.ClickPoint(ctx, selector)
	return err
}

// ClickPoint is Click, returning where it clicked: the viewport point, in
// CSS pixels (add ViewportOrigin for the screen of a headful browser).
func (t *Tab) ClickPoint(ctx context.Context, selector string) (image.Point, error) {
	var at image.Point
	err := t.target(ctx, func(ctx context.Context, tgt *chromedp.Target) error {
		// One call finds, scrolls and measures the element, where the
		// DOM domain takes three round trips (2–3 ms of a click).
		var box *clickBox
		if err := callJSON(ctx, tgt, locateFunction, &box, selector); err != nil {
			return err
		}
		if box == nil {
			return &SelectorNotFoundError{Selector: selector}
		}
		if !box.Rendered {
			return errNotRendered
		}
		var err error
		at, err = clickAt(ctx, tgt, box.X, box.Y)
		return err
	})
	if err != nil {
		return image.Point{}, fmt.Errorf("click %s: %w", selector, err)
	}
	return at, nil
}

// locateFunction scrolls the first element matching a selector into view
// if it is not, as DOM.scrollIntoViewIfNeeded does (centred), and returns
// the centre of its first box in viewport CSS pixels, or null when nothing
// matches.
const locateFunction = `function(selector) {
	const e = document.querySelector(selector);
	if (!e) return null;
	if (e.scrollIntoViewIfNeeded) e.scrollIntoViewIfNeeded(true);
	else e.scrollIntoView({block: 'center', inline: 'center'});
	const r = e.getClientRects()[0];
	if (!r) return {rendered: false};
	return {rendered: true, x: r.left + r.width / 2, y: r.top + r.height / 2};
}`

// clickBox is what locateFunction found.
type clickBox struct {
	Rendered bool
	X, Y     float64
}

// clearFunction empties a form field or an editable element and tells the
// page, as a user's deletion would.
const clearFunction = `function() {
	this.focus();
	if ('value' in this) {
		if (this.select) this.select();
		this.value = '';
	} else if (this.isContentEditable) {
		this.textContent = '';
	}
	this.dispatchEvent(new Event('input', {bubbles: true}));
}`

// Fill clears the first element matching selector and types value into it
// as key events. The value is never logged or put in an error.
func (t *Tab) Fill(ctx context.Context, selector, value string) error {
	err := t.target(ctx, func(ctx context.Context, tgt *chromedp.Target) error {
		obj, err := querySelector(ctx, tgt, selector)
		if err != nil {
			return err
		}
		if _, err := cdp.Call(ctx, tgt, dom.ScrollIntoViewIfNeeded, dom.ScrollIntoViewIfNeededParams{ObjectID: obj}); err != nil {
			return fmt.Errorf("scroll into view: %w", err)
		}
		if _, err := cdp.Call(ctx, tgt, dom.Focus, dom.FocusParams{ObjectID: obj}); err != nil {
			return fmt.Errorf("focus: %w", err)
		}
		if _, err := callOn(ctx, tgt, obj, clearFunction); err != nil {
			return fmt.Errorf("clear: %w", err)
		}
		// KeyEvent types into the focused element; its errors name keys,
		// which would leak the value, so they are replaced.
		if _, err := chromedp.KeyEvent(value)(ctx, tgt); err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("type %d characters: %w", len([]rune(value)), ctx.Err())
			}
			return fmt.Errorf("type %d characters: key event failed", len([]rune(value)))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("fill %s: %w", selector, err)
	}
	return nil
}

// Element states that Wait accepts.
const (
	StateVisible = "visible"
	StateHidden  = "hidden"
	StatePresent = "present"
	StateAbsent  = "absent"
)

// WaitSpec is a condition on the page. Every field that is set must hold.
type WaitSpec struct {
	// Selector and State: the first match of Selector is visible, hidden
	// (absent or not visible), present or absent. State defaults to
	// visible.
	Selector string
	State    string
	// URLContains is a substring of the page's URL.
	URLContains string
}

func (s WaitSpec) String() string {
	var parts []string
	if s.Selector != "" {
		parts = append(parts, s.Selector+" "+s.stateOrDefault())
	}
	if s.URLContains != "" {
		parts = append(parts, fmt.Sprintf("URL contains %q", s.URLContains))
	}
	return strings.Join(parts, " and ")
}

func (s WaitSpec) stateOrDefault() string {
	if s.State == "" {
		return StateVisible
	}
	return s.State
}

// WaitTimeoutError says a Wait ended before its condition held, and what the
// page looked like last.
type WaitTimeoutError struct {
	Spec WaitSpec
	// Last describes the last observation ("#welcome absent", "URL is …").
	Last string
	Err  error
}

func (e *WaitTimeoutError) Error() string {
	return fmt.Sprintf("wait for %s: %v; last seen: %s", e.Spec, e.Err, e.Last)
}

func (e *WaitTimeoutError) Unwrap() error { return e.Err }

// waitPoll is how often Wait looks at the page. A navigation in between
// destroys the page's script context, so polling is sturdier than a
// mutation observer that dies with its page.
const waitPoll = 50 * time.Millisecond

// Wait returns once spec holds, or a *WaitTimeoutError when ctx ends first.
// Give ctx a deadline.
func (t *Tab) Wait(ctx context.Context, spec WaitSpec) error {
	if spec.Selector == "" && spec.URLContains == "" {
		return errors.New("wait: nothing to wait for")
	}
	switch spec.stateOrDefault() {
	case StateVisible, StateHidden, StatePresent, StateAbsent:
	default:
		return fmt.Errorf("wait: unknown state %q (want visible, hidden, present or absent)", spec.State)
	}
	tick := time.NewTicker(waitPoll)
	defer tick.Stop()
	last := "nothing yet"
	for {
		ok, seen, err := t.check(ctx, spec)
		if seen != "" {
			last = seen
		}
		if ok {
			return nil
		}
		var selErr *SelectorError
		if errors.As(err, &selErr) {
			return fmt.Errorf("wait for %s: %w", spec, err)
		}
		select {
		case <-ctx.Done():
			return &WaitTimeoutError{Spec: spec, Last: last, Err: ctx.Err()}
		case <-t.ctx.Done():
			return &WaitTimeoutError{Spec: spec, Last: last, Err: errors.New("browser connection closed")}
		case <-tick.C:
		}
	}
}

// check evaluates spec once. Errors other than a bad selector are the page
// being between documents, and count as "not yet".
func (t *Tab) check(ctx context.Context, spec WaitSpec) (ok bool, seen string, err error) {
	var notes []string
	ok = true
	if spec.URLContains != "" {
		u, err := t.URL(ctx)
		if err != nil {
			return false, "", err
		}
		notes = append(notes, "URL is "+u)
		ok = ok && strings.Contains(u, spec.URLContains)
	}
	if spec.Selector != "" {
		st, err := t.Query(ctx, spec.Selector)
		if err != nil {
			return false, strings.Join(notes, ", "), err
		}
		var now string
		switch {
		case !st.Found:
			now = StateAbsent
		case st.Visible:
			now = StateVisible
		default:
			now = StateHidden
		}
		notes = append(notes, spec.Selector+" "+now)
		var holds bool
		switch spec.stateOrDefault() {
		case StateVisible:
			holds = st.Found && st.Visible
		case StateHidden:
			holds = !st.Found || !st.Visible
		case StatePresent:
			holds = st.Found
		case StateAbsent:
			holds = !st.Found
		}
		ok = ok && holds
	}
	return ok, strings.Join(notes, ", "), nil
}

// SelectorError says a CSS selector is not valid.
type SelectorError struct {
	Selector string
	Reason   string
}

func (e *SelectorError) Error() string {
	return fmt.Sprintf("invalid selector %q: %s", e.Selector, e.Reason)
}

// ErrNotFound is matched (errors.Is) by every "no such element" error.
var ErrNotFound = errors.New("element not found")

// SelectorNotFoundError says a selector matched no element.
type SelectorNotFoundError struct{ Selector string }

func (e *SelectorNotFoundError) Error() string {
	return fmt.Sprintf("no element matches %s", e.Selector)
}

func (e *SelectorNotFoundError) Is(target error) bool { return target == ErrNotFound }

// querySelector returns a remote object for the first match of selector.
func querySelector(ctx context.Context, tgt *chromedp.Target, selector string) (runtime.RemoteObjectID, error) {
	res, err := cdp.Call(ctx, tgt, runtime.Evaluate, runtime.EvaluateParams{
		Expression: "document.querySelector(" + jsString(selector) + ")",
	})
	if err != nil {
		return "", err
	}
	if res.ExceptionDetails != nil {
		return "", &SelectorError{Selector: selector, Reason: exceptionText(res.ExceptionDetails)}
	}
	if res.Result == nil || res.Result.ObjectID == "" {
		return "", &SelectorNotFoundError{Selector: selector}
	}
	return res.Result.ObjectID, nil
}

// callJSON calls a fixed function declaration in the page with JSON
// arguments and decodes its JSON result into out. The arguments are JSON
// literals, so page data never becomes code.
func callJSON(ctx context.Context, tgt *chromedp.Target, fn string, out any, args ...any) error {
	lits := make([]string, len(args))
	for i, a := range args {
		b, err := json.Marshal(a)
		if err != nil {
			return err
		}
		lits[i] = string(b)
	}
	expr := "(" + fn + ")(" + strings.Join(lits, ", ") + ")"
	res, err := cdp.Call(ctx, tgt, runtime.Evaluate, runtime.EvaluateParams{Expression: expr, ReturnByValue: new(true)})
	if err != nil {
		return err
	}
	if res.ExceptionDetails != nil {
		text := exceptionText(res.ExceptionDetails)
		if len(args) == 1 && strings.Contains(text, "is not a valid selector") {
			if s, ok := args[0].(string); ok {
				return &SelectorError{Selector: s, Reason: text}
			}
		}
		return errors.New(text)
	}
	return json.Unmarshal(res.Result.Value, out)
}

// evaluateJSON evaluates a fixed expression and decodes its JSON value.
func evaluateJSON(ctx context.Context, tgt *chromedp.Target, expr string, out any) error {
	res, err := evaluate(ctx, tgt, expr, false)
	if err != nil {
		return err
	}
	return json.Unmarshal(res.Value, out)
}

// evaluate evaluates a fixed expression by value, waiting for the promise
// it returns when await is set.
func evaluate(ctx context.Context, tgt *chromedp.Target, expr string, await bool) (*runtime.RemoteObject, error) {
	res, err := cdp.Call(ctx, tgt, runtime.Evaluate, runtime.EvaluateParams{Expression: expr, ReturnByValue: new(true), AwaitPromise: new(await)})
	if err != nil {
		return nil, err
	}
	if res.ExceptionDetails != nil {
		return nil, errors.New(exceptionText(res.ExceptionDetails))
	}
	return res.Result, nil
}

// callOn calls a fixed function declaration with obj as "this".
func callOn(ctx context.Context, tgt *chromedp.Target, obj runtime.RemoteObjectID, fn string) (*runtime.RemoteObject, error) {
	res, err := cdp.Call(ctx, tgt, runtime.CallFunctionOn, runtime.CallFunctionOnParams{FunctionDeclaration: fn, ObjectID: obj})
	if err != nil {
		return nil, err
	}
	if res.ExceptionDetails != nil {
		return nil, errors.New(exceptionText(res.ExceptionDetails))
	}
	return res.Result, nil
}

func exceptionText(d *runtime.ExceptionDetails) string {
	if d.Exception != nil && d.Exception.Description != "" {
		// The first line names the error; the rest is a stack.
		first, _, _ := strings.Cut(d.Exception.Description, "\n")
		return first
	}
	return d.Text
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Title returns the title of the page shown now.
func (t *Tab) Title(ctx context.Context) (string, error) {
	ctx, cancel := t.callContext(ctx)
	defer cancel()
	title, err := chromedp.Run(ctx, chromedp.Title())
	if err != nil {
		return "", fmt.Errorf("read page title: %w", err)
	}
	return title, nil
}
