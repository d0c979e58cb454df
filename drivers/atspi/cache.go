package atspi

import (
	"context"
	"errors"
	"fmt"
	"image"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/godbus/dbus/v5"
)

// AT-SPI event interfaces and the registry object that events are
// registered with.
const (
	ifaceEventObject = "org.a11y.atspi.Event.Object"
	ifaceEventWindow = "org.a11y.atspi.Event.Window"
	ifaceRegistry    = "org.a11y.atspi.Registry"
	registryPath     = "/org/a11y/atspi/registry"
)

// registeredEvents are asked for from the registry. GTK's accessibility
// bridge sends children-changed, state-changed and the name, role and
// parent property changes to everyone, but bounds, window and table events
// only once some client has registered for them; Qt sends nothing it was
// not asked for. The table events are how a tree view, whose children
// changes the bridge drops, says that its rows changed.
var registeredEvents = []string{"object:children-changed", "object:state-changed", "object:property-change",
	"object:bounds-changed", "window:",
	"object:row-inserted", "object:row-deleted", "object:row-reordered",
	"object:column-inserted", "object:column-deleted", "object:column-reordered", "object:model-changed"}

// tableEvents are the members of the table events: each says that the
// rows or columns of the table that sent it changed.
var tableEvents = []string{"RowInserted", "RowDeleted", "RowReordered",
	"ColumnInserted", "ColumnDeleted", "ColumnReordered", "ModelChanged"}

// registrationLag is how long after registering a toolkit may still not
// send the events: Qt learns of a registration from a signal and then asks
// the registry for the list. Until it has passed, every read walks.
const registrationLag = 500 * time.Millisecond

// signalBuffer is room for the events that arrive between two reads of the
// cache. godbus delivers a signal that finds the channel full from a
// goroutine of its own, out of order, so the room is generous.
const signalBuffer = 4096

// controlCache keeps an application's named controls between walks, in
// lists the application's events keep current: one for the controls
// outside the accessibles that manage their descendants (tables, tree
// views), and one for each such subtree, so that a change of a table's
// rows walks only the table. A focus, check or sensitivity change of a
// listed control, or its new name, is applied to its list. A change that
// can add, remove or move controls of one table (its rows inserted, deleted
// or reordered, its child count changed, one of its cells gone, moved or
// hidden) discards that table's list; any other change that can add,
// remove, move or rename a control (children changed, showing or visible
// changed, a label renamed, bounds or a window changed, a scroll bar moved)
// discards every list. The next read walks what was discarded.
type controlCache struct {
	app     App
	signals chan *dbus.Signal
	// barriers asks the follower to apply every event received so far
	// and close the channel it is given; stopped is closed when the bus
	// connection closes and the follower with it.
	barriers chan chan struct{}
	stopped  chan struct{}

	mu sync.Mutex
	// gen counts the changes that discard every list; a walk's result is
	// kept only when no such change arrived while it ran.
	gen uint64
	// touched are accessibles that events were about while they were in
	// no valid list: a walk's result is kept only if it lists none of
	// them.
	touched map[dbus.ObjectPath]bool
	// outside lists the controls outside the managed subtrees; while it
	// is not valid, neither are the tables.
	outside controlList
	// tables are the subtrees of accessibles that manage their
	// descendants, found by the walk that made outside.
	tables []*tableList
	// scrollBars are the values of the scroll bars that walk saw, and
	// scrolled those that announced a value change since: the next read
	// asks them for their value, and a scroll bar that moved discards
	// every list. (Adding rows to a scrolled table announces a value
	// change that changes nothing.)
	scrollBars map[dbus.ObjectPath]float64
	scrolled   map[dbus.ObjectPath]bool
	// walks counts the full walks, tableWalks the walks of one table and
	// focusWalks the walks for the focus, for tests.
	walks, tableWalks, focusWalks int
	// trustFrom is when the toolkit has surely started sending the
	// events registered for.
	trustFrom time.Time
	// windows remembers the window of each accessible that a control's
	// climb to its window passed, until the tree changes shape.
	windows windowMemo
	// focusAt is the accessible the application last said took the
	// keyboard focus, while focusKnown; focusGen counts the focus events,
	// so a walk that overlapped one does not set focusAt.
	focusAt    ref
	focusKnown bool
	focusGen   uint64
}

// controlList is the controls one walk found, while no event discarded
// them.
type controlList struct {
	valid bool
	// gen counts the changes that discarded this list alone.
	gen      uint64
	controls []Control
	index    map[dbus.ObjectPath]int
}

// set makes controls the list's valid content.
func (l *controlList) set(controls []Control) {
	l.valid, l.controls = true, controls
	l.index = make(map[dbus.ObjectPath]int, len(controls))
	for i, ctl := range controls {
		l.index[ctl.node.Path] = i
	}
}

// discard marks the list out of date.
func (l *controlList) discard() {
	l.valid = false
	l.gen++
}

// listed says whether path is a control of the valid list.
func (l *controlList) listed(path dbus.ObjectPath) bool {
	_, in := l.index[path]
	return l.valid && in
}

// tableList is the controls below one accessible that manages its
// descendants.
type tableList struct {
	managedNode
	controlList
	// childCount is the table's child count when its controls were
	// listed; a read that finds another count walks the table again,
	// for toolkits that announce no row changes.
	childCount int
	// bounds are the table's bounds as its last bounds event gave them.
	bounds string
}

// Cached returns a copy of a whose Controls answer from a cache kept
// current by the application's accessibility events: after the first walk,
// a read costs one round trip to the application (to be sure its earlier
// events have arrived, and to ask each table for its child count) plus the
// walks of what a change discarded. The cache lives as long as the bus
// connection. ControlsWithin always walks.
func (a App) Cached(ctx context.Context) (App, error) {
	ctx, cancel := bounded(ctx, CallTimeout)
	defer cancel()
	c := &controlCache{app: a, signals: make(chan *dbus.Signal, signalBuffer),
		barriers: make(chan chan struct{}), stopped: make(chan struct{})}
	conn := a.bus.conn
	for _, iface := range []string{ifaceEventObject, ifaceEventWindow} {
		if err := conn.AddMatchSignalContext(ctx, dbus.WithMatchSender(a.node.Dest), dbus.WithMatchInterface(iface)); err != nil {
			return a, fmt.Errorf("follow the accessibility events of %s: %w", a.Name, err)
		}
	}
	registry := conn.Object(registryName, registryPath)
	calls := make([]*dbus.Call, len(registeredEvents))
	for i, ev := range registeredEvents {
		calls[i] = registry.GoWithContext(ctx, ifaceRegistry+".RegisterEvent", 0, nil, ev, []string{}, a.node.Dest)
	}
	for i, call := range calls {
		// Without the registration only these events are missing, and a
		// cache that misses them keeps stale extents; so a registry that
		// refuses is an error.
		if err := (<-call.Done).Err; err != nil {
			return a, fmt.Errorf("register for %s events: %w", registeredEvents[i], err)
		}
	}
	c.trustFrom = time.Now().Add(registrationLag)
	conn.Signal(c.signals)
	go c.follow()
	a.cache = c
	return a, nil
}

// follow applies events until the connection closes.
func (c *controlCache) follow() {
	defer close(c.stopped)
	for {
		select {
		case sig, ok := <-c.signals:
			if !ok {
				return
			}
			c.handle(sig)
		case done := <-c.barriers:
			// godbus puts a signal in the channel before it hands over a
			// reply that came after it, so what is buffered now is every
			// event sent before the reply the caller has.
			for drained := false; !drained; {
				select {
				case sig, ok := <-c.signals:
					if !ok {
						close(done)
						return
					}
					c.handle(sig)
				default:
					drained = true
				}
			}
			close(done)
		}
	}
}

func (c *controlCache) handle(sig *dbus.Signal) {
	if sig.Sender == c.app.node.Dest {
		c.apply(sig)
	}
}

// apply updates the cache for one event.
func (c *controlCache) apply(sig *dbus.Signal) {
	iface, member, _ := cutLast(sig.Name, ".")
	if iface == ifaceEventWindow {
		c.windows.forget()
		c.invalidate()
		return
	}
	if iface != ifaceEventObject {
		return
	}
	detail, _ := bodyString(sig, 0)
	if reshapes(member, detail) {
		c.windows.forget()
	}
	switch {
	case member == "ChildrenChanged":
		// A table's own children changes, if its toolkit sends them,
		// concern the table alone.
		if !c.discardTable(sig.Path) {
			c.invalidate()
		}
	case slices.Contains(tableEvents, member):
		if !c.discardTable(sig.Path) {
			// A table the walk entered (it does not manage its
			// descendants) announces its children changes too.
			c.invalidateListed(sig.Path)
		}
	case member == "BoundsChanged":
		// Animations move and resize other accessibles many times a
		// second; a listed control that moves says so itself, and so
		// does a table whose cells all move with it.
		if !c.discardMovedTable(sig) {
			c.invalidateListed(sig.Path)
		}
	case member == "StateChanged":
		on := bodyInt(sig, 1) != 0
		switch detail {
		case "showing", "visible":
			// A cell shown or hidden changes its table alone; any other
			// accessible may hold controls.
			if !c.discardCellTable(sig.Path) {
				c.invalidate()
			}
		case "defunct":
			// Accessibles the toolkit made for a walk (table cells) die
			// by the dozen; a removed control's parent announces its
			// children changed, or its table its rows.
			c.invalidateListed(sig.Path)
		case "focused", "checked", "sensitive", "enabled":
			if detail == "focused" {
				c.noteFocus(sig.Path, on)
			}
			c.patch(sig.Path, func(ctl *Control, rules walkRules) bool {
				switch detail {
				case "focused":
					ctl.Focused = on
				case "checked":
					ctl.Checked = on
				default:
					ctl.states = ctl.states.with(map[string]uint{"sensitive": stateSensitive, "enabled": stateEnabled}[detail], on)
					ctl.Enabled = rules.enabled(node{states: ctl.states})
				}
				return true
			}, false)
		}
	case member == "PropertyChange":
		switch detail {
		case "accessible-name":
			var name string
			if len(sig.Body) > 3 {
				if v, ok := sig.Body[3].(dbus.Variant); ok {
					name, _ = v.Value().(string)
				}
			}
			c.patch(sig.Path, func(ctl *Control, _ walkRules) bool {
				// A control named by the label inside it, or renamed to
				// something that does not name it, needs the walk.
				if ctl.namedByLabel || controlName(node{name: name}) == "" {
					return false
				}
				ctl.Name = strings.TrimSpace(name)
				return true
			}, true)
		case "accessible-role", "accessible-parent":
			// Sent as the toolkit creates an accessible (a cell asked
			// for by a walk, which reads it as it is once made); a
			// control moved elsewhere comes with children-changed
			// events.
			c.mu.Lock()
			l := c.holder(sig.Path)
			c.mu.Unlock()
			if l != nil {
				c.invalidateListed(sig.Path)
			}
		case "accessible-value":
			// Scrolling moves the controls in the scrolled area, which
			// announce no bounds change of their own.
			c.mu.Lock()
			// While a walk runs, the flag outlives it: the value it read
			// may be the one from before.
			if _, seen := c.scrollBars[sig.Path]; seen {
				if c.scrolled == nil {
					c.scrolled = map[dbus.ObjectPath]bool{}
				}
				c.scrolled[sig.Path] = true
			}
			c.mu.Unlock()
		}
	}
}

// reshapes says whether an object event can move an accessible to
// another parent, and so to another window: its parent's children
// changed, its parent property changed, a table's rows changed, or it was
// shown, hidden or destroyed.
func reshapes(member, detail string) bool {
	switch member {
	case "ChildrenChanged":
		return true
	case "StateChanged":
		return detail == "showing" || detail == "visible" || detail == "defunct"
	case "PropertyChange":
		return detail == "accessible-parent"
	}
	return slices.Contains(tableEvents, member)
}

// invalidate discards every list.
func (c *controlCache) invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.outside.valid = false
	c.gen++
}

// holder is the valid list that has a control at path, or nil. The caller
// holds mu.
func (c *controlCache) holder(path dbus.ObjectPath) *controlList {
	if !c.outside.valid {
		return nil
	}
	if c.outside.listed(path) {
		return &c.outside
	}
	for _, t := range c.tables {
		if t.listed(path) {
			return &t.controlList
		}
	}
	return nil
}

// discardHeldBefore discards the list of the table whose last walk listed
// a control at path, even if its list was discarded since, and says
// whether there is one. The caller holds mu.
func (c *controlCache) discardHeldBefore(path dbus.ObjectPath) bool {
	if !c.outside.valid {
		// The tables are those of an older walk.
		return false
	}
	for _, t := range c.tables {
		if _, in := t.index[path]; in {
			t.discard()
			return true
		}
	}
	return false
}

// discardTable discards the list of the table at path, and says whether
// path is a table's.
func (c *controlCache) discardTable(path dbus.ObjectPath) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range c.tables {
		if t.ref.Path == path {
			t.discard()
			return true
		}
	}
	return false
}

// discardMovedTable discards the list of the table that sig says moved or
// was resized, and says whether sig is about a table. GTK announces the
// same bounds again whenever it lays a table out (a row renamed), which
// moves nothing.
func (c *controlCache) discardMovedTable(sig *dbus.Signal) bool {
	bounds := ""
	if len(sig.Body) > 3 {
		bounds = fmt.Sprint(sig.Body[3])
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range c.tables {
		if t.ref.Path == sig.Path {
			if bounds == "" || bounds != t.bounds {
				t.bounds = bounds
				t.discard()
			}
			return true
		}
	}
	return false
}

// discardCellTable discards the list of the table that lists a control at
// path, and says whether one does.
func (c *controlCache) discardCellTable(path dbus.ObjectPath) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.outside.valid {
		return false
	}
	for _, t := range c.tables {
		if t.listed(path) {
			t.discard()
			return true
		}
	}
	return false
}

// invalidateListed discards the list that has a control at path; with no
// valid list to check against, it notes path as touched. A control outside
// the tables discards every list, since the change may be a move that
// changes what is around it.
func (c *controlCache) invalidateListed(path dbus.ObjectPath) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch l := c.holder(path); {
	case l == &c.outside:
		c.outside.valid = false
		c.gen++
	case l != nil:
		l.discard()
	default:
		c.touch(path)
	}
}

// touch notes an event about path, which no valid list has: a walk under
// way may list it with what it was before the event. The caller holds mu.
func (c *controlCache) touch(path dbus.ObjectPath) {
	if c.touched == nil {
		c.touched = map[dbus.ObjectPath]bool{}
	}
	c.touched[path] = true
}

// patch changes the listed control at path with f. An event about an
// accessible that is not listed changes nothing, unless elsewhere is set
// (it may be a label that names a control), when it discards every list.
// When f declines, the control's list is discarded.
func (c *controlCache) patch(path dbus.ObjectPath, f func(*Control, walkRules) bool, elsewhere bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	l := c.holder(path)
	switch {
	case l != nil && f(&l.controls[l.index[path]], rulesFor(c.app.Toolkit)):
	case l == &c.outside:
		c.outside.valid = false
		c.gen++
	case l != nil:
		l.discard()
	case c.discardHeldBefore(path):
		// A cell of a table that is to be walked again anyway.
	case elsewhere:
		c.outside.valid = false
		c.gen++
	default:
		// A walk may be under way; its result may predate this change.
		c.touch(path)
	}
}

// sync returns once every event the application sent before it answered
// one request has been applied. The same round trip asks each listed table
// for its child count, and discards the list of one whose count changed.
func (c *controlCache) sync(ctx context.Context) error {
	c.mu.Lock()
	tables := slices.Clone(c.tables)
	scrolled := slices.Collect(maps.Keys(c.scrolled))
	c.mu.Unlock()
	counts := make([]*dbus.Call, len(tables))
	for i, t := range tables {
		counts[i] = c.app.bus.object(t.ref).GoWithContext(ctx, ifaceProperties+".Get", 0, nil, ifaceAccessible, "ChildCount")
	}
	values := c.app.bus.scrollValues(ctx, c.app.node.Dest, scrolled)
	var count dbus.Variant
	err := c.app.bus.object(c.app.node).CallWithContext(ctx, ifaceProperties+".Get", 0, ifaceAccessible, "ChildCount").Store(&count)
	if err != nil {
		return fmt.Errorf("ask %s: %w", c.app.Name, err)
	}
	childCounts := make([]int, len(tables))
	for i, call := range counts {
		var v dbus.Variant
		// A table that cannot say (it is gone) has no count, so its
		// list is walked again.
		childCounts[i] = -1
		if (<-call.Done).Store(&v) == nil {
			if n, ok := v.Value().(int32); ok {
				childCounts[i] = int(n)
			}
		}
	}
	done := make(chan struct{})
	select {
	case c.barriers <- done:
	case <-c.stopped:
		return errors.New("the accessibility bus connection is closed")
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-done:
	case <-ctx.Done():
		return ctx.Err()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, t := range tables {
		if t.valid && childCounts[i] != t.childCount {
			t.discard()
		}
	}
	for path := range c.scrolled {
		// A scroll bar that announced a change after it was asked is
		// taken to have moved.
		if v, asked := values[path]; !asked || v != c.scrollBars[path] {
			c.outside.valid = false
			c.gen++
		}
	}
	c.scrolled = nil
	return nil
}

// scrollValues asks the scroll bars at paths of the application dest for
// their values; one that does not answer has the value NaN, which equals
// no value.
func (b *Bus) scrollValues(ctx context.Context, dest string, paths []dbus.ObjectPath) map[dbus.ObjectPath]float64 {
	calls := make([]*dbus.Call, len(paths))
	for i, p := range paths {
		calls[i] = b.object(ref{dest, p}).GoWithContext(ctx, ifaceProperties+".Get", 0, nil, ifaceValue, "CurrentValue")
	}
	values := make(map[dbus.ObjectPath]float64, len(paths))
	for i, call := range calls {
		values[paths[i]] = math.NaN()
		var v dbus.Variant
		if (<-call.Done).Store(&v) == nil {
			if f, ok := v.Value().(float64); ok {
				values[paths[i]] = f
			}
		}
	}
	return values
}

// read returns the application's controls, from the lists no change
// discarded, walking the others.
func (c *controlCache) read(ctx context.Context) ([]Control, error) {
	if err := c.sync(ctx); err != nil {
		return nil, fmt.Errorf("list controls of %s: %w", c.app.Name, err)
	}
	c.mu.Lock()
	valid, gen := c.outside.valid, c.gen
	stale := !valid || slices.ContainsFunc(c.tables, func(t *tableList) bool { return !t.valid })
	if stale {
		// The walks below see every change before this point.
		c.touched = nil
	}
	controls := slices.Clone(c.outside.controls)
	tables := c.tables
	c.mu.Unlock()
	if !valid {
		var err error
		controls, tables, err = c.walk(ctx, gen)
		if err != nil {
			return nil, err
		}
	}
	for _, t := range tables {
		c.mu.Lock()
		tableValid, tableGen := t.valid && c.outside.valid, t.gen
		listed := slices.Clone(t.controls)
		c.mu.Unlock()
		if !tableValid {
			var err error
			listed, err = c.walkTable(ctx, t, gen, tableGen)
			if err != nil {
				return nil, err
			}
		}
		controls = append(controls, listed...)
	}
	if !time.Now().Before(c.trustFrom) {
		// Until the toolkit surely sends its events, a change of the
		// tree's shape could go unseen.
		for i := range controls {
			controls[i].windows = &c.windows
		}
	}
	return controls, nil
}

// walk lists the controls outside the managed subtrees, and keeps them
// when no change arrived since gen. It returns the subtrees, to be walked.
func (c *controlCache) walk(ctx context.Context, gen uint64) ([]Control, []*tableList, error) {
	a := c.app
	rules := rulesFor(a.Toolkit)
	trace := &walkTrace{}
	candidates, _, err := a.walkFrom(ctx, Limits{}.withDefaults(), 0, rules.isCandidate, a.node, 0, trace)
	if err != nil {
		return nil, nil, fmt.Errorf("walk accessible tree of %s: %w", a.Name, err)
	}
	// The scroll bars' values are read before the extents, so that a
	// scroll after them shows as a changed value.
	scrollValues := a.bus.scrollValues(ctx, a.node.Dest, trace.scrollBars)
	controls, err := a.bus.describe(ctx, candidates, rules)
	if err != nil {
		return nil, nil, fmt.Errorf("describe controls of %s: %w", a.Name, err)
	}
	tables := make([]*tableList, len(trace.managed))
	for i, m := range trace.managed {
		tables[i] = &tableList{managedNode: m}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.walks++
	if c.gen == gen && !time.Now().Before(c.trustFrom) && !c.touchedAny(controls) {
		c.outside.set(controls)
		c.tables = tables
		c.scrollBars = scrollValues
	}
	return slices.Clone(controls), tables, nil
}

// touchedAny says whether an event touched one of controls. The caller
// holds mu.
func (c *controlCache) touchedAny(controls []Control) bool {
	return slices.ContainsFunc(controls, func(ctl Control) bool { return c.touched[ctl.node.Path] })
}

// walkTable lists the controls below one managed accessible that the
// table shows, and keeps them when no change arrived since gen and the
// table's own change count was tableGen.
func (c *controlCache) walkTable(ctx context.Context, t *tableList, gen, tableGen uint64) ([]Control, error) {
	a := c.app
	rules := rulesFor(a.Toolkit)
	// The count is asked for before the walk, so a row added during it
	// makes the next read's count differ.
	obj := a.bus.object(t.ref)
	countCall := obj.GoWithContext(ctx, ifaceProperties+".Get", 0, nil, ifaceAccessible, "ChildCount")
	extentsCall := obj.GoWithContext(ctx, ifaceComponent+".GetExtents", 0, nil, coordTypeScreen)
	childCount := -1
	var countV dbus.Variant
	if (<-countCall.Done).Store(&countV) == nil {
		if n, ok := countV.Value().(int32); ok {
			childCount = int(n)
		}
	}
	var area image.Rectangle
	var e screenBox
	if (<-extentsCall.Done).Store(&e) == nil {
		area = e.rect()
	}
	var candidates []node
	var err error
	if childCount > maxManagedChildren && !area.Empty() {
		var cells []ref
		cells, err = a.bus.shownCells(ctx, t.ref, area, childCount)
		if err == nil {
			candidates, _, err = a.walkRoots(ctx, Limits{}.withDefaults(), 0, rules.isCandidate, cells, t.depth+1, nil)
		}
	} else {
		candidates, _, err = a.walkFrom(ctx, Limits{}.withDefaults(), 0, rules.isCandidate, t.ref, t.depth, nil)
		// The managed accessible itself was judged by the full walk.
		if len(candidates) > 0 && candidates[0].ref == t.ref {
			candidates = candidates[1:]
		}
	}
	if err != nil {
		return nil, fmt.Errorf("walk accessible tree of %s: %w", a.Name, err)
	}
	for i := range candidates {
		if candidates[i].clip.Empty() {
			candidates[i].clip = area
		}
	}
	controls, err := a.bus.describe(ctx, candidates, rules)
	if err != nil {
		return nil, fmt.Errorf("describe controls of %s: %w", a.Name, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tableWalks++
	if c.gen == gen && t.gen == tableGen && c.outside.valid && slices.Contains(c.tables, t) &&
		childCount >= 0 && !c.touchedAny(controls) {
		t.set(controls)
		t.childCount = childCount
	}
	return slices.Clone(controls), nil
}

// cutLast splits s around the last sep.
func cutLast(s, sep string) (before, after string, found bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

func bodyString(sig *dbus.Signal, i int) (string, bool) {
	if len(sig.Body) <= i {
		return "", false
	}
	s, ok := sig.Body[i].(string)
	return s, ok
}

func bodyInt(sig *dbus.Signal, i int) int32 {
	if len(sig.Body) <= i {
		return 0
	}
	n, _ := sig.Body[i].(int32)
	return n
}
