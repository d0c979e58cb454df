package engine

import (
	"context"
	"errors"
	"fmt"
	"image"
	"strings"
	"time"

	"github.com/kasmrt/kasmrt/drivers/atspi"
	"github.com/kasmrt/kasmrt/drivers/cdp"
	"github.com/kasmrt/kasmrt/drivers/ocr"
	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/scenarios"
)

// checkPoll is how often a check that does not hold yet is tried again;
// a11yWalkTimeout and ocrTimeout bound one reading of the app's
// accessible controls and of the text on screen.
const (
	checkPoll       = 100 * time.Millisecond
	a11yWalkTimeout = 5 * time.Second
	ocrTimeout      = 20 * time.Second
)

// errCannotCheck marks a check the run cannot evaluate at all (no window,
// no browser tab, no accessible controls): the scenario asked for
// something this run cannot see, which is a test error, not the app's.
var errCannotCheck = errors.New("cannot check")

// errNotHeld says a check did not hold within its bound.
var errNotHeld = errors.New("did not hold")

// probe is one check of a step's expect:, tried until it holds or its
// time is up. Its try returns whether the check holds and, either way, what
// it saw, in words for the report.
type probe struct {
	name   string // the check's key in expect:, e.g. window_title, controls.Save
	what   string // what is expected, e.g. `window title contains "Saved"`
	within time.Duration
	try    func(ctx context.Context) (holds bool, seen string, err error)
	// done, when set, is told how the check ended, once.
	done func(held bool)
}

// checker runs the checks a step's expect: and the success criteria ask
// for: probes of the window's title, the screen's text, the page's
// elements, the named controls, a point's control, the app's exit and a
// window's look against its baseline, each awaited within its time; and
// the success criteria and the expected exit the verdict's facts take.
type checker struct {
	env     *environment
	act     *actor
	book    *guardBook
	outcome *verdictFacts
	files   *scenarios.Files
	r       *Runner
	bus     *events.Bus
}

// expect runs the checks a step carries, after its tool succeeded. The
// first check that does not hold within its bound fails the step as an
// assertion (the application did not do what the scenario expects); one
// that cannot be evaluated is a resolution failure.
func (ch *checker) expect(ctx context.Context, e *scenarios.Expect, done result) result {
	// A failed check leaves its screen to the step's failure capture, which
	// shows the screen as it was when the check gave up, not before.
	var held []string
	late := false
	for _, p := range ch.probes(e) {
		seen, tries, err := ch.await(ctx, p)
		switch {
		case err == nil:
			held = append(held, p.what)
			late = late || tries > 1
			continue
		case errors.Is(err, errCannotCheck):
			return failed(failResolution, "cannot check that %s: %s", p.what, seen)
		case !errors.Is(err, errNotHeld):
			return failed(failResolution, "interrupted while checking that %s: %v", p.what, context.Cause(ctx))
		}
		return failed(failAssertion, "expected %s (within %s); found %s", p.what, p.within, seen)
	}
	msg := "checked: " + strings.Join(held, "; ")
	if done.message != "" {
		msg = done.message + "; " + msg
	}
	done.message = msg
	if late {
		// A check that held only on a later try held on a screen the
		// step's capture, taken before, does not show: the step keeps
		// the screen as it is now that the checks held.
		if rel, _, err := ch.act.captureWith(ctx, nil, false); err == nil {
			done.screen = rel
		}
	}
	return done
}

// await tries p until it holds, its bound passes or ctx ends, and returns
// what it saw last and how many tries it took. A nil error means the
// check held. A try that starts before the bound runs to its end (each
// bounds its own calls), so a slow answer near the bound is still an
// answer, not a timeout.
func (ch *checker) await(ctx context.Context, p probe) (seen string, tries int, err error) {
	if p.done != nil {
		defer func() { p.done(err == nil) }()
	}
	deadline := time.Now().Add(p.within)
	seen = "nothing was seen"
	for tries = 1; ; tries++ {
		holds, now, err := p.try(ctx)
		if now != "" {
			seen = now
		}
		switch {
		case errors.Is(err, errCannotCheck):
			if now == "" {
				seen = strings.TrimPrefix(err.Error(), errCannotCheck.Error()+": ")
			}
			return seen, tries, err
		case holds && err == nil:
			return seen, tries, nil
		case ctx.Err() != nil:
			return seen, tries, ctx.Err()
		case err != nil:
			seen = err.Error()
		}
		if !time.Now().Before(deadline) {
			return seen, tries, errNotHeld
		}
		select {
		case <-ctx.Done():
			return seen, tries, ctx.Err()
		case <-time.After(min(checkPoll, time.Until(deadline))):
		}
	}
}

// probes turns an expect: into checks, in the documented order.
func (ch *checker) probes(e *scenarios.Expect) []probe {
	var out []probe
	within := func(own float64) time.Duration {
		return time.Duration(e.WithinS(own) * float64(time.Second))
	}
	if t := e.WindowTitle; t != nil {
		out = append(out, named("window_title", ch.titleProbe(t, within(t.Within))))
	}
	if t := e.ScreenText; t != nil {
		out = append(out, named("screen_text", ch.screenTextProbe(t, within(t.Within))))
	}
	for _, name := range sortedKeys(e.CDP) {
		c := e.CDP[name]
		out = append(out, named("cdp."+name, ch.elementProbe(name, c, within(c.Within))))
	}
	for _, name := range sortedKeys(e.Controls) {
		c := e.Controls[name]
		out = append(out, named("controls."+name, ch.controlProbe(name, c, within(c.Within))))
	}
	for _, name := range sortedKeys(e.ClickTargets) {
		c := e.ClickTargets[name]
		out = append(out, named("click_targets."+name, ch.pointProbe(name, c, within(c.Within))))
	}
	if c := e.Screenshot; c != nil {
		out = append(out, named("screenshot", ch.screenshotProbe(c, within(c.Within))))
	}
	if e.ExitCode != nil {
		out = append(out, named("exit_code", ch.exitProbe(*e.ExitCode, within(0))))
	}
	return out
}

// named gives a probe its key in expect:.
func named(name string, p probe) probe {
	p.name = name
	return p
}

func (ch *checker) titleProbe(t *scenarios.TitleCheck, within time.Duration) probe {
	what := fmt.Sprintf("the window title equals %q", t.Equals)
	if t.Contains != "" {
		what = fmt.Sprintf("the window title contains %q", t.Contains)
	}
	return probe{what: what, within: within, try: func(ctx context.Context) (bool, string, error) {
		if !ch.env.hasWin {
			return false, "the run has no application window (a headless or attached browser has none)", errCannotCheck
		}
		w, err := ch.env.desk.Window(ch.env.win.ID)
		if err != nil {
			return false, "the application window is gone", nil
		}
		seen := fmt.Sprintf("the title %q", ch.r.Redact(w.Title))
		if t.Contains != "" {
			return strings.Contains(w.Title, t.Contains), seen, nil
		}
		return w.Title == t.Equals, seen, nil
	}}
}

// maxScreenTextQuote bounds how much of the text read a message quotes.
const maxScreenTextQuote = 300

func (ch *checker) screenTextProbe(t *scenarios.ScreenTextCheck, within time.Duration) probe {
	want := normalizeSpace(t.Contains)
	return probe{what: fmt.Sprintf("the screen shows %q", want), within: within,
		try: func(ctx context.Context) (bool, string, error) {
			img, err := ch.env.windowImage(ctx)
			if err != nil {
				return false, "", err
			}
			ctx, cancel := context.WithTimeout(ctx, ocrTimeout)
			defer cancel()
			words, err := ch.env.textReader().ReadText(ctx, img)
			if errors.Is(err, ocr.ErrNotInstalled) {
				return false, "", fmt.Errorf("%w: %v", errCannotCheck, err)
			}
			if err != nil {
				return false, "", err
			}
			read := normalizeSpace(ocr.Text(words))
			// Redact before quoting: the screen may show a typed secret.
			seen := fmt.Sprintf("the text read %q", truncate(ch.r.Redact(read), maxScreenTextQuote))
			if read == "" {
				seen = "no text on screen"
			}
			return strings.Contains(read, want), seen, nil
		}}
}

// windowImage captures the current window's part of the screen (the one
// switch_window chose, else the startup window; the page, when the page
// is the screen; the whole screen without a window).
func (e *environment) windowImage(ctx context.Context) (image.Image, error) {
	if e.web.PageIsTheScreen() {
		return e.web.Screenshot(ctx)
	}
	if e.desk == nil {
		return nil, fmt.Errorf("%w: there is no screen to read", errCannotCheck)
	}
	img, err := e.desk.Capture(ctx)
	if err != nil {
		return nil, fmt.Errorf("capture the screen: %w", err)
	}
	if !e.hasWin {
		return img, nil
	}
	w, err := e.desk.Window(e.currentWindow().ID)
	if err != nil {
		return img, nil
	}
	area := image.Rect(w.X, w.Y, w.X+w.Width, w.Y+w.Height).Intersect(img.Bounds())
	if area.Empty() {
		return img, nil
	}
	return img.SubImage(area), nil
}

func (ch *checker) elementProbe(name string, c scenarios.ElementCheck, within time.Duration) probe {
	var want []string
	if c.Present != nil {
		want = append(want, map[bool]string{true: "present", false: "absent"}[*c.Present])
	}
	if c.Visible != nil {
		want = append(want, map[bool]string{true: "visible", false: "hidden"}[*c.Visible])
	}
	if c.Text != nil {
		want = append(want, fmt.Sprintf("text %q", *c.Text))
	}
	if c.TextContains != "" {
		want = append(want, fmt.Sprintf("text containing %q", c.TextContains))
	}
	if c.Value != nil {
		want = append(want, fmt.Sprintf("value %q", *c.Value))
	}
	if c.Count != nil {
		want = append(want, fmt.Sprintf("%d matches", *c.Count))
	}
	return probe{what: fmt.Sprintf("cdp target %s: %s", name, strings.Join(want, ", ")), within: within,
		try: func(ctx context.Context) (bool, string, error) {
			if ch.env.web == nil {
				return false, "no browser tab is attached", errCannotCheck
			}
			sel := ch.files.Scenario.CDPTargets[name]
			callCtx, cancel := context.WithTimeout(ctx, cdpCallTimeout)
			defer cancel()
			st, err := ch.env.web.Tab.Query(callCtx, sel)
			if err != nil {
				var se *cdp.SelectorError
				if errors.As(err, &se) {
					return false, fmt.Sprintf("cdp target %s is not a valid selector: %s", name, se.Reason), errCannotCheck
				}
				// Between two documents the page cannot be asked: not yet.
				return false, "the page could not be read: " + err.Error(), nil
			}
			return elementHolds(c, st), describeCount(describeState(name, st, ch.r.Redact), st), nil
		}}
}

// elementHolds reports whether every field the check sets matches what
// the page shows.
func elementHolds(c scenarios.ElementCheck, st cdp.ElementState) bool {
	switch {
	case c.Present != nil && *c.Present != st.Found,
		c.Count != nil && *c.Count != st.Count:
		return false
	}
	needsElement := c.Visible != nil || c.Text != nil || c.TextContains != "" || c.Value != nil
	if needsElement && !st.Found {
		return false
	}
	text := normalizeSpace(st.Text)
	return (c.Visible == nil || *c.Visible == st.Visible) &&
		(c.Text == nil || normalizeSpace(*c.Text) == text) &&
		(c.TextContains == "" || strings.Contains(text, normalizeSpace(c.TextContains))) &&
		(c.Value == nil || *c.Value == st.Value)
}

// normalizeSpace collapses every run of white space (line breaks, tabs,
// the no-break spaces HTML generators put in headings) into one space, so
// a check reads as the page looks.
func normalizeSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

func describeCount(desc string, st cdp.ElementState) string {
	if st.Count == 1 {
		return desc + " (1 match)"
	}
	return fmt.Sprintf("%s (%d matches)", desc, st.Count)
}

func (ch *checker) controlProbe(name string, c scenarios.ControlCheck, within time.Duration) probe {
	absent := c.Present != nil && !*c.Present
	want := stateWords(c.Enabled, c.Checked, c.Focused)
	what := fmt.Sprintf("the control %q is present", name)
	switch {
	case absent:
		what = fmt.Sprintf("no control is named %q", name)
	case want != "":
		what = fmt.Sprintf("the control %q is %s", name, want)
	}
	return probe{what: what, within: within, try: func(ctx context.Context) (bool, string, error) {
		controls, err := ch.env.accessibleControls(ctx)
		if err != nil {
			return false, "", err
		}
		ctl, err := atspi.FindControl(controls, name)
		var nf *atspi.NotFoundError
		switch {
		case errors.As(err, &nf):
			return absent, ch.r.Redact(err.Error()), nil
		case err != nil:
			return false, ch.r.Redact(err.Error()), nil
		case absent:
			return false, fmt.Sprintf("the %s %q is there", ctl.Role, ch.r.Redact(ctl.Name)), nil
		}
		return statesMatch(ctl, c.Enabled, c.Checked, c.Focused), describeControl(ctl, ch.r.Redact), nil
	}}
}

func (ch *checker) pointProbe(target string, c scenarios.PointCheck, within time.Duration) probe {
	var want []string
	if c.Role != "" {
		want = append(want, "a "+c.Role)
	}
	if c.Name != "" {
		want = append(want, fmt.Sprintf("named %q", c.Name))
	}
	if w := stateWords(c.Enabled, c.Checked, c.Focused); w != "" {
		want = append(want, w)
	}
	return probe{what: fmt.Sprintf("the control at %s is %s", target, strings.Join(want, ", ")), within: within,
		try: func(ctx context.Context) (bool, string, error) {
			if !ch.env.hasWin {
				return false, "click targets are relative to the app window, and the run has none", errCannotCheck
			}
			p, err := ch.env.clickPoint(ctx, target)
			if err != nil {
				// The window went away: no control is there any more.
				return false, err.Error(), nil
			}
			controls, err := ch.env.accessibleControls(ctx)
			if err != nil {
				return false, "", err
			}
			ctl, found := atspi.ControlAt(controls, image.Pt(p.X, p.Y))
			if !found {
				return false, fmt.Sprintf("no accessible control is at (%d, %d)", p.X, p.Y), nil
			}
			holds := (c.Name == "" || strings.EqualFold(strings.TrimSpace(ctl.Name), strings.TrimSpace(c.Name))) &&
				(c.Role == "" || strings.EqualFold(ctl.Role, c.Role)) &&
				statesMatch(ctl, c.Enabled, c.Checked, c.Focused)
			return holds, fmt.Sprintf("at (%d, %d) is %s", p.X, p.Y, describeControl(ctl, ch.r.Redact)), nil
		}}
}

// accessibleControls lists the application's named controls now. An app
// that published none at launch cannot be asked (errCannotCheck); a walk
// that fails is worth another try.
func (e *environment) accessibleControls(ctx context.Context) ([]atspi.Control, error) {
	if e.a11y == nil || !e.a11y.Found {
		return nil, fmt.Errorf("%w: the application publishes no accessible controls (see the accessibility line of the run's log)", errCannotCheck)
	}
	ctx, cancel := context.WithTimeout(ctx, a11yWalkTimeout)
	defer cancel()
	controls, err := e.a11y.App.Controls(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the application's accessible controls: %w", err)
	}
	return controls, nil
}

// stateWords says which states a check wants, e.g. "enabled, not checked".
func stateWords(enabled, checked, focused *bool) string {
	var out []string
	for _, st := range []struct {
		want *bool
		word string
	}{{enabled, "enabled"}, {checked, "checked"}, {focused, "focused"}} {
		switch {
		case st.want == nil:
		case *st.want:
			out = append(out, st.word)
		default:
			out = append(out, "not "+st.word)
		}
	}
	return strings.Join(out, ", ")
}

func statesMatch(c atspi.Control, enabled, checked, focused *bool) bool {
	return (enabled == nil || *enabled == c.Enabled) &&
		(checked == nil || *checked == c.Checked) &&
		(focused == nil || *focused == c.Focused)
}

// describeControl says what a control is now, e.g. `the check box "Bold"
// (enabled, checked, not focused)`.
func describeControl(c atspi.Control, redact func(string) string) string {
	t, f := true, false
	pick := func(b bool) *bool {
		if b {
			return &t
		}
		return &f
	}
	return fmt.Sprintf("the %s %q (%s)", c.Role, redact(c.Name), stateWords(pick(c.Enabled), pick(c.Checked), pick(c.Focused)))
}

func (ch *checker) exitProbe(code int, within time.Duration) probe {
	return probe{what: fmt.Sprintf("the application exited with code %d", code), within: within,
		try: func(ctx context.Context) (bool, string, error) {
			if ch.env.app == nil {
				return false, "no application was launched", errCannotCheck
			}
			if ch.env.app.Alive() {
				return false, "the application is still running", nil
			}
			st := ch.env.app.ExitStatus()
			holds := st.Signal == 0 && st.Code == code
			if holds {
				// The scenario expected this ending: the run ends
				// normally, as with app.success_exit_codes.
				ch.env.expectedExit = &code
			}
			return holds, "the application " + st.String(), nil
		}}
}
