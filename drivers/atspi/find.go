package atspi

import (
	"context"
	"fmt"
	"image"
	"slices"
	"strings"
	"sync"

	"github.com/godbus/dbus/v5"
)

// NotFoundError says no control has the requested name; Available lists the
// names that do exist, so the caller (or the model) can pick one.
type NotFoundError struct {
	Name      string
	Available []string
	// Closest are the available names nearest the requested one, nearest
	// first, for a "did you mean".
	Closest []string
}

func (e *NotFoundError) Error() string {
	if len(e.Available) == 0 {
		return fmt.Sprintf("no control named %q: the application publishes no named controls", e.Name)
	}
	if len(e.Closest) > 0 {
		return fmt.Sprintf("no control named %q; the closest names are %s; available: %s", e.Name, quoteList(e.Closest), quoteList(e.Available))
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
// failing that, a case-insensitive match ignoring surrounding spaces;
// failing that, a match of the names as a person reads them (see
// FoldName). GTK mnemonic underscores are left to the toolkit, which
// strips them. Several matches at the same level are an *AmbiguousError;
// none is a *NotFoundError naming the closest names.
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
		func(s string) bool { return FoldName(s) == FoldName(name) },
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
	names := Names(controls)
	return Control{}, &NotFoundError{Name: name, Available: names, Closest: Closest(name, names, 3)}
}

// nameFolds are the characters a person does not tell apart from plainer
// ones in a control's name: the minus sign, dashes and hyphens from "-",
// the ellipsis from three dots, the multiplication sign from "x", and the
// non-breaking and narrow spaces from a space.
var nameFolds = strings.NewReplacer(
	"\u2212", "-", "\u2010", "-", "\u2011", "-", "\u2012", "-", "\u2013", "-", "\u2014", "-",
	"\u2026", "...",
	"\u00d7", "x",
	"\u00a0", " ", "\u2007", " ", "\u202f", " ", "\u2009", " ",
	"\u2018", "'", "\u2019", "'", "\u201c", "\"", "\u201d", "\"",
)

// FoldName is a control's name as a person reads it: lower case, the
// look-alike characters of nameFolds made plain, runs of white space made
// one space, and no space around it. click_element matches names folded
// when no name matches as given.
func FoldName(name string) string {
	return strings.Join(strings.Fields(strings.ToLower(nameFolds.Replace(name))), " ")
}

// Closest returns up to n of names nearest to name by edit distance of
// their folded forms, nearest first; names further than half the longer
// name's length are no suggestion.
func Closest(name string, names []string, n int) []string {
	type scored struct {
		name string
		d    int
	}
	want := []rune(FoldName(name))
	var near []scored
	for _, c := range names {
		got := []rune(FoldName(c))
		d := editDistance(want, got)
		if d <= max(len(want), len(got))/2 {
			near = append(near, scored{c, d})
		}
	}
	slices.SortStableFunc(near, func(a, b scored) int { return a.d - b.d })
	out := make([]string, 0, min(n, len(near)))
	for _, s := range near[:min(n, len(near))] {
		out = append(out, s.name)
	}
	return out
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b []rune) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
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
	win, err := c.window(ctx)
	if err != nil {
		return image.Rectangle{}, err
	}
	return c.bus.extentsOf(ctx, win), nil
}

// windowClimbs bounds the climbs WindowsOf has under way, so a window of
// hundreds of controls does not flood the application's bus queue.
const windowClimbs = 16

// WindowsOf returns what WindowExtents returns for each control, climbing
// from up to windowClimbs controls at a time and asking each window they
// are in for its extents once: one after the other, the climbs and the
// questions took hundreds of round trips per read of a GTK 4 window.
func WindowsOf(ctx context.Context, cs []Control) ([]image.Rectangle, []error) {
	ctx, cancel := bounded(ctx, CallTimeout)
	defer cancel()
	wins, errs := make([]ref, len(cs)), make([]error, len(cs))
	var wg sync.WaitGroup
	slots := make(chan struct{}, windowClimbs)
	for i, c := range cs {
		if c.bus == nil {
			errs[i] = fmt.Errorf("find the window of control %q: control was not read from a bus", c.Name)
			continue
		}
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			wins[i], errs[i] = c.window(ctx)
		})
	}
	wg.Wait()
	type key struct {
		bus *Bus
		win ref
	}
	asked := map[key]*dbus.Call{}
	for i, c := range cs {
		if k := (key{c.bus, wins[i]}); errs[i] == nil && asked[k] == nil {
			asked[k] = c.bus.object(wins[i]).GoWithContext(ctx, ifaceComponent+".GetExtents", 0, nil, coordTypeScreen)
		}
	}
	boxes := make(map[key]image.Rectangle, len(asked))
	for k, call := range asked {
		// A window that cannot say has no extents, as in extentsOf.
		var e screenBox
		if (<-call.Done).Store(&e) == nil {
			boxes[k] = e.rect()
		}
	}
	out := make([]image.Rectangle, len(cs))
	for i, c := range cs {
		if errs[i] == nil {
			out[i] = boxes[key{c.bus, wins[i]}]
		}
	}
	return out, errs
}

// window is the accessible just below the application that the control
// is in, from the memo when a climb found it since the tree last changed.
func (c Control) window(ctx context.Context) (ref, error) {
	node := c.node
	win, known, gen := c.windows.lookup(node)
	if known {
		return win, nil
	}
	// The accessibles climbed through are in the same window; the memo
	// keeps them all, so a sibling's climb stops one level up.
	var chain []ref
	for range maxWindowDepth {
		chain = append(chain, node)
		var v dbus.Variant
		if err := c.bus.object(node).CallWithContext(ctx, ifaceProperties+".Get", 0, ifaceAccessible, "Parent").Store(&v); err != nil {
			return ref{}, fmt.Errorf("find the window of control %q: %w", c.Name, err)
		}
		var parent ref
		if err := dbus.Store([]any{v.Value()}, &parent); err != nil {
			return ref{}, fmt.Errorf("find the window of control %q: parent %v: %w", c.Name, v, err)
		}
		if parent.Dest != node.Dest || parent.Path == rootPath || parent.Path == "/org/a11y/atspi/null" {
			c.windows.remember(gen, chain, node)
			return node, nil
		}
		if win, known, _ := c.windows.lookup(parent); known {
			c.windows.remember(gen, chain, win)
			return win, nil
		}
		node = parent
	}
	return ref{}, fmt.Errorf("find the window of control %q: no window within %d levels", c.Name, maxWindowDepth)
}
