package engine

import (
	"context"
	"errors"
	"fmt"
	"image"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/vision"
)

// failGrounding marks a grounded click whose expected change was not
// observed; it is reported to the model but counts against no budget.
const failGrounding = "grounding"

// errNoModel is why a vision question goes unasked in a run configured
// without a model.
var errNoModel = errors.New("no model is configured")

// visionReady makes sure a model is there for the vision tools: in a
// scripted run the client is created on first use.
func (m *modelState) visionReady() error {
	if m.ready() {
		if m.disabled {
			return errModelOff
		}
		return nil
	}
	if !m.files.Operator.HasModel() {
		return errNoModel
	}
	return m.setUpModel()
}

// checkExpectation asks the vision judge about a fresh capture. It
// completes the observation record.
func (a *actor) checkExpectation(ctx context.Context, n int, c call) result {
	expectation, _ := c.Args["expectation"].(string)
	rel, img, err := a.capture(ctx, false, true)
	if err != nil {
		return a.driverFailure(err)
	}
	if err := a.model.visionReady(); err != nil {
		if r, judged := a.checkByOCR(ctx, c, expectation); judged {
			r.screen, r.frame = rel, a.book.lastFrame
			return r
		}
		a.concern(fmt.Sprintf("check_expectation %q was not judged: %v", expectation, err))
		r := ok("unavailable: not judged (" + err.Error() + ")")
		r.screen, r.frame = rel, a.book.lastFrame
		return r
	}
	asked, on := a.zoomedCheck(img)
	j, err := vision.Check(ctx, a.model, a.model.profile, asked, expectation)
	var r result
	switch j.Outcome {
	case vision.Confirmed:
		r = ok("true: " + j.Reason + on)
	case vision.Contradicted:
		a.outcome.checkFalse = true
		r = ok("false: " + j.Reason + on)
		if c.Source == events.SourceScript {
			r = failed(failAssertion, "the expectation %q is false: %s", expectation, j.Reason)
		}
	default:
		if ctx.Err() != nil {
			// The run's own stop cut the judgement short: the step is
			// interrupted (step), which is no judge being unavailable.
			r = failed(failResolution, "check_expectation was interrupted: %v", context.Cause(ctx))
			break
		}
		why := j.Reason
		if err != nil {
			why = err.Error()
		}
		if byOCR, judged := a.checkByOCR(ctx, c, expectation); judged {
			r = byOCR
			break
		}
		a.concern(fmt.Sprintf("check_expectation %q was unavailable: %s", expectation, why))
		r = ok("unavailable: " + why)
	}
	// The check completes the observation record, so the model sees the
	// screen it stands for, as after observe_screen.
	r.screen, r.frame = rel, a.book.lastFrame
	return r
}

// clickGrounded locates a described element on a fresh capture, clicks it
// and judges the screen against the expectation (docs/architecture.md,
// "The rules": grounded clicks verify).
func (s *runState) clickGrounded(ctx context.Context, n int, c call) result {
	description, _ := c.Args["description"].(string)
	expect, _ := c.Args["expect"].(string)
	if err := s.model.visionReady(); err != nil {
		return failed(failResolution, "click_grounded cannot locate anything: %v", err)
	}
	attempts := s.files.Operator.Runner.GroundingAttempts
	attempt := 0
	var lastPoint *image.Point
	clicks := 0
	for {
		// Locate, bounded by runner.grounding_attempts per call.
		t, found, fault := s.locateTarget(ctx, n, &attempt, attempts, description, expect)
		if fault != nil {
			return *fault
		}
		pt, where, before, beforeRel := t.pt, t.where, t.before, t.beforeRel
		if !found {
			return failed(failResolution, "could not locate %q on the screen after %d attempts", description, attempt)
		}
		if lastPoint != nil && *lastPoint == pt {
			// Scripted retry that found the same place: clicking it again
			// would repeat what was already contradicted.
			return failed(failAssertion, "the expected change (%s) was NOT observed; re-locating found the same place, so the runtime did not click again", expect)
		}
		// The point goes to the report and the events, never into the
		// message: the model never sees pixel coordinates.
		point := &events.Point{X: pt.X, Y: pt.Y}
		r := s.act.input(ctx, func() error { return s.env.desk.Click(ctx, pt.X, pt.Y) }, fmt.Sprintf("clicked %q", description), point)
		clicks++
		if r.status != events.StatusOK {
			return r
		}
		var after *image.RGBA
		if s.book.lastFrame != nil {
			// A headless page's settled screen is decoded here, the
			// first time anything needs its pixels.
			var err error
			if after, err = s.book.lastFrame.Image(); err != nil {
				return s.act.driverFailure(fmt.Errorf("capture the screen: %w", err))
			}
		}
		j, jerr := vision.Judge(ctx, s.model, s.model.profile, before, after, expect)
		switch j.Outcome {
		case vision.Confirmed:
			s.act.grounding(n, attempt, description, expect, point, events.GroundingConfirmed, j.Reason, beforeRel, r.screen, where)
			r.message += "; the expected change was observed"
			return r
		case vision.Contradicted:
			s.act.grounding(n, attempt, description, expect, point, events.GroundingContradicted, j.Reason, beforeRel, r.screen, where)
			if c.Source == events.SourceScript && clicks == 1 && attempt < attempts {
				// A scripted step re-locates once, if
				// runner.grounding_attempts leaves a locate for it.
				lastPoint = &pt
				continue
			}
			res := failed(failGrounding, "%s; the expected change was NOT observed (%s). Observe the screen before any further pointer action.", r.message, j.Reason)
			if c.Source == events.SourceScript {
				res.fail = failAssertion
			}
			res.screen, res.point = r.screen, point
			return res
		default:
			why := j.Reason
			if jerr != nil {
				why = jerr.Error()
			}
			s.act.grounding(n, attempt, description, expect, point, events.GroundingUnavailable, why, beforeRel, r.screen, where)
			if ctx.Err() != nil {
				// The run's own stop cut the judgement short: the step is
				// interrupted, which is no judge being unavailable.
				res := failed(failResolution, "click_grounded was interrupted: %v", context.Cause(ctx))
				res.screen, res.point = r.screen, point
				return res
			}
			s.concern(fmt.Sprintf("the grounded click on %q is unverified: %s", description, why))
			r.message += "; the change is unverified (the judge was unavailable)"
			return r
		}
	}
}

// groundedTarget is where a grounded click goes: the point, how it was
// located, and the capture it was located on.
type groundedTarget struct {
	pt        image.Point
	where     located
	before    *image.RGBA
	beforeRel string
}

// locateTarget locates description on fresh captures while *attempt is
// below attempts, counting each in *attempt. found is false when nothing
// was found; fault is the result when a capture failed.
func (s *runState) locateTarget(ctx context.Context, n int, attempt *int, attempts int, description, expect string) (t groundedTarget, found bool, fault *result) {
	for *attempt < attempts {
		*attempt++
		// Locating encodes what it sends the model itself, so this
		// capture's PNG is the report's alone.
		rel, img, err := s.act.capture(ctx, false, false)
		if err != nil {
			r := s.act.driverFailure(err)
			return groundedTarget{}, false, &r
		}
		if at, cached := s.planner.cachedPlace(); cached {
			// A replayed call clicks where the cached run's did, its
			// crop found there (planner.go).
			return groundedTarget{pt: at, where: located{point: at}, before: img, beforeRel: rel}, true, nil
		}
		l, err := s.model.locate(ctx, n, *attempt, img, rel, description, expect)
		if err != nil {
			reason := err.Error()
			s.act.grounding(n, *attempt, description, expect, nil, events.GroundingUnavailable, reason, rel, "", located{})
			if errors.Is(err, vision.ErrNotFound) || ctx.Err() != nil {
				break
			}
			continue
		}
		return groundedTarget{pt: l.point, where: l, before: img, beforeRel: rel}, true, nil
	}
	return groundedTarget{}, false, nil
}

func (a *actor) grounding(step, attempt int, description, expect string, p *events.Point, outcome, reason, before, after string, where located) {
	a.publish(events.Event{Kind: events.KindGrounding, Step: step, Point: p, Screen: after, Grounding: &events.Grounding{
		Step: step, Attempt: attempt, Description: description, Expect: expect, Point: p, Outcome: outcome,
		Reason: reason, Before: before, After: after, Pass: where.pass, Crop: where.crop,
	}})
}
