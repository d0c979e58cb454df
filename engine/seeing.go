package engine

import (
	"context"
	"errors"
	"fmt"
	"image"
	"strings"

	"github.com/kasmrt/kasmrt/drivers/atspi"
	"github.com/kasmrt/kasmrt/drivers/ocr"
	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/vision"
	"github.com/kasmrt/kasmrt/scenarios"
)

// textReader is the run's OCR, made on first use; one tesseract runs at a
// time for the run.
func (e *environment) textReader() vision.OCR {
	if e.ocrReader == nil {
		e.ocrReader = ocr.NewReader(1)
	}
	return vision.OCR{Reader: e.ocrReader}
}

// windowArea is the part of the screen the current window covers (the one
// switch_window chose, else the startup window; the whole screen without a
// known window), and region, when given, is taken inside it.
func (e *environment) windowArea(screen image.Rectangle, region *scenarios.Region) (image.Rectangle, error) {
	area := screen
	origin := screen.Min
	if e.hasWin {
		w, err := e.desk.Window(e.currentWindow().ID)
		if err != nil {
			return image.Rectangle{}, fmt.Errorf("the application window is gone: %w", err)
		}
		if w.ID == e.win.ID {
			e.win = w
		}
		origin = image.Pt(w.X, w.Y)
		area = image.Rect(w.X, w.Y, w.X+w.Width, w.Y+w.Height).Intersect(screen)
	}
	if region != nil {
		r := image.Rect(region.X, region.Y, region.X+region.Width, region.Y+region.Height).Add(origin)
		area = area.Intersect(r)
	}
	if area.Empty() {
		return image.Rectangle{}, errors.New("the region to read is outside the screen")
	}
	return area, nil
}

// readText reads the words in the window (or a region of it) on a fresh
// capture.
func (e *environment) readText(ctx context.Context, region *scenarios.Region) ([]ocr.Word, image.Rectangle, error) {
	img, err := e.desk.Capture(ctx)
	if err != nil {
		return nil, image.Rectangle{}, fmt.Errorf("capture the screen: %w", err)
	}
	area, err := e.windowArea(img.Bounds(), region)
	if err != nil {
		return nil, image.Rectangle{}, err
	}
	words, err := e.textReader().ReadText(ctx, img.SubImage(area))
	if err != nil {
		return nil, image.Rectangle{}, err
	}
	return words, area, nil
}

// textTarget finds where a text target is read: the one place, or the
// place nearest to its near target.
func (e *environment) textTarget(ctx context.Context, t scenarios.ClickTarget) (events.Point, error) {
	box, err := e.textTargetBox(ctx, t)
	if err != nil {
		return events.Point{}, err
	}
	c := vision.Centre(box)
	return events.Point{X: c.X, Y: c.Y}, nil
}

// textTargetBox is where on the screen a text target's words are read.
func (e *environment) textTargetBox(ctx context.Context, t scenarios.ClickTarget) (image.Rectangle, error) {
	words, area, err := e.readText(ctx, t.Within)
	if err != nil {
		return image.Rectangle{}, err
	}
	matches := ocr.Find(words, t.Text)
	if t.Near != "" && len(matches) > 1 {
		anchor, err := e.clickPoint(ctx, t.Near)
		if err != nil {
			return image.Rectangle{}, fmt.Errorf("the target it is near, %s: %w", t.Near, err)
		}
		best := matches[0]
		for _, m := range matches[1:] {
			if distance2(vision.Centre(m.Box), anchor) < distance2(vision.Centre(best.Box), anchor) {
				best = m
			}
		}
		matches = []ocr.Match{best}
	}
	if len(matches) != 1 {
		return image.Rectangle{}, vision.TextNotOne(t.Text, matches, words, area)
	}
	return matches[0].Box, nil
}

func distance2(p image.Point, q events.Point) int {
	dx, dy := p.X-q.X, p.Y-q.Y
	return dx*dx + dy*dy
}

// nameTarget finds the control a name target names, narrowed by role
// ("button" matches "push button"), and returns its centre.
func (e *environment) nameTarget(ctx context.Context, t scenarios.ClickTarget) (events.Point, error) {
	ctl, err := e.nameTargetControl(ctx, t)
	if err != nil {
		return events.Point{}, err
	}
	c := ctl.Centre()
	return events.Point{X: c.X, Y: c.Y}, nil
}

// nameTargetControl finds the control a name target names, with a place
// on the screen.
func (e *environment) nameTargetControl(ctx context.Context, t scenarios.ClickTarget) (atspi.Control, error) {
	if e.a11y == nil || !e.a11y.Found {
		why := "the application's accessible controls are not known"
		if e.a11y != nil && e.a11y.Missing != "" {
			why += ": " + e.a11y.Missing
		}
		return atspi.Control{}, errors.New(why)
	}
	findCtx, cancel := context.WithTimeout(ctx, findBound)
	defer cancel()
	controls, err := e.a11y.App.Controls(findCtx)
	if err != nil {
		return atspi.Control{}, fmt.Errorf("list the application's controls: %w", err)
	}
	if t.Role != "" {
		var kept []atspi.Control
		for _, c := range controls {
			if roleMatches(c.Role, t.Role) {
				kept = append(kept, c)
			}
		}
		controls = kept
	}
	ctl, err := atspi.FindControl(controls, t.Name)
	if err != nil {
		if t.Role != "" {
			return atspi.Control{}, fmt.Errorf("among controls of role %q: %w", t.Role, err)
		}
		return atspi.Control{}, err
	}
	if ctl.Extents.Empty() {
		return atspi.Control{}, fmt.Errorf("the control %q reports no place on the screen", ctl.Name)
	}
	return ctl, nil
}

func roleMatches(role, want string) bool {
	role, want = strings.ToLower(strings.TrimSpace(role)), strings.ToLower(strings.TrimSpace(want))
	return role == want || strings.HasSuffix(role, " "+want)
}

// textCondition reports whether text is read in the window now.
func (e *environment) textCondition(ctx context.Context, text string) (bool, error) {
	words, _, err := e.readText(ctx, nil)
	if err != nil {
		return false, err
	}
	return len(ocr.Find(words, text)) > 0, nil
}

// ocrJudgement answers a check_expectation that quotes text by reading
// the window, for when the model is off or unavailable: it holds when
// every quoted text is read. ok is false when the expectation quotes
// nothing or the text cannot be read; the caller then reports the check
// unavailable as before.
func (e *environment) ocrJudgement(ctx context.Context, expectation string) (met bool, reason string, ok bool) {
	quotes := scenarios.QuotedTexts(expectation)
	if len(quotes) == 0 || e.desk == nil {
		return false, "", false
	}
	words, _, err := e.readText(ctx, nil)
	if err != nil {
		e.log("read the window's text for check_expectation: %v", err)
		return false, "", false
	}
	for _, q := range quotes {
		if len(ocr.Find(words, q)) == 0 {
			return false, fmt.Sprintf("judged by OCR: the text %q is not read in the window", q), true
		}
	}
	return true, fmt.Sprintf("judged by OCR: the window shows %s", strings.Join(quoteAll(quotes), " and ")), true
}

// checkByOCR is check_expectation's result when OCR could judge it; the
// verdict rules are the model judge's (a false scripted check fails).
func (a *actor) checkByOCR(ctx context.Context, c call, expectation string) (result, bool) {
	met, reason, judged := a.env.ocrJudgement(ctx, expectation)
	if !judged {
		return result{}, false
	}
	if met {
		return ok("true: " + reason), true
	}
	a.outcome.checkFalse = true
	if c.Source == events.SourceScript {
		return failed(failAssertion, "the expectation %q is false: %s", expectation, reason), true
	}
	return ok("false: " + reason), true
}
