package engine

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kasmrt/kasmrt/drivers/atspi"
	"github.com/kasmrt/kasmrt/drivers/cdp"
	"github.com/kasmrt/kasmrt/scenarios"
)

// focusReader is what the secret-place check needs of a browser tab: the
// page's origin and which cdp targets the focused element matches.
type focusReader interface {
	Focus(ctx context.Context, selectors map[string]string) (cdp.Focus, error)
}

// secretPlaceRefusal checks a type_text or cdp_fill of ref against the
// places its secret is bound to (provides.<ref>.secret.into). fillTarget is
// the cdp_fill target, "" for type_text, which types wherever the focus
// is. It returns a refusal, or a zero result when the value may go there
// (or is not bound). The refusal names places, never the value.
func (e *environment) secretPlaceRefusal(ctx context.Context, tool, ref, fillTarget string) result {
	places := e.files.Scenario.Bound(ref)
	if places == nil {
		return result{}
	}
	dest, where := e.destination(ctx, fillTarget)
	for _, p := range places {
		if p.Allows(dest) {
			return result{}
		}
	}
	allowed := make([]string, len(places))
	for i, p := range places {
		allowed[i] = p.String()
	}
	return failed(failRefused, "%s refused: the secret %q may only go into %s (provides.%s.secret.into), and this %s would put it into %s",
		tool, ref, strings.Join(allowed, ", or "), ref, tool, where)
}

// destination works out where input would land: the cdp_fill target or
// the page's focused element, the page's origin and the focused
// accessible's role and name, as far as each can be read. where describes
// it for the refusal.
func (e *environment) destination(ctx context.Context, fillTarget string) (scenarios.Destination, string) {
	var d scenarios.Destination
	var parts []string
	if fillTarget != "" {
		d.CDPTargets = []string{fillTarget}
		parts = append(parts, fmt.Sprintf("cdp target %q", fillTarget))
	}
	if e.web != nil {
		if fr, ok := e.web.Tab.(focusReader); ok {
			callCtx, cancel := context.WithTimeout(ctx, cdpCallTimeout)
			defer cancel()
			selectors := e.files.Scenario.CDPTargets
			if fillTarget != "" {
				selectors = nil // the target is known; only the origin is read
			}
			if f, err := fr.Focus(callCtx, selectors); err == nil {
				d.Origin = f.Origin
				if fillTarget == "" {
					d.CDPTargets = f.Targets
					if len(f.Targets) > 0 {
						parts = append(parts, fmt.Sprintf("the focused element (cdp target %s)", strings.Join(quoteAll(f.Targets), ", ")))
					} else {
						parts = append(parts, "the focused element of the page, which is no cdp target")
					}
				}
				parts = append(parts, "on "+f.Origin)
			} else {
				parts = append(parts, "on a page whose origin and focus could not be read")
			}
		}
	}
	if fillTarget == "" && e.web == nil {
		if acc, ok := e.focusedAccessible(ctx); ok {
			d.Role, d.Name = acc.Role, acc.Name
			parts = append(parts, fmt.Sprintf("the focused %s %q", acc.Role, acc.Name))
		} else {
			parts = append(parts, "the focused window, whose focused control the runtime cannot read (no browser tab, no accessible with the focus)")
		}
	}
	if len(parts) == 0 {
		parts = append(parts, "a place the runtime cannot identify")
	}
	return d, strings.Join(parts, " ")
}

func quoteAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = fmt.Sprintf("%q", n)
	}
	return out
}

// focusedAccessible reads the application's focused accessible over
// AT-SPI, when the run has found the application there.
func (e *environment) focusedAccessible(ctx context.Context) (atspi.Accessible, bool) {
	if e.a11y == nil || !e.a11y.Found {
		return atspi.Accessible{}, false
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	acc, ok, err := e.a11y.App.Focused(ctx)
	if err != nil || !ok {
		return atspi.Accessible{}, false
	}
	return acc, true
}
