package atspi

import (
	"context"
	"fmt"
	"image"
)

// stateFocused is ATSPI_STATE_FOCUSED: the accessible has the keyboard
// focus.
const stateFocused = 12

// Accessible is an accessible's role and name.
type Accessible struct {
	// Role is the AT-SPI role name ("password text", "text").
	Role string
	// Name is the accessible name; often empty for entries, which are
	// labelled by a neighbouring label instead.
	Name string
	// Extents is where it is on the screen, empty when the toolkit does
	// not say.
	Extents image.Rectangle

	bus   *Bus
	node  ref
	rules walkRules
}

// Focused returns the showing accessible of the application that has the
// keyboard focus, and false when none has (the focus is in another
// application, or the toolkit does not say).
func (a App) Focused(ctx context.Context) (Accessible, bool, error) {
	ctx, cancel := bounded(ctx, CallTimeout)
	defer cancel()
	rules := rulesFor(a.Toolkit)
	focused := func(n node) bool {
		return n.states.has(stateFocused) && rules.shown(n)
	}
	nodes, _, err := a.walk(ctx, Limits{}.withDefaults(), 0, focused)
	if err != nil {
		return Accessible{}, false, fmt.Errorf("find the focused accessible of %s: %w", a.Name, err)
	}
	if len(nodes) == 0 {
		return Accessible{}, false, nil
	}
	// The deepest focused accessible is the one that receives the keys: a
	// focused window's focused entry.
	n := nodes[len(nodes)-1]
	acc := Accessible{Role: n.role, Name: n.name, bus: a.bus, node: n.ref, rules: rules}
	acc.Extents, _, _ = acc.Place(ctx)
	return acc, true, nil
}

// Place reads where the accessible is now, in two calls rather than a
// walk of the tree: its extents, and false when it is gone or no longer
// shown (a closed dialog's entry).
func (acc Accessible) Place(ctx context.Context) (image.Rectangle, bool, error) {
	if acc.bus == nil {
		return image.Rectangle{}, false, nil
	}
	ctx, cancel := bounded(ctx, CallTimeout)
	defer cancel()
	obj := acc.bus.object(acc.node)
	var states []uint32
	if err := obj.CallWithContext(ctx, ifaceAccessible+".GetState", 0).Store(&states); err != nil {
		// An accessible that vanished answers with an error: it shows
		// nothing any more.
		if ctx.Err() != nil {
			return image.Rectangle{}, false, ctx.Err()
		}
		return image.Rectangle{}, false, nil
	}
	if !acc.rules.shown(node{states: newStateSet(states)}) {
		return image.Rectangle{}, false, nil
	}
	var e struct{ X, Y, W, H int32 }
	if err := obj.CallWithContext(ctx, ifaceComponent+".GetExtents", 0, coordTypeScreen).Store(&e); err != nil {
		return image.Rectangle{}, true, fmt.Errorf("read the extents of the focused %s: %w", acc.Role, err)
	}
	if e.W <= 0 || e.H <= 0 {
		return image.Rectangle{}, true, nil
	}
	return image.Rect(int(e.X), int(e.Y), int(e.X+e.W), int(e.Y+e.H)), true, nil
}
