package engine

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"strings"
	"time"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/report"
	"github.com/kasmrt/kasmrt/scenarios"
)

// guardBook is what a call is checked against before it runs, and the
// budgets the calls spend: the steps' numbering, the tool list and its
// schemas, what the model has seen of the screen, the declared tools'
// calls, the time held waiting and the declared tools' failures in a row.
type guardBook struct {
	// stepN numbers the run's steps: the last one run or recorded.
	stepN int

	offers Offers
	tools  map[string]scenarios.ToolSpec
	names  []string
	// observed is set while the model has looked at the screen since it
	// last changed (observe before acting).
	observed bool
	// lastFrame is the last capture, as the report writes it; a headless
	// page's is decoded only when its pixels are asked for. lastImage is
	// its pixels when the capture came as pixels, and sameAs, when set,
	// the earlier capture it shows unchanged but for a text cursor's
	// blink (keep).
	lastFrame *report.Frame
	lastImage *image.RGBA
	sameAs    *report.Frame

	// declaredCalls counts each declared tool's calls, which its budget
	// bounds.
	declaredCalls map[string]int
	// held is the time the waiting tools held the run, which
	// runner.max_hold_s bounds.
	held time.Duration
	// consecutiveToolErrors counts declared-tool failures since the last
	// success: runner.max_tool_errors bounds it, and the tool_errors
	// budget shows it. The loop's totalToolErrors is the report's count.
	consecutiveToolErrors int
}

// setTools fixes the tool list for the given offers: list is the tools
// in the order the model is offered them, each as adapt makes it.
func (b *guardBook) setTools(offers Offers, list []scenarios.ToolSpec, adapt func(scenarios.ToolSpec) scenarios.ToolSpec) {
	b.offers = offers
	b.tools = make(map[string]scenarios.ToolSpec, len(list))
	b.names = b.names[:0]
	for _, t := range list {
		b.tools[t.Name] = adapt(t)
		b.names = append(b.names, t.Name)
	}
}

// overBudget says why the loop must degrade when the declared tools
// failed too often in a row (maxToolErrors) or the waiting tools used
// their time (maxHoldS), or "" while neither bound is reached; 0 is no
// bound.
func (b *guardBook) overBudget(maxToolErrors int, maxHoldS float64) string {
	if maxToolErrors > 0 && b.consecutiveToolErrors >= maxToolErrors {
		return fmt.Sprintf("%d declared-tool failures in a row (runner.max_tool_errors = %d)", b.consecutiveToolErrors, maxToolErrors)
	}
	if maxHoldS > 0 && b.held.Seconds() >= maxHoldS {
		return fmt.Sprintf("the waiting tools used the %gs budget (runner.max_hold_s)", maxHoldS)
	}
	return ""
}

// check is the guard every call passes before it runs: a known tool,
// arguments its schema accepts, a screen the model has observed since it
// changed, and a declared tool's budget. The zero result lets the call
// run. declared is the scenario's declared tools; whyNotOffered says why a
// tool the run knows is not offered.
func (b *guardBook) check(c call, declared map[string]scenarios.DeclaredTool, whyNotOffered func(string) string) result {
	spec, known := b.tools[c.Tool]
	if !known {
		return failed(failMalformed, "unknown tool %q%s; the tools available are: %s", c.Tool, whyNotOffered(c.Tool), strings.Join(b.names, ", "))
	}
	if problems := scenarios.CheckArgs(spec, c.Args); len(problems) > 0 {
		msgs := make([]string, len(problems))
		for i, p := range problems {
			msgs[i] = p.Text
		}
		return failed(failMalformed, "%s", strings.Join(msgs, "; "))
	}
	if c.Source.Planned() && spec.NeedsObservation && !b.observed {
		return failed(failRefused, "%s refused: the screen changed since the last observation; call observe_screen (or check_expectation) first", c.Tool)
	}
	if spec.Declared {
		dt := declared[c.Tool]
		if dt.Budget > 0 && b.declaredCalls[c.Tool] >= dt.Budget {
			return failed(failResolution, "%s has used its budget of %d calls", c.Tool, dt.Budget)
		}
	}
	return result{}
}

// recordObservation keeps the observation record (docs/architecture.md) from the
// tool's spec once it has run: a tool that observes completes it when it
// succeeds; one that can change the screen clears it, whether or not it
// succeeded, since a failed action may still have changed something.
func (b *guardBook) recordObservation(spec scenarios.ToolSpec, res result) {
	switch {
	case spec.Observes && res.status == events.StatusOK:
		b.observed = true
	case spec.ChangesScreen:
		b.observed = false
	}
}

// isAction reports whether a tool is an action meant to change the screen
// (input, a declared command); looking, waiting and reporting are not.
func (b *guardBook) isAction(tool string) bool {
	spec := b.tools[tool]
	return spec.ChangesScreen && !spec.Holds
}

// hold runs fn, a tool that waits, within what is left of the waiting
// budget limit (runner.max_hold_s; 0 is no bound), and adds the time it
// took to the time held.
func (b *guardBook) hold(ctx context.Context, limit, want time.Duration, fn func(context.Context) result) result {
	if limit > 0 {
		left := limit - b.held
		if left <= 0 {
			return failed(failResolution, "the waiting budget (runner.max_hold_s = %gs) is used up", limit.Seconds())
		}
		if want > left {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, left)
			defer cancel()
		}
	}
	start := time.Now()
	r := fn(ctx)
	b.held += time.Since(start)
	return r
}

// keep makes frame the last capture; img is its pixels, nil for a page
// the browser encoded. A capture that differs from the one before it
// only in a box a text cursor fits in keeps that one's sum: a blinking
// cursor is not a change the model made, and would otherwise hide a loop
// that repeats itself and tell the model its every call changed the
// screen.
func (b *guardBook) keep(frame *report.Frame, img *image.RGBA) {
	switch {
	case img != nil && b.lastImage != nil && onlyCursorBlinked(b.lastImage, img):
		if b.sameAs == nil {
			b.sameAs = b.lastFrame
		}
	default:
		b.sameAs = nil
	}
	b.lastFrame, b.lastImage = frame, img
}

// lastSum is the last capture's sum (or the earlier capture's it shows
// unchanged but for a cursor's blink), decoding a headless page's screen
// if nothing has yet; zero when there is no capture.
func (b *guardBook) lastSum() ([32]byte, error) {
	switch {
	case b.sameAs != nil:
		return b.sameAs.Sum()
	case b.lastFrame == nil:
		return [32]byte{}, nil
	}
	return b.lastFrame.Sum()
}

// Text cursors are at most cursorWidth pixels wide and cursorHeight
// tall: a tall line's in a large font.
const (
	cursorWidth  = 3
	cursorHeight = 64
)

// onlyCursorBlinked reports whether two captures of the same size differ,
// and only in a box a text cursor fits in.
func onlyCursorBlinked(a, b *image.RGBA) bool {
	if a.Bounds() != b.Bounds() || a.Stride != b.Stride {
		return false
	}
	box := image.Rectangle{}
	w := a.Bounds().Dx() * 4
	for y := 0; y < a.Bounds().Dy(); y++ {
		rowA, rowB := a.Pix[y*a.Stride:y*a.Stride+w], b.Pix[y*b.Stride:y*b.Stride+w]
		if bytes.Equal(rowA, rowB) {
			continue
		}
		for x := 0; x < w; x += 4 {
			if !bytes.Equal(rowA[x:x+4], rowB[x:x+4]) {
				box = box.Union(image.Rect(x/4, y, x/4+1, y+1))
			}
		}
		if box.Dx() > cursorWidth || box.Dy() > cursorHeight {
			return false
		}
	}
	return !box.Empty()
}
