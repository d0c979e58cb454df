package atspi

import (
	"context"
	"fmt"
	"image"
	"slices"
	"time"

	"github.com/godbus/dbus/v5"
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
// application, or the toolkit does not say). With a cache (Cached), the
// application's focus events name the accessible, which is read in two
// round trips instead of a walk of the whole tree.
func (a App) Focused(ctx context.Context) (Accessible, bool, error) {
	ctx, cancel := bounded(ctx, CallTimeout)
	defer cancel()
	rules := rulesFor(a.Toolkit)
	if a.cache != nil {
		if n, ok := a.cache.focused(ctx, rules); ok {
			acc := Accessible{Role: n.role, Name: n.name, bus: a.bus, node: n.ref, rules: rules}
			acc.Extents, _, _ = acc.Place(ctx)
			return acc, true, nil
		}
	}
	gen := a.cache.focusWalk()
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
	a.cache.seedFocus(gen, n.ref)
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

// noteFocus follows a focus event: the accessible at path took the focus
// (on) or lost it. Losing it leaves the focus unknown until the next
// walk, since the event that gives it elsewhere may have come first.
func (c *controlCache) noteFocus(path dbus.ObjectPath, on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.focusGen++
	switch {
	case on:
		c.focusAt, c.focusKnown = ref{c.app.node.Dest, path}, true
	case c.focusKnown && c.focusAt.Path == path:
		c.focusKnown = false
	}
}

// focusWalk counts a walk for the focus and returns the count of focus
// events so far; 0 without a cache.
func (c *controlCache) focusWalk() uint64 {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.focusWalks++
	return c.focusGen
}

// seedFocus records the focused accessible a walk found, unless a focus
// event arrived while it ran or the toolkit may not be sending its events
// yet.
func (c *controlCache) seedFocus(gen uint64, r ref) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.focusGen == gen && !time.Now().Before(c.trustFrom) {
		c.focusAt, c.focusKnown = r, true
	}
}

// focused is the accessible the focus events name, read now, when it
// still holds the focus as the walk would find it: focused and shown, with
// no child focused and shown (the walk answers with the deepest). ok is
// false when the walk must answer: the focus is not known, the toolkit may
// not be sending its events yet, or the accessible does not fit.
func (c *controlCache) focused(ctx context.Context, rules walkRules) (node, bool) {
	if err := c.sync(ctx); err != nil {
		return node{}, false
	}
	c.mu.Lock()
	at, known := c.focusAt, c.focusKnown && !time.Now().Before(c.trustFrom)
	c.mu.Unlock()
	if !known {
		return node{}, false
	}
	nodes, err := c.app.bus.visit(ctx, []ref{at}, 0, rules, false)
	if err != nil || len(nodes) != 1 {
		return node{}, false
	}
	n := nodes[0]
	if !n.states.has(stateFocused) || !rules.shown(n) || len(n.children) > maxFocusChildren {
		return node{}, false
	}
	if len(n.children) > 0 {
		kids, err := c.app.bus.visit(ctx, n.children, 1, rules, true)
		if err != nil || slices.ContainsFunc(kids, func(k node) bool { return k.states.has(stateFocused) && rules.shown(k) }) {
			return node{}, false
		}
	}
	return n, true
}

// maxFocusChildren bounds the children of a followed focus that are read
// to be sure none of them holds the focus; one with more is left to the
// walk.
const maxFocusChildren = 64
