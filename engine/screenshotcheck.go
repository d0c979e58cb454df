package engine

import (
	"context"
	"errors"
	"fmt"
	"image"
	"image/draw"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/kasmrt/kasmrt/engine/baseline"
	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/scenarios"
)

// baselinesDir is where a run keeps the images of its screenshot checks
// that did not match, in its report directory.
const baselinesDir = "baselines"

// screenshotProbe compares the current window with the check's baseline.
// A window that is still drawing would differ by chance, so a comparison
// waits for two captures in a row to be identical; each later try
// compares again, so a window that settles on the baseline within the
// bound holds. When the check is over, what it found is an event, and a
// window that did not match is kept in the report with the baseline and
// a diff.
func (ch *checker) screenshotProbe(c *scenarios.ScreenshotCheck, within time.Duration) probe {
	file := filepath.Join(scenarios.BaselineDir(ch.files.Scenario.File), c.Name+".png")
	threshold := c.ThresholdOrDefault()
	what := fmt.Sprintf("the window matches the baseline %s", c.Name)
	if c.MaxDiffRatio > 0 {
		what += fmt.Sprintf(" (at most %s of its pixels differing)", percent(c.MaxDiffRatio))
	}
	var (
		prev     *image.RGBA // the previous capture, to tell a steady window
		actual   *image.RGBA // the last steady capture
		expected image.Image
		outcome  = events.Baseline{Name: c.Name, File: file, MaxDiffRatio: c.MaxDiffRatio, Threshold: threshold, Result: events.BaselineUnsteady}
		diff     *image.RGBA
	)
	try := func(ctx context.Context) (bool, string, error) {
		img, err := ch.env.windowCapture(ctx)
		if err != nil {
			return false, "", err
		}
		if !baseline.Same(prev, img) {
			prev = img
			return false, "the window was still changing between two captures", nil
		}
		actual = img
		outcome.Width, outcome.Height = img.Bounds().Dx(), img.Bounds().Dy()
		if ch.r.opts.UpdateBaselines {
			if err := baseline.Write(file, img); err != nil {
				return false, "", fmt.Errorf("%w: %v", errCannotCheck, err)
			}
			outcome.Result = events.BaselineWritten
			return true, "wrote the window as the baseline " + file, nil
		}
		if expected == nil {
			expected, err = baseline.Read(file)
			if errors.Is(err, fs.ErrNotExist) {
				outcome.Result = events.BaselineMissing
				return false, fmt.Sprintf("there is no baseline %s yet; the window is kept in the report as %s: approve it with --update-baselines",
					file, filepath.Join(baselinesDir, c.Name+".actual.png")), errCannotCheck
			}
			if err != nil {
				return false, "", fmt.Errorf("%w: %v", errCannotCheck, err)
			}
		}
		masks, err := ch.env.maskAreas(ctx, c)
		if err != nil {
			// Without its masks the comparison would count what the
			// scenario asked to leave out: the check cannot be made.
			if !errors.Is(err, errCannotCheck) {
				err = fmt.Errorf("%w: %v", errCannotCheck, err)
			}
			return false, "", err
		}
		res, err := baseline.Compare(expected, img, baseline.Options{Threshold: threshold, Masks: masks})
		if err != nil {
			return false, "", fmt.Errorf("%w: %v", errCannotCheck, err)
		}
		diff = res.Diff
		outcome.DiffPixels, outcome.Pixels, outcome.DiffRatio, outcome.SizeDiffers = res.DiffPixels, res.Pixels, res.Ratio(), res.SizeDiffers
		if res.SizeDiffers {
			outcome.Result = events.BaselineDiffers
			eb := expected.Bounds()
			return false, fmt.Sprintf("the window is %dx%d and the baseline %dx%d", img.Bounds().Dx(), img.Bounds().Dy(), eb.Dx(), eb.Dy()), nil
		}
		holds := res.Ratio() <= c.MaxDiffRatio
		outcome.Result = map[bool]string{true: events.BaselineMatched, false: events.BaselineDiffers}[holds]
		return holds, fmt.Sprintf("%d of %d pixels differ (%s)", res.DiffPixels, res.Pixels, percent(res.Ratio())), nil
	}
	done := func(held bool) {
		if !held && actual != nil {
			outcome.Actual = ch.act.keepBaselineImage(c.Name+".actual.png", actual)
			if expected != nil {
				outcome.Expected = ch.act.keepBaselineImage(c.Name+".expected.png", expected)
			}
			if diff != nil {
				outcome.Diff = ch.act.keepBaselineImage(c.Name+".diff.png", diff)
			}
		}
		msg := fmt.Sprintf("screenshot %s: %s", c.Name, outcome.Result)
		if outcome.Pixels > 0 {
			msg += fmt.Sprintf(", %d of %d pixels differ (%s)", outcome.DiffPixels, outcome.Pixels, percent(outcome.DiffRatio))
		}
		ch.bus.Publish(events.Event{Kind: events.KindBaseline, Step: ch.book.stepN, Data: outcome, Message: msg})
	}
	return probe{what: what, within: within, try: try, done: done}
}

// keepBaselineImage writes img into the report's baselines directory and
// returns its path relative to the report, or "" when it could not be
// written (the report says so in the run's log).
func (a *actor) keepBaselineImage(name string, img image.Image) string {
	rel := filepath.Join(baselinesDir, name)
	if err := baseline.Write(filepath.Join(a.rep.Dir(), rel), img); err != nil {
		a.publish(events.Event{Kind: events.KindLog, Message: "keep the screenshot check's image: " + err.Error()})
		return ""
	}
	return rel
}

// windowCapture captures the window a check reads (the page, when the
// page is the screen), with the secrets on it blacked out as on every
// kept screen, as an image of its own from (0, 0).
func (e *environment) windowCapture(ctx context.Context) (*image.RGBA, error) {
	var (
		full image.Image
		err  error
	)
	switch {
	case e.web.PageIsTheScreen():
		full, err = e.web.Screenshot(ctx)
	case e.desk == nil:
		return nil, fmt.Errorf("%w: there is no screen to read", errCannotCheck)
	default:
		full, err = e.desk.Capture(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("capture the screen: %w", err)
	}
	// A copy: the capture may be the driver's buffer, and masking paints.
	screen := image.NewRGBA(full.Bounds())
	draw.Draw(screen, screen.Bounds(), full, full.Bounds().Min, draw.Src)
	e.maskSecrets(ctx, screen)
	area := screen.Bounds()
	if !e.web.PageIsTheScreen() && e.hasWin {
		if area, err = e.windowArea(screen.Bounds(), nil); err != nil {
			return nil, err
		}
	}
	return baseline.Normalize(screen.SubImage(area)), nil
}

// maskAreas finds the areas a screenshot check leaves out, in the
// compared image's coordinates: its regions, the controls and words its
// click targets name, and its cdp targets' elements.
func (e *environment) maskAreas(ctx context.Context, c *scenarios.ScreenshotCheck) ([]image.Rectangle, error) {
	var out []image.Rectangle
	for _, r := range c.MaskRegions {
		out = append(out, image.Rect(r.X, r.Y, r.X+r.Width, r.Y+r.Height))
	}
	if len(c.Mask) == 0 {
		return out, nil
	}
	origin := image.Point{}
	if !e.web.PageIsTheScreen() && e.hasWin {
		w, err := e.desk.Window(e.currentWindow().ID)
		if err != nil {
			return nil, fmt.Errorf("the application window is gone: %w", err)
		}
		origin = image.Pt(w.X, w.Y)
	}
	for _, name := range c.Mask {
		if sel, ok := e.files.Scenario.CDPTargets[name]; ok {
			var place func(context.Context) (image.Rectangle, bool, error)
			if e.web != nil {
				place = e.pageBox(sel)
			}
			if place == nil {
				return nil, fmt.Errorf("%w: the cdp target %s cannot be masked: the page's place on the screen is not known", errCannotCheck, name)
			}
			callCtx, cancel := context.WithTimeout(ctx, cdpCallTimeout)
			box, found, err := place(callCtx)
			cancel()
			switch {
			case err != nil:
				return nil, fmt.Errorf("find the cdp target %s to mask: %w", name, err)
			case found:
				out = append(out, box.Sub(origin).Inset(-maskMargin))
			}
			continue
		}
		t := e.files.Scenario.ClickTargets[name]
		var box image.Rectangle
		switch t.Kind() {
		case "name":
			ctl, err := e.nameTargetControl(ctx, t)
			if err != nil {
				return nil, fmt.Errorf("find the click target %s to mask: %w", name, err)
			}
			box = ctl.Extents
		case "text":
			b, err := e.textTargetBox(ctx, t)
			if err != nil {
				return nil, fmt.Errorf("find the click target %s to mask: %w", name, err)
			}
			box = b
		default:
			return nil, fmt.Errorf("%w: the click target %s is a point, which has no area to mask", errCannotCheck, name)
		}
		out = append(out, box.Sub(origin).Inset(-maskMargin))
	}
	return out, nil
}

// percent writes a ratio as a percentage a person reads at a glance.
func percent(r float64) string {
	switch p := r * 100; {
	case p == 0:
		return "0%"
	case p < 0.01:
		return "<0.01%"
	default:
		return fmt.Sprintf("%.2f%%", p)
	}
}
