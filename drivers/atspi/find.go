package atspi

import (
	"context"
	"fmt"
	"image"
	"slices"
	"strings"

	"github.com/godbus/dbus/v5"
)

// NotFoundError says no control has the requested name; Available lists the
// names that do exist, so the caller (or the model) can pick one.
type NotFoundError struct {
	Name      string
	Available []string
}

func (e *NotFoundError) Error() string {
	if len(e.Available) == 0 {
		return fmt.Sprintf("no control named %q: the application publishes no named controls", e.Name)
	}
	return fmt.Sprintf("no control named %q; available: %s", e.Name, quoteList(e.Available))
}

// AmbiguousError says more than one control matches the requested name.
type AmbiguousError struct {
	Name       string
	Candidates []Control
}

func (e *AmbiguousError) Error() string {
	parts := make([]string, len(e.Candidates))
	for i, c := range e.Candidates {
		// No coordinates: the model reads this, and it picks names, not
		// points.
		parts[i] = fmt.Sprintf("%q (%s)", c.Name, c.Role)
	}
	return fmt.Sprintf("%d controls match %q: %s", len(e.Candidates), e.Name, strings.Join(parts, ", "))
}

// Find returns the application's control called name. An exact match wins;
// failing that, a case-insensitive match (ignoring surrounding spaces and
// GTK mnemonic underscores is left to the toolkit, which strips them).
// Several matches at the same level are an *AmbiguousError; none is a
// *NotFoundError.
func (a App) Find(ctx context.Context, name string) (Control, error) {
	controls, err := a.Controls(ctx)
	if err != nil {
		return Control{}, err
	}
	return FindControl(controls, name)
}

// FindControl picks the control called name from controls by the rules of
// App.Find, so a caller holding a fresh list need not walk the tree again.
func FindControl(controls []Control, name string) (Control, error) {
	matchers := []func(string) bool{
		func(s string) bool { return s == name },
		func(s string) bool { return strings.EqualFold(strings.TrimSpace(s), strings.TrimSpace(name)) },
	}
	for _, match := range matchers {
		var found []Control
		for _, c := range controls {
			if match(c.Name) {
				found = append(found, c)
			}
		}
		switch len(found) {
		case 0:
			continue
		case 1:
			return found[0], nil
		default:
			return Control{}, &AmbiguousError{Name: name, Candidates: found}
		}
	}
	return Control{}, &NotFoundError{Name: name, Available: Names(controls)}
}

// Names lists the distinct names of controls in order.
func Names(controls []Control) []string {
	var names []string
	for _, c := range controls {
		if !slices.Contains(names, c.Name) {
			names = append(names, c.Name)
		}
	}
	return names
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// clickActions are action names that mean "activate this control", in order
// of preference; toolkits differ ("click" in GTK, "Press" in Qt).
var clickActions = []string{"click", "press", "activate", "toggle", "jump", "open"}

// ActionIndex is the index of the action Click performs: the first action
// whose name means activation, else the first action.
func (c Control) ActionIndex() int {
	for _, want := range clickActions {
		for i, a := range c.Actions {
			if strings.EqualFold(a, want) {
				return i
			}
		}
	}
	return 0
}

// Click performs the control's activation action over AT-SPI. It returns an
// error when the toolkit refuses the action (for example on an insensitive
// control); the caller may then click Centre with the pointer instead.
func (c Control) Click(ctx context.Context) error {
	return c.Do(ctx, c.ActionIndex())
}

// Do performs the control's action number i.
func (c Control) Do(ctx context.Context, i int) error {
	if c.bus == nil {
		return fmt.Errorf("act on control %q: control was not read from a bus", c.Name)
	}
	if i < 0 || i >= len(c.Actions) {
		return fmt.Errorf("act on control %q: no action %d (has %d)", c.Name, i, len(c.Actions))
	}
	actx, cancel := bounded(ctx, ActionTimeout)
	defer cancel()
	var ok bool
	err := c.bus.object(c.node).CallWithContext(actx, ifaceAction+".DoAction", 0, int32(i)).Store(&ok)
	if err != nil && ctx.Err() == nil && actx.Err() != nil {
		// The bound ran out, not the caller's time: the application holds
		// the call.
		return fmt.Errorf("%s control %q: %w within %s", c.Actions[i], c.Name, ErrActionStuck, ActionTimeout)
	}
	if err != nil {
		return fmt.Errorf("%s control %q: %w", c.Actions[i], c.Name, err)
	}
	if !ok {
		return fmt.Errorf("%s control %q: the application refused the action", c.Actions[i], c.Name)
	}
	return nil
}

// Contains asks the application whether the screen point p is inside the
// control as it is laid out now: a pointer click at p reaches it unless
// another window covers it.
func (c Control) Contains(ctx context.Context, p image.Point) (bool, error) {
	if c.bus == nil {
		return false, fmt.Errorf("hit-test control %q: control was not read from a bus", c.Name)
	}
	ctx, cancel := bounded(ctx, CallTimeout)
	defer cancel()
	var in bool
	err := c.bus.object(c.node).CallWithContext(ctx, ifaceComponent+".Contains", 0, int32(p.X), int32(p.Y), coordTypeScreen).Store(&in)
	if err != nil {
		return false, fmt.Errorf("hit-test control %q at %d,%d: %w", c.Name, p.X, p.Y, err)
	}
	return in, nil
}

// maxWindowDepth bounds the walk from a control up to its window.
const maxWindowDepth = 64

// WindowExtents returns the screen rectangle of the window the control is
// in: its ancestor just below the application. A menu's items count as in
// the window whose menu bar opened them, as the toolkits' trees have it.
// It is empty when the window gives no extents.
func (c Control) WindowExtents(ctx context.Context) (image.Rectangle, error) {
	if c.bus == nil {
		return image.Rectangle{}, fmt.Errorf("find the window of control %q: control was not read from a bus", c.Name)
	}
	ctx, cancel := bounded(ctx, CallTimeout)
	defer cancel()
	node := c.node
	for range maxWindowDepth {
		var v dbus.Variant
		if err := c.bus.object(node).CallWithContext(ctx, ifaceProperties+".Get", 0, ifaceAccessible, "Parent").Store(&v); err != nil {
			return image.Rectangle{}, fmt.Errorf("find the window of control %q: %w", c.Name, err)
		}
		var parent ref
		if err := dbus.Store([]any{v.Value()}, &parent); err != nil {
			return image.Rectangle{}, fmt.Errorf("find the window of control %q: parent %v: %w", c.Name, v, err)
		}
		if parent.Dest != node.Dest || parent.Path == rootPath || parent.Path == "/org/a11y/atspi/null" {
			return c.bus.extentsOf(ctx, node), nil
		}
		node = parent
	}
	return image.Rectangle{}, fmt.Errorf("find the window of control %q: no window within %d levels", c.Name, maxWindowDepth)
}
