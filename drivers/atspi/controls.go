package atspi

import (
	"context"
	"fmt"
	"image"
	"slices"

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

	bus  *Bus
	node ref
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
}

// maxManagedChildren is the most children a table or list that manages its
// descendants may have for the walk to enter it. GTK builds cell accessibles
// on demand, so a large table is expensive to enumerate; a small one (a few
// visible rows) holds controls worth offering.
const maxManagedChildren = 200

// Controls walks the application's accessible tree within default Limits
// and returns its visible named controls that have an action, in tree order.
func (a App) Controls(ctx context.Context) ([]Control, error) {
	return a.ControlsWithin(ctx, Limits{})
}

// ControlsWithin is Controls with explicit limits. A walk that reaches a
// limit stops descending and returns what it found. Subtrees of defunct
// accessibles and of accessibles that are not showing are not visited, nor
// are those of accessibles that manage their own descendants (tables and
// lists) when they have more than maxManagedChildren children: asking for
// them would make the toolkit build an accessible for every cell.
//
// The walk visits one level of the tree at a time and sends all of a level's
// requests before reading any reply, so its cost is a few bus round trips
// per level rather than one per request.
func (a App) ControlsWithin(ctx context.Context, limits Limits) ([]Control, error) {
	candidates, _, err := a.walk(ctx, limits.withDefaults(), 0, node.isControl)
	if err != nil {
		return nil, fmt.Errorf("walk accessible tree of %s: %w", a.Name, err)
	}
	controls, err := a.bus.describe(ctx, candidates)
	if err != nil {
		return nil, fmt.Errorf("describe controls of %s: %w", a.Name, err)
	}
	return controls, nil
}

// walk visits the tree breadth first and returns the accessibles keep
// accepts (control candidates for Controls) and the number visited. batch
// bounds how many accessibles share one round of pipelined requests; zero
// means a whole level.
func (a App) walk(ctx context.Context, limits Limits, batch int, keep func(node) bool) ([]node, int, error) {
	level := []ref{a.node}
	visited := map[ref]bool{a.node: true}
	var candidates []node
	for depth := 0; len(level) > 0 && depth <= limits.MaxDepth; depth++ {
		var next []ref
		for start := 0; start < len(level); {
			end := len(level)
			if batch > 0 {
				end = min(start+batch, len(level))
			}
			nodes, err := a.bus.visit(ctx, level[start:end], depth)
			if err != nil {
				return nil, 0, err
			}
			start = end
			for _, n := range nodes {
				if keep(n) {
					candidates = append(candidates, n)
				}
				if !n.descend() {
					continue
				}
				for _, c := range n.children {
					if visited[c] || len(visited) >= limits.MaxNodes {
						continue
					}
					visited[c] = true
					next = append(next, c)
				}
			}
		}
		level = next
	}
	return candidates, len(visited), nil
}

func (n node) isControl() bool {
	return n.name != "" &&
		slices.Contains(n.interfaces, ifaceAction) &&
		n.states.has(stateShowing) && n.states.has(stateVisible) &&
		!n.states.has(stateDefunct)
}

// descend says whether the walk visits n's children. The application node
// (depth 0) carries no showing state, so it is always entered.
func (n node) descend() bool {
	if n.childCount == 0 || n.states.has(stateDefunct) {
		return false
	}
	if n.states.has(stateManagesDescendants) && n.childCount > maxManagedChildren {
		return false
	}
	return n.depth == 0 || n.states.has(stateShowing)
}

// pending holds the in-flight requests of one node's visit.
type pending struct {
	name, role, interfaces, state, childCount *dbus.Call
}

// visit reads names, roles, interfaces, states and children of refs,
// pipelining every request before waiting for the replies. Accessibles that
// vanished while being read are dropped.
func (b *Bus) visit(ctx context.Context, refs []ref, depth int) ([]node, error) {
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
		if n.descend() {
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
func (b *Bus) describe(ctx context.Context, nodes []node) ([]Control, error) {
	type req struct{ extents, actions *dbus.Call }
	reqs := make([]req, len(nodes))
	for i, n := range nodes {
		obj := b.object(n.ref)
		reqs[i].actions = obj.GoWithContext(ctx, ifaceAction+".GetActions", 0, nil)
		if slices.Contains(n.interfaces, ifaceComponent) {
			reqs[i].extents = obj.GoWithContext(ctx, ifaceComponent+".GetExtents", 0, nil, coordTypeScreen)
		}
	}
	controls := make([]Control, 0, len(nodes))
	for i, n := range nodes {
		var actions []struct{ Name, Description, KeyBinding string }
		if err := (<-reqs[i].actions.Done).Store(&actions); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			continue
		}
		c := Control{
			Name:    n.name,
			Role:    n.role,
			Enabled: n.states.has(stateEnabled) && n.states.has(stateSensitive),
			bus:     b,
			node:    n.ref,
		}
		for _, a := range actions {
			c.Actions = append(c.Actions, a.Name)
		}
		if len(c.Actions) == 0 {
			continue
		}
		if reqs[i].extents != nil {
			var e struct{ X, Y, W, H int32 }
			if err := (<-reqs[i].extents.Done).Store(&e); err == nil && e.W > 0 && e.H > 0 {
				c.Extents = image.Rect(int(e.X), int(e.Y), int(e.X+e.W), int(e.Y+e.H))
			}
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
