package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kasmrt/kasmrt/drivers/atspi"
	"github.com/kasmrt/kasmrt/engine/events"
)

// click_element looks again for a control it did not find for
// findAgainFor, since a control can appear a moment after the previous
// action; findBound bounds the whole search, as one walk of a busy
// application's tree can take seconds on a loaded machine.
const (
	findAgainFor = 2 * time.Second
	findBound    = 5 * time.Second
)

// whyNotOffered is " (click_element is not offered: why)" for a
// click_element call the run cannot take, and "" otherwise.
func (s *runState) whyNotOffered(tool string) string {
	if tool != "click_element" || s.a11y == nil || s.a11y.Missing == "" {
		return ""
	}
	return " (click_element is not offered: " + s.a11y.Missing + ")"
}

// clickElement clicks a named control through its accessibility action,
// falling back to a pointer click at its centre.
func (s *runState) clickElement(ctx context.Context, c call) result {
	name, _ := c.Args["name"].(string)
	if s.a11y == nil || !s.a11y.Found {
		why := "the application publishes no named controls"
		if s.a11y != nil && s.a11y.Missing != "" {
			why = "click_element is not offered: " + s.a11y.Missing
		}
		return failed(failResolution, "%s", why)
	}
	findCtx, cancel := context.WithTimeout(ctx, findBound)
	defer cancel()
	again := time.Now().Add(findAgainFor)
	// Controls can appear a moment after an action; look again briefly,
	// and report the last "not found" (with the names there are) rather
	// than the timeout.
	var ctl atspi.Control
	var err, notFound error
	for {
		ctl, err = s.a11y.App.Find(findCtx, name)
		var nf *atspi.NotFoundError
		if errors.As(err, &nf) {
			notFound = err
			if findCtx.Err() == nil && time.Now().Before(again) {
				time.Sleep(100 * time.Millisecond)
				continue
			}
		}
		if err != nil && notFound != nil && findCtx.Err() != nil {
			err = notFound
		}
		break
	}
	if err != nil {
		return failed(failResolution, "%s", explainDriverError(err))
	}
	centre := ctl.Centre()
	p := &events.Point{X: centre.X, Y: centre.Y}
	how := "its accessibility action"
	act := func() error {
		if err := s.a11y.App.Activate(ctx, ctl); err != nil {
			how = "the pointer (the action was refused: " + err.Error() + ")"
			return s.desk.Click(ctx, centre.X, centre.Y)
		}
		return nil
	}
	r := s.input(ctx, act, "", p)
	if r.status == events.StatusOK {
		r.message = fmt.Sprintf("clicked the %s %q through %s", ctl.Role, ctl.Name, how)
	}
	return r
}
