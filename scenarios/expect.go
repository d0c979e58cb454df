package scenarios

import (
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// Bounds of the time a step's checks may take to hold.
const (
	DefaultExpectWithinS = 5
	MaxExpectWithinS     = 300
)

// ExpectTool is the name of a step that only checks (`- expect: {…}`),
// with no action before its checks.
const ExpectTool = "expect"

// Expect is what a scripted step expects once its tool has run. Every
// check must hold within its time bound (within_s, default 5 s), or the
// step fails and the run ends app-failed. Checks are tried in a fixed
// order: the window title, the text on screen, page elements, accessible
// controls, the controls at click targets, then the exit code.
type Expect struct {
	Pos Pos `yaml:"-"`
	// Within is the default bound, in seconds, for every check here.
	Within      float64     `yaml:"within_s"`
	WindowTitle *TitleCheck `yaml:"window_title"`
	// ScreenText checks the text OCR reads in the application window.
	ScreenText *ScreenTextCheck `yaml:"screen_text"`
	// CDP checks page elements by cdp_targets name.
	CDP map[string]ElementCheck `yaml:"cdp"`
	// Controls checks accessible controls by accessible name.
	Controls map[string]ControlCheck `yaml:"controls"`
	// ClickTargets checks the accessible control under a click target.
	ClickTargets map[string]PointCheck `yaml:"click_targets"`
	// ExitCode says the application must have exited with this code.
	ExitCode *int `yaml:"exit_code"`
	// Screenshot compares the window with an approved image.
	Screenshot *ScreenshotCheck `yaml:"screenshot"`
}

// Success is what a goal run must have achieved, checked by the runtime
// itself once the loop ends (the model's verdict, a budget's end or a
// degraded loop): every check a step's expect: takes, and declared tools
// that must exit 0. A criterion that fails makes the run app-failed, one
// that cannot be evaluated test-error, whatever the model said.
type Success struct {
	Expect `yaml:",inline"`
	// Tools are declared tools without parameters, run in this order.
	Tools []string `yaml:"tools"`
}

// HasScreenshotCheck reports whether a step's expect: or the success
// criteria compare the window with a baseline: without one,
// --update-baselines has nothing to write.
func (s *Scenario) HasScreenshotCheck() bool {
	if s.Success != nil && s.Success.Screenshot != nil {
		return true
	}
	for _, st := range s.Steps {
		if st.Expect != nil && st.Expect.Screenshot != nil {
			return true
		}
	}
	return false
}

// empty reports whether the criteria check nothing.
func (c *Success) empty() bool { return c.Expect.empty() && len(c.Tools) == 0 }

// success validates a goal's success criteria against the scenario.
func (v *validator) success(s *Scenario) {
	c := s.Success
	if c == nil {
		if s.Goal != "" {
			v.warnAt("goal", "nothing the scenario declares verifies the goal, so a pass will rest only on the app staying up (a concern); declare success: with the checks that show the goal was reached")
		}
		return
	}
	if s.Goal == "" {
		v.failAt("success", "success: states what a goal run must have achieved; a scripted scenario checks with expect: on its steps")
	}
	if c.empty() {
		v.failAt("success", "success checks nothing; give window_title, screen_text, cdp, controls, click_targets, exit_code, screenshot or tools")
	}
	v.checks("success", "success", &c.Expect, s)
	seen := map[string]bool{}
	for i, name := range c.Tools {
		path := index("success.tools", i)
		t, ok := s.Tools[name]
		switch {
		case !ok:
			v.failAt(path, "success: %q is not a declared tool (%s)", name, namesOrNone(sortedKeys(s.Tools)))
		case len(t.Parameters) > 0:
			v.failAt(path, "success: %s takes parameters; a success tool runs without arguments, so give it command: (or declare one that does)", name)
		case seen[name]:
			v.failAt(path, "success: %s is listed twice", name)
		}
		seen[name] = true
	}
}

// TitleCheck is a check of the application window's title: it equals or
// contains a text (exactly one of the two).
type TitleCheck struct {
	Pos      Pos     `yaml:"-"`
	Equals   string  `yaml:"equals"`
	Contains string  `yaml:"contains"`
	Within   float64 `yaml:"within_s"`
}

// ScreenTextCheck is a check of the text on screen, read by OCR
// (tesseract) from the application window, or the whole screen when the
// run has no window.
type ScreenTextCheck struct {
	Pos      Pos     `yaml:"-"`
	Contains string  `yaml:"contains"`
	Within   float64 `yaml:"within_s"`
}

// ElementCheck is a check of the page element a cdp_targets selector
// names: its first match's text, value and visibility, and how many
// elements match.
type ElementCheck struct {
	Pos Pos `yaml:"-"`
	// Present false means no element may match.
	Present      *bool   `yaml:"present"`
	Visible      *bool   `yaml:"visible"`
	Text         *string `yaml:"text"`
	TextContains string  `yaml:"text_contains"`
	Value        *string `yaml:"value"`
	Count        *int    `yaml:"count"`
	Within       float64 `yaml:"within_s"`
}

// ControlCheck is a check of an accessible control, found by name as
// click_element finds it.
type ControlCheck struct {
	Pos Pos `yaml:"-"`
	// Present false means no control may have the name.
	Present *bool   `yaml:"present"`
	Enabled *bool   `yaml:"enabled"`
	Checked *bool   `yaml:"checked"`
	Focused *bool   `yaml:"focused"`
	Within  float64 `yaml:"within_s"`
}

// PointCheck is a check of the accessible control under a click target:
// the smallest control whose extents contain the point.
type PointCheck struct {
	Pos     Pos     `yaml:"-"`
	Name    string  `yaml:"name"`
	Role    string  `yaml:"role"`
	Enabled *bool   `yaml:"enabled"`
	Checked *bool   `yaml:"checked"`
	Focused *bool   `yaml:"focused"`
	Within  float64 `yaml:"within_s"`
}

// WithinS returns the bound for a check that sets its own (own > 0) or
// takes the step's.
func (e *Expect) WithinS(own float64) float64 {
	switch {
	case own > 0:
		return own
	case e.Within > 0:
		return e.Within
	}
	return DefaultExpectWithinS
}

// ScreenshotCheck compares the application window (the page, when the
// page is the screen) with an approved image of it, a baseline stored
// beside the scenario (BaselineDir). The window is compared once two
// captures in a row are identical, pixel by pixel with a perceptual
// distance that tolerates anti-aliasing; masked areas are left out.
type ScreenshotCheck struct {
	Pos Pos `yaml:"-"`
	// Name names the baseline: NAME.baselines/<name>.png.
	Name string `yaml:"name"`
	// MaxDiffRatio is the share of pixels that may differ (0 to 1).
	MaxDiffRatio float64 `yaml:"max_diff_ratio"`
	// Threshold is how far two pixels' colours may be apart and still
	// count as the same, from 0 (exact) to 1; DefaultScreenshotThreshold
	// when unset.
	Threshold *float64 `yaml:"threshold"`
	// Mask names click targets (found by name or text) and cdp targets
	// whose areas are left out of the comparison.
	Mask []string `yaml:"mask"`
	// MaskRegions are areas of the window left out, in window pixels.
	MaskRegions []Region `yaml:"mask_regions"`
	Within      float64  `yaml:"within_s"`
}

// DefaultScreenshotThreshold is a screenshot check's colour threshold
// when it sets none: the value pixelmatch, and Playwright after it, use.
const DefaultScreenshotThreshold = 0.1

// ThresholdOrDefault is the check's colour threshold.
func (c *ScreenshotCheck) ThresholdOrDefault() float64 {
	if c.Threshold == nil {
		return DefaultScreenshotThreshold
	}
	return *c.Threshold
}

// BaselineDir is where the scenario at path keeps its screenshot
// baselines: beside it, in NAME.baselines, NAME being the file's name
// without its extension.
func BaselineDir(path string) string {
	base := filepath.Base(path)
	return filepath.Join(filepath.Dir(path), strings.TrimSuffix(base, filepath.Ext(base))+".baselines")
}

// baselineNameRE is what a baseline's name may be: a file name on every
// system, without a path.
var baselineNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// NeedsAccessibility reports whether a check reads accessible controls.
func (e *Expect) NeedsAccessibility() bool {
	return e != nil && (len(e.Controls) > 0 || len(e.ClickTargets) > 0)
}

// empty reports whether the expectation checks nothing.
func (e *Expect) empty() bool {
	return e.WindowTitle == nil && e.ScreenText == nil && len(e.CDP) == 0 && len(e.Controls) == 0 && len(e.ClickTargets) == 0 && e.ExitCode == nil && e.Screenshot == nil
}

// expect validates the checks of step i against the rest of the scenario.
func (v *validator) expect(i int, st *Step, s *Scenario) {
	e := st.Expect
	if e == nil {
		return
	}
	path := index("steps", i) + ".expect"
	if e.empty() {
		v.failAt(path, "step %d: expect checks nothing; give window_title, screen_text, cdp, controls, click_targets, exit_code or screenshot", i+1)
	}
	v.checks(path, fmt.Sprintf("step %d", i+1), e, s)
}

// checks validates the checks of an expect: or a success: at path; who
// names it in messages ("step 3", "success").
func (v *validator) checks(path, who string, e *Expect, s *Scenario) {
	within := func(p string, w float64) {
		if w < 0 || w > MaxExpectWithinS {
			v.failAt(p+".within_s", "%s: within_s is seconds between 0 and %d, got %g", who, MaxExpectWithinS, w)
		}
	}
	within(path, e.Within)
	if t := e.WindowTitle; t != nil {
		if (t.Equals == "") == (t.Contains == "") {
			v.failAt(path+".window_title", "%s: a window_title check gives exactly one of equals or contains", who)
		}
		within(path+".window_title", t.Within)
	}
	if t := e.ScreenText; t != nil {
		if strings.TrimSpace(t.Contains) == "" {
			v.failAt(path+".screen_text", "%s: a screen_text check needs contains: the text that must be on screen", who)
		}
		within(path+".screen_text", t.Within)
	}
	if len(e.CDP) > 0 && s.Browser == nil {
		v.failAt(path+".cdp", "%s: cdp checks need a browser: section", who)
	}
	for _, name := range sortedKeys(e.CDP) {
		c, p := e.CDP[name], path+".cdp."+name
		if _, ok := s.CDPTargets[name]; !ok {
			v.failAt(p, "%s: %q is not a cdp_targets name (%s)", who, name, namesOrNone(sortedKeys(s.CDPTargets)))
		}
		others := c.Visible != nil || c.Text != nil || c.TextContains != "" || c.Value != nil
		switch {
		case c.Present == nil && !others && c.Count == nil:
			v.failAt(p, "%s: say what to check of %s: present, visible, text, text_contains, value or count", who, name)
		case c.Present != nil && !*c.Present && (others || c.Count != nil && *c.Count != 0):
			v.failAt(p+".present", "%s: an element expected absent has no text, value, visibility or count to check", who)
		}
		if c.Count != nil && *c.Count < 0 {
			v.failAt(p+".count", "%s: a count cannot be negative", who)
		}
		within(p, c.Within)
	}
	if s.App == nil && (len(e.Controls) > 0 || len(e.ClickTargets) > 0) {
		v.failAt(path, "%s: controls and click_targets checks read the app's accessible controls, so they need an app: section", who)
	}
	for _, name := range sortedKeys(e.Controls) {
		c, p := e.Controls[name], path+".controls."+name
		if strings.TrimSpace(name) == "" {
			v.failAt(p, "%s: a control is named by its accessible name, which cannot be empty", who)
		}
		others := c.Enabled != nil || c.Checked != nil || c.Focused != nil
		if c.Present != nil && !*c.Present && others {
			v.failAt(p+".present", "%s: a control expected absent has no state to check", who)
		}
		within(p, c.Within)
	}
	for _, name := range sortedKeys(e.ClickTargets) {
		c, p := e.ClickTargets[name], path+".click_targets."+name
		if _, ok := s.ClickTargets[name]; !ok {
			v.failAt(p, "%s: %q is not a click_targets name (%s)", who, name, namesOrNone(sortedKeys(s.ClickTargets)))
		}
		if c.Name == "" && c.Role == "" && c.Enabled == nil && c.Checked == nil && c.Focused == nil {
			v.failAt(p, "%s: say what to check of the control at %s: name, role, enabled, checked or focused", who, name)
		}
		within(p, c.Within)
	}
	if c := e.Screenshot; c != nil {
		v.screenshot(path+".screenshot", who, c, s)
		within(path+".screenshot", c.Within)
	}
	if e.ExitCode != nil {
		if *e.ExitCode < 0 || *e.ExitCode > 255 {
			v.failAt(path+".exit_code", "%s: an exit code is between 0 and 255, got %d", who, *e.ExitCode)
		}
		if s.App == nil {
			v.failAt(path+".exit_code", "%s: exit_code checks the app's exit, so it needs an app: section", who)
		}
	}
}

// screenshot validates a screenshot check at path.
func (v *validator) screenshot(path, who string, c *ScreenshotCheck, s *Scenario) {
	if !baselineNameRE.MatchString(c.Name) {
		v.failAt(path+".name", "%s: a screenshot check needs name:, the baseline's file name without .png (letters, digits, '.', '_', '-'), got %q", who, c.Name)
	} else if v.baselines[c.Name] {
		v.failAt(path+".name", "%s: the baseline %q is compared by another check too; give each screenshot check its own name", who, c.Name)
	}
	if v.baselines == nil {
		v.baselines = map[string]bool{}
	}
	v.baselines[c.Name] = true
	if c.MaxDiffRatio < 0 || c.MaxDiffRatio > 1 {
		v.failAt(path+".max_diff_ratio", "%s: max_diff_ratio is the share of pixels that may differ, between 0 and 1, got %g", who, c.MaxDiffRatio)
	}
	if t := c.Threshold; t != nil && (*t < 0 || *t > 1) {
		v.failAt(path+".threshold", "%s: threshold is a colour distance between 0 (exact) and 1, got %g", who, *t)
	}
	for i, name := range c.Mask {
		p := index(path+".mask", i)
		if _, ok := s.CDPTargets[name]; ok {
			continue
		}
		t, ok := s.ClickTargets[name]
		switch {
		case !ok:
			v.failAt(p, "%s: %q is neither a click_targets nor a cdp_targets name (click targets: %s; cdp targets: %s)", who, name,
				namesOrNone(sortedKeys(s.ClickTargets)), namesOrNone(sortedKeys(s.CDPTargets)))
		case t.Kind() == "point":
			v.failAt(p, "%s: the click target %s is a point, which has no area to mask; give the area in mask_regions", who, name)
		}
	}
	for i, r := range c.MaskRegions {
		if r.Width <= 0 || r.Height <= 0 || r.X < 0 || r.Y < 0 {
			v.failAt(index(path+".mask_regions", i), "%s: a mask region is x, y, width and height in window pixels, with width and height above 0, got %+v", who, r)
		}
	}
}

// cdpURLs validates the pages cdp_navigate may open.
func (v *validator) cdpURLs(s *Scenario) {
	if len(s.CDPURLs) > 0 && s.Browser == nil {
		v.failAt("cdp_urls", "cdp_urls need a browser: section")
	}
	for _, name := range sortedKeys(s.CDPURLs) {
		if _, err := s.CDPURL(name); err != nil {
			v.failAt("cdp_urls."+name, "%v", err)
		}
	}
}

// CDPURL returns the address of the page the scenario calls name: an
// absolute http, https, file or about URL, or a reference relative to
// browser.start_url ("install.html", "/docs/faq.html").
func (s *Scenario) CDPURL(name string) (string, error) {
	raw, ok := s.CDPURLs[name]
	if !ok {
		return "", fmt.Errorf("no cdp_urls entry %q", name)
	}
	if strings.TrimSpace(raw) == "" {
		return "", fmt.Errorf("a cdp_urls entry is a URL and cannot be empty")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("not a URL: %v", redactURLError(err))
	}
	if u.User != nil {
		return "", fmt.Errorf("the URL embeds credentials; cdp_urls are shown in reports")
	}
	if u.IsAbs() {
		if !oneOf(u.Scheme, "http", "https", "file", "about") {
			return "", fmt.Errorf("want an http, https, file or about URL, got scheme %q", u.Scheme)
		}
		return u.String(), nil
	}
	if s.Browser == nil || s.Browser.StartURL == "" {
		return "", fmt.Errorf("%q is relative, and there is no browser.start_url to resolve it against", raw)
	}
	base, err := url.Parse(s.Browser.StartURL)
	if err != nil || !base.IsAbs() {
		return "", fmt.Errorf("%q is relative, and browser.start_url is not an absolute URL to resolve it against", raw)
	}
	return base.ResolveReference(u).String(), nil
}

func namesOrNone(names []string) string {
	if len(names) == 0 {
		return "none are declared"
	}
	return "declared: " + strings.Join(names, ", ")
}

// stepTool picks a step's tool key and decodes the expect: key beside it.
// A step is one tool call, optionally with expect:, or expect: alone.
func (d *decoder) stepTool(s *Step, n *yaml.Node, path string) (key, value *yaml.Node, ok bool) {
	const shape = "a step is one tool call: a mapping with one key, the tool's name (e.g. `- press_key: Return`), and optionally expect: beside it"
	if n.Kind != yaml.MappingNode || len(n.Content) != 2 && len(n.Content) != 4 {
		d.fail(n, path, shape)
		return nil, nil, false
	}
	var tool *yaml.Node
	for i := 0; i < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Value != ExpectTool {
			if tool != nil {
				d.fail(n, path, shape)
				return nil, nil, false
			}
			tool, value = k, v
			continue
		}
		if s.Expect != nil {
			d.fail(k, join(path, ExpectTool), "duplicate key")
			return nil, nil, false
		}
		if d.keys != nil {
			d.keys[join(path, ExpectTool)] = d.pos(k, join(path, ExpectTool))
		}
		s.Expect = &Expect{}
		d.decode(v, valueOf(s.Expect), join(path, ExpectTool), 2)
		if tool == nil && len(n.Content) == 2 {
			tool, value = k, v
		}
	}
	if tool == nil {
		d.fail(n, path, shape)
		return nil, nil, false
	}
	return tool, d.resolve(value, path, 2), true
}

// clickTargetsOnScreen refuses click targets that cannot be on the
// configured screen: a point right of or below it lies outside any window
// placed on it. A display the operator names may have another size, so
// only the embedded session's screen is checked.
func (v *validator) clickTargetsOnScreen(s *Scenario, o *Operator) {
	if o.Desktop.Display != "" {
		return
	}
	w, h := o.Desktop.Width, o.Desktop.Height
	for _, name := range sortedKeys(s.ClickTargets) {
		t := s.ClickTargets[name]
		if t.X >= w || t.Y >= h {
			v.failAt("click_targets."+name, "click target %s at (%d, %d) is outside the %dx%d screen (session.width, session.height): no window on it reaches that point", name, t.X, t.Y, w, h)
		}
	}
}
