package cdp

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/chromedp/chromedp"
)

// Focus is where keyboard input to the page would go now.
type Focus struct {
	// Origin is the page's origin (location.origin), e.g.
	// "https://login.example.com".
	Origin string `json:"origin"`
	// Targets are the names, among those asked about, whose selector
	// matches the focused element. Empty when nothing in the page has the
	// focus.
	Targets []string `json:"targets"`
}

// Focus reports the page's origin and which of the named selectors match
// the element that has the keyboard focus (document.activeElement), so a
// caller can tell where typed text would land before typing it. An
// invalid selector matches nothing.
func (t *Tab) Focus(ctx context.Context, selectors map[string]string) (Focus, error) {
	if selectors == nil {
		selectors = map[string]string{}
	}
	sel, err := json.Marshal(selectors)
	if err != nil {
		return Focus{}, fmt.Errorf("read the focus: %w", err)
	}
	expr := `(() => {
  const out = {origin: location.origin, targets: []};
  const el = document.activeElement;
  if (!el || el === document.body || el === document.documentElement) return out;
  for (const [name, sel] of Object.entries(` + string(sel) + `)) {
    try { if (el.matches(sel)) out.targets.push(name); } catch (e) {}
  }
  return out;
})()`
	var f Focus
	err = t.target(ctx, func(ctx context.Context, tgt *chromedp.Target) error {
		return evaluateJSON(ctx, tgt, expr, &f)
	})
	if err != nil {
		return Focus{}, fmt.Errorf("read the focus: %w", err)
	}
	return f, nil
}
