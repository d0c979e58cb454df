package cdp

import (
	"context"
	"fmt"
	"image"
	"math"

	"github.com/chromedp/chromedp"
)

// boxFunction reads the viewport box of the first match of a selector, or
// null when nothing matches or the element is not rendered. It is fixed
// script; the selector arrives as an argument, never as code.
const boxFunction = `function(sel) {
	const el = document.querySelector(sel);
	if (!el) return null;
	const r = el.getBoundingClientRect();
	if (!(r.width > 0 && r.height > 0)) return null;
	return [r.left, r.top, r.right, r.bottom];
}`

// Box returns where the first element matching selector is in the
// viewport, in CSS pixels, and false when nothing matches or it is not
// rendered. Add ViewportOrigin for screen coordinates of a headful
// browser.
func (t *Tab) Box(ctx context.Context, selector string) (image.Rectangle, bool, error) {
	var edges []float64
	err := t.target(ctx, func(ctx context.Context, tgt *chromedp.Target) error {
		return callJSON(ctx, tgt, boxFunction, &edges, selector)
	})
	if err != nil {
		return image.Rectangle{}, false, fmt.Errorf("read the box of %s: %w", selector, err)
	}
	if len(edges) != 4 {
		return image.Rectangle{}, false, nil
	}
	// Whole pixels that cover the box, so a mask drawn on it hides every
	// pixel the element paints.
	r := image.Rect(int(math.Floor(edges[0])), int(math.Floor(edges[1])), int(math.Ceil(edges[2])), int(math.Ceil(edges[3])))
	return r, !r.Empty(), nil
}
