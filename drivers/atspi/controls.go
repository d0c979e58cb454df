package atspi

import (
	"context"
	"fmt"
	"image"
	"slices"
	"strings"
	"unicode"

	"github.com/godbus/dbus/v5"
)

// Limits bound a walk of an application's accessible tree, so a huge or
// cyclic tree cannot stall a run.
type Limits struct {
	// MaxDepth is the deepest level visited below the application; zero
	// means 64.
	MaxDepth int
	// MaxNodes is the most accessibles visited; zero means 5000.
	MaxNodes int
}

func (l Limits) withDefaults() Limits {
	if l.MaxDepth <= 0 {
		l.MaxDepth = 64
	}
	if l.MaxNodes <= 0 {
		l.MaxNodes = 5000
	}
	return l
}

// Control is a visible, named accessible with at least one action.
type Control struct {
	// Name is the accessible name ("Yes", "Save as…").
	Name string
	// Role is the AT-SPI role name ("push button", "check box").
	Role string
	// Extents is the control's rectangle in screen coordinates; it may be
	// empty when the toolkit does not report it.
	Extents image.Rectangle
	// Actions are the control's action names in AT-SPI order, as the toolkit
	// reports them (GTK says "Click"; the names may be localized).
	Actions []string
	// Enabled is false when the toolkit marks the control insensitive.
	Enabled bool
	// Checked is set on a check box, radio or toggle button that is on.
	Checked bool
	// Focused is set on the control that has the keyboard focus.
	Focused bool

	bus  *Bus
	node ref
	// states and namedByLabel let a cache apply the toolkit's events.
	states       stateSet
	namedByLabel bool
	// windows, when the control came from a cache, remembers which
	// window it is in (WindowExtents).
	windows *windowMemo
}

// Centre is the middle of the control's extents, where a pointer click
// lands when acting through the action interface is not possible.
func (c Control) Centre() image.Point {
	return image.Pt((c.Extents.Min.X+c.Extents.Max.X)/2, (c.Extents.Min.Y+c.Extents.Max.Y)/2)
}

// node is what one visit of an accessible learns about it.
type node struct {
	ref        ref
	depth      int
	name       string
	role       string
	interfaces []string
	states     stateSet
	childCount int
	children   []ref
	// label is the text of a label inside the node, which names a control
	// whose toolkit gave it no usable name of its own.
	label string
	// clip is the area of the table the node is in, if it is: a control
	// outside it is scrolled out of the table's view.
	clip image.Rectangle
}

// maxManagedChildren is the most children a table or list that manages its
// descendants may have for the walk to enter it. GTK builds cell accessibles
// on demand, so a large table is expensive to enumerate; a small one (a few
// visible rows) holds controls worth offering.
const maxManagedChildren = 200

// maxLabelDistance is how far below a control the walk looks for the label
// that names it: GTK 4 puts a button's label one or two levels down.
const maxLabelDistance = 2

// containerRoles are roles whose action (GTK 4 and Qt give windows one) is
// not a control a person would click.
var containerRoles = []string{"application", "window", "frame", "dialog"}

// walkRules say how the walk reads an application's states.
type walkRules struct {
	// gtk4 is set for GTK 4's own AT-SPI implementation (4.8 measured),
	// which differs from GTK 3, Qt and Chromium in three ways: it marks
	// only windows as showing, so a visible accessible inside a showing
	// window counts as shown and a control must have extents; it marks
	// controls sensitive but never enabled; and every widget lists its
	// action groups' actions ("clipboard.copy"), which do not activate it.
	gtk4 bool
}

func rulesFor(toolkit string) walkRules {
	return walkRules{gtk4: strings.HasPrefix(toolkit, "GTK 4")}
}

func (w walkRules) shown(n node) bool {
	if n.states.has(stateDefunct) || !n.states.has(stateVisible) {
		return false
	}
	return n.states.has(stateShowing) || w.gtk4
}

func (w walkRules) enabled(n node) bool {
	return n.states.has(stateSensitive) && (n.states.has(stateEnabled) || w.gtk4)
}

// activates says whether an action of the toolkit can activate a control.
func (w walkRules) activates(action string) bool {
	return !w.gtk4 || !strings.Contains(action, ".")
}

// Controls walks the application's accessible tree within default Limits
// and returns its visible named controls that have an action, in tree order.
func (a App) Controls(ctx context.Context) ([]Control, error) {
	ctx, cancel := bounded(ctx, CallTimeout)
	defer cancel()
	if a.cache != nil {
		return a.cache.read(ctx)
	}
	return a.ControlsWithin(ctx, Limits{})
}

// ControlsWithin is Controls with explicit limits. A walk that reaches a
// limit stops descending and returns what it found. Subtrees of defunct
// accessibles and of accessibles that are not showing are not visited. Of
// an accessible that manages its own descendants (tables and lists) with
// more than maxManagedChildren children, only the rows in its view are:
// asking for all of them would make the toolkit build an accessible for
// every cell. A table's controls outside its extents (rows scrolled out of
// its view) are left out.
//
// A control whose toolkit names it with a type name ("GtkButton") or its
// label twice ("7 7", as GTK 4.8 does) is named by the label inside it.
//
// The walk visits one level of the tree at a time and sends all of a level's
// requests before reading any reply, so its cost is a few bus round trips
// per level rather than one per request.
func (a App) ControlsWithin(ctx context.Context, limits Limits) ([]Control, error) {
	ctx, cancel := bounded(ctx, CallTimeout)
	defer cancel()
	candidates, _, err := a.walk(ctx, limits.withDefaults(), 0, rulesFor(a.Toolkit).isCandidate)
	if err != nil {
		return nil, fmt.Errorf("walk accessible tree of %s: %w", a.Name, err)
	}
	controls, err := a.bus.describe(ctx, candidates, rulesFor(a.Toolkit))
	if err != nil {
		return nil, fmt.Errorf("describe controls of %s: %w", a.Name, err)
	}
	return controls, nil
}

// owner links an accessible to the nearest candidate control above it, so
// a label found below can name that control.
type owner struct {
	candidate int // index in the candidates, -1 for none
	distance  int // levels below the candidate
}

// walk visits the tree breadth first and returns the accessibles keep
// accepts (control candidates for Controls) and the number visited. batch
// bounds how many accessibles share one round of pipelined requests; zero
// means a whole level.
func (a App) walk(ctx context.Context, limits Limits, batch int, keep func(node) bool) ([]node, int, error) {
	return a.walkFrom(ctx, limits, batch, keep, a.node, 0, nil)
}

// walkTrace records the accessibles a cache's walk did not enter because
// they manage their own descendants (tables and tree views: GTK's
// accessibility bridge never announces changes of their children, but the
// tables announce inserted, deleted and reordered rows), so the cache lists
// and follows each such subtree on its own. It also records the scroll bars
// seen, whose value changes move what they scroll without a bounds event.
type walkTrace struct {
	managed    []managedNode
	scrollBars []dbus.ObjectPath
}

type managedNode struct {
	ref   ref
	depth int
}

// walkFrom is walk from root, at depth rootDepth. With a trace, it does not
// enter accessibles that manage their descendants, and records them and
// the scroll bars in the trace instead.
func (a App) walkFrom(ctx context.Context, limits Limits, batch int, keep func(node) bool, root ref, rootDepth int, trace *walkTrace) ([]node, int, error) {
	return a.walkRoots(ctx, limits, batch, keep, []ref{root}, rootDepth, trace)
}

// walkRoots is walkFrom from several roots at the same depth.
func (a App) walkRoots(ctx context.Context, limits Limits, batch int, keep func(node) bool, roots []ref, rootDepth int, trace *walkTrace) ([]node, int, error) {
	rules := rulesFor(a.Toolkit)
	level := slices.Clone(roots)
	visited := map[ref]bool{}
	owners := map[ref]owner{}
	// clips are the areas of the tables that nodes are in.
	clips := map[ref]image.Rectangle{}
	for _, r := range roots {
		visited[r], owners[r] = true, owner{candidate: -1}
	}
	var candidates []node
	for depth := rootDepth; len(level) > 0 && depth <= limits.MaxDepth; depth++ {
		var next []ref
		for start := 0; start < len(level); {
			end := len(level)
			if batch > 0 {
				end = min(start+batch, len(level))
			}
			nodes, err := a.bus.visit(ctx, level[start:end], depth, rules, trace != nil)
			if err != nil {
				return nil, 0, err
			}
			start = end
			for _, n := range nodes {
				n.clip = clips[n.ref]
				o := owners[n.ref]
				if o.candidate >= 0 && o.distance <= maxLabelDistance && n.role == "label" && n.name != "" &&
					candidates[o.candidate].label == "" {
					candidates[o.candidate].label = n.name
				}
				below := owner{candidate: o.candidate, distance: o.distance + 1}
				if keep(n) {
					candidates = append(candidates, n)
					below = owner{candidate: len(candidates) - 1, distance: 1}
				}
				if trace != nil && n.role == "scroll bar" {
					trace.scrollBars = append(trace.scrollBars, n.ref.Path)
				}
				if trace != nil && n.depth > rootDepth && n.states.has(stateManagesDescendants) && rules.shown(n) {
					trace.managed = append(trace.managed, managedNode{ref: n.ref, depth: n.depth})
					continue
				}
				children, clip := n.children, n.clip
				if n.states.has(stateManagesDescendants) && rules.shown(n) && (rules.descend(n) || n.childCount > maxManagedChildren) {
					// A table's cells scrolled out of its view are
					// still its children, with extents outside it;
					// of a large table, only the rows in view are
					// asked for.
					clip = a.bus.extentsOf(ctx, n.ref)
					if n.childCount > maxManagedChildren {
						children = nil
						if !clip.Empty() {
							cells, err := a.bus.shownCells(ctx, n.ref, clip, n.childCount)
							if err != nil {
								return nil, 0, err
							}
							children = cells
						}
					}
				} else if !rules.descend(n) {
					continue
				}
				for _, c := range children {
					if visited[c] || len(visited) >= limits.MaxNodes {
						continue
					}
					visited[c] = true
					owners[c] = below
					if !clip.Empty() {
						clips[c] = clip
					}
					next = append(next, c)
				}
			}
		}
		level = next
	}
	return candidates, len(visited), nil
}

// isCandidate says whether n may be a control: it has actions and is shown.
// Its name is settled once the labels below it are known.
func (w walkRules) isCandidate(n node) bool {
	return n.depth > 0 && slices.Contains(n.interfaces, ifaceAction) && w.shown(n) &&
		!slices.Contains(containerRoles, n.role)
}

// descend says whether the walk visits n's children. The application node
// (depth 0) carries no showing state, so it is always entered.
func (w walkRules) descend(n node) bool {
	if n.childCount == 0 || n.states.has(stateDefunct) {
		return false
	}
	if n.states.has(stateManagesDescendants) && n.childCount > maxManagedChildren {
		return false
	}
	return n.depth == 0 || w.shown(n)
}

// controlName is the name a control is offered by: its accessible name,
// unless that is empty, a toolkit type name or the label said twice, when
// the label inside it names it. It is empty when neither names it.
func controlName(n node) string {
	name := strings.TrimSpace(n.name)
	if n.label != "" && (name == "" || toolkitTypeName(name) || name == n.label+" "+n.label) {
		return n.label
	}
	if toolkitTypeName(name) {
		return ""
	}
	return name
}

// toolkitTypeName reports whether name is a widget class name such as
// "GtkButton" or "AdwGizmo", which GTK 4 reports when a widget has no name.
func toolkitTypeName(name string) bool {
	for _, prefix := range []string{"Gtk", "Adw"} {
		rest, ok := strings.CutPrefix(name, prefix)
		if ok && rest != "" && !strings.ContainsAny(rest, " ") && unicode.IsUpper([]rune(rest)[0]) {
			return true
		}
	}
	return false
}

// pending holds the in-flight requests of one node's visit.
type pending struct {
	name, role, interfaces, state, childCount *dbus.Call
}

// visit reads names, roles, interfaces, states and children of refs,
// pipelining every request before waiting for the replies. Accessibles that
// vanished while being read are dropped. With skipManaged, the children of
// accessibles that manage their descendants are not asked for: asking makes
// the toolkit build an accessible for every cell.
func (b *Bus) visit(ctx context.Context, refs []ref, depth int, rules walkRules, skipManaged bool) ([]node, error) {
	calls := make([]pending, len(refs))
	for i, r := range refs {
		obj := b.object(r)
		calls[i] = pending{
			name:       obj.GoWithContext(ctx, ifaceProperties+".Get", 0, nil, ifaceAccessible, "Name"),
			role:       obj.GoWithContext(ctx, ifaceAccessible+".GetRoleName", 0, nil),
			interfaces: obj.GoWithContext(ctx, ifaceAccessible+".GetInterfaces", 0, nil),
			state:      obj.GoWithContext(ctx, ifaceAccessible+".GetState", 0, nil),
			childCount: obj.GoWithContext(ctx, ifaceProperties+".Get", 0, nil, ifaceAccessible, "ChildCount"),
		}
	}
	nodes := make([]node, 0, len(refs))
	for i, p := range calls {
		n := node{ref: refs[i], depth: depth}
		var nameV, countV dbus.Variant
		var states []uint32
		errs := []error{
			(<-p.name.Done).Store(&nameV),
			(<-p.role.Done).Store(&n.role),
			(<-p.interfaces.Done).Store(&n.interfaces),
			(<-p.state.Done).Store(&states),
			(<-p.childCount.Done).Store(&countV),
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if firstErr(errs) != nil {
			continue
		}
		n.name, _ = nameV.Value().(string)
		n.states = newStateSet(states)
		if c, ok := countV.Value().(int32); ok {
			n.childCount = int(c)
		}
		nodes = append(nodes, n)
	}
	// Children are asked for in a second round, once the states say which
	// subtrees the walk will enter.
	kids := make([]*dbus.Call, len(nodes))
	for i, n := range nodes {
		if rules.descend(n) && !(skipManaged && n.states.has(stateManagesDescendants) && depth > 0) {
			kids[i] = b.object(n.ref).GoWithContext(ctx, ifaceAccessible+".GetChildren", 0, nil)
		}
	}
	for i := range nodes {
		if kids[i] != nil {
			// A failure leaves the node without children: it vanished.
			_ = (<-kids[i].Done).Store(&nodes[i].children)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return nodes, nil
}

// describe reads extents and action names of the candidate controls,
// pipelined like visit.
func (b *Bus) describe(ctx context.Context, nodes []node, rules walkRules) ([]Control, error) {
	type req struct{ extents, actions *dbus.Call }
	reqs := make([]req, len(nodes))
	for i, n := range nodes {
		if controlName(n) == "" {
			continue
		}
		obj := b.object(n.ref)
		reqs[i].actions = obj.GoWithContext(ctx, ifaceAction+".GetActions", 0, nil)
		if slices.Contains(n.interfaces, ifaceComponent) {
			reqs[i].extents = obj.GoWithContext(ctx, ifaceComponent+".GetExtents", 0, nil, coordTypeScreen)
		}
	}
	controls := make([]Control, 0, len(nodes))
	for i, n := range nodes {
		if reqs[i].actions == nil {
			continue
		}
		var actions []struct{ Name, Description, KeyBinding string }
		if err := (<-reqs[i].actions.Done).Store(&actions); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			continue
		}
		c := Control{
			Name:    controlName(n),
			Role:    n.role,
			Enabled: rules.enabled(n),
			Checked: n.states.has(stateChecked),
			Focused: n.states.has(stateFocused),
			bus:     b,
			node:    n.ref,
			states:  n.states,
			// controlName took the label's text.
			namedByLabel: n.label != "" && controlName(n) == n.label && strings.TrimSpace(n.name) != n.label,
		}
		activates := false
		for _, a := range actions {
			// Every action is kept, so that an index is the toolkit's own.
			c.Actions = append(c.Actions, a.Name)
			activates = activates || rules.activates(a.Name)
		}
		if !activates {
			continue
		}
		if reqs[i].extents != nil {
			var e screenBox
			if err := (<-reqs[i].extents.Done).Store(&e); err == nil {
				c.Extents = e.rect()
			}
		}
		if !n.clip.Empty() && !c.Extents.Empty() && !c.Extents.Overlaps(n.clip) {
			continue
		}
		if rules.gtk4 && c.Extents.Empty() {
			// Without a showing state, only extents tell a laid-out control
			// from one on a page that is not displayed.
			continue
		}
		controls = append(controls, c)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return controls, nil
}

func firstErr(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
