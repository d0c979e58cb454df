package atspi

import (
	"context"
	"errors"
	"fmt"
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
// parent property changes to everyone, but bounds and window events only
// once some client has registered for them; Qt sends nothing it was not
// asked for.
var registeredEvents = []string{"object:children-changed", "object:state-changed", "object:property-change",
	"object:bounds-changed", "window:"}

// registrationLag is how long after registering a toolkit may still not
// send the events: Qt learns of a registration from a signal and then asks
// the registry for the list. Until it has passed, every read walks.
const registrationLag = 500 * time.Millisecond

// signalBuffer is room for the events that arrive between two reads of the
// cache. godbus delivers a signal that finds the channel full from a
// goroutine of its own, out of order, so the room is generous.
const signalBuffer = 4096

// controlCache keeps an application's named controls between walks. The
// application's events tell it what changed: a focus, check or sensitivity
// change of a listed control, or its new name, is applied to the list; any
// other change that can add, remove, move or rename a control (children
// changed, showing or visible changed, a label renamed, bounds or a window
// changed) discards the list, and the next read walks the tree again.
// Subtrees whose toolkit announces no changes (accessibles that manage
// their descendants) are walked again at every read.
type controlCache struct {
	app     App
	signals chan *dbus.Signal
	// barriers asks the follower to apply every event received so far
	// and close the channel it is given; stopped is closed when the bus
	// connection closes and the follower with it.
	barriers chan chan struct{}
	stopped  chan struct{}

	mu sync.Mutex
	// gen counts the changes seen; a walk's result is kept only when no
	// change arrived while it ran.
	gen   uint64
	valid bool
	// touched are accessibles that events were about while there was no
	// list: a walk's result is kept only if it lists none of them.
	touched  map[dbus.ObjectPath]bool
	controls []Control // outside the managed subtrees
	index    map[dbus.ObjectPath]int
	managed  []managedNode
	// walks counts the full walks, for tests.
	walks int
	// trustFrom is when the toolkit has surely started sending the
	// events registered for.
	trustFrom time.Time
}

// Cached returns a copy of a whose Controls answer from a cache kept
// current by the application's accessibility events: after the first walk,
// a read costs one round trip to the application (to be sure its earlier
// events have arrived) plus walks of the few subtrees that announce
// nothing. The cache lives as long as the bus connection. ControlsWithin
// always walks.
func (a App) Cached(ctx context.Context) (App, error) {
	c := &controlCache{app: a, signals: make(chan *dbus.Signal, signalBuffer),
		barriers: make(chan chan struct{}), stopped: make(chan struct{})}
	conn := a.bus.conn
	for _, iface := range []string{ifaceEventObject, ifaceEventWindow} {
		if err := conn.AddMatchSignalContext(ctx, dbus.WithMatchSender(a.node.Dest), dbus.WithMatchInterface(iface)); err != nil {
			return a, fmt.Errorf("follow the accessibility events of %s: %w", a.Name, err)
		}
	}
	for _, ev := range registeredEvents {
		// Without the registration only these events are missing, and a
		// cache that misses them keeps stale extents; so a registry that
		// refuses is an error.
		call := conn.Object(registryName, registryPath).CallWithContext(ctx, ifaceRegistry+".RegisterEvent", 0, ev, []string{}, a.node.Dest)
		if call.Err != nil {
			return a, fmt.Errorf("register for %s events: %w", ev, call.Err)
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
		c.invalidate()
		return
	}
	if iface != ifaceEventObject {
		return
	}
	detail, _ := bodyString(sig, 0)
	switch member {
	case "ChildrenChanged":
		c.invalidate()
	case "BoundsChanged":
		// Animations move and resize other accessibles many times a
		// second; a listed control that moves says so itself.
		c.invalidateListed(sig.Path)
	case "StateChanged":
		on := bodyInt(sig, 1) != 0
		switch detail {
		case "showing", "visible":
			c.invalidate()
		case "defunct":
			// Accessibles the toolkit made for a walk (table cells) die
			// by the dozen; a removed control's parent announces its
			// children changed.
			c.invalidateListed(sig.Path)
		case "focused", "checked", "sensitive", "enabled":
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
	case "PropertyChange":
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
			// for by a walk); a control moved elsewhere comes with
			// children-changed events.
			c.invalidateListed(sig.Path)
		}
	}
}

// invalidate discards the list.
func (c *controlCache) invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.valid = false
	c.gen++
}

// invalidateListed discards the list when path is a listed control, or
// when there is no list to check against.
func (c *controlCache) invalidateListed(path dbus.ObjectPath) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.valid {
		c.touch(path)
		return
	}
	if _, listed := c.index[path]; listed {
		c.valid = false
		c.gen++
	}
}

// touch notes an event about path while there is no list. The caller
// holds mu.
func (c *controlCache) touch(path dbus.ObjectPath) {
	if c.touched == nil {
		c.touched = map[dbus.ObjectPath]bool{}
	}
	c.touched[path] = true
}

// patch changes the listed control at path with f. An event about an
// accessible that is not listed changes nothing, unless elsewhere is set
// (it may be a label that names a control). Without a list, or when f
// declines, the list is discarded.
func (c *controlCache) patch(path dbus.ObjectPath, f func(*Control, walkRules) bool, elsewhere bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.valid {
		// A walk may be under way; its result may predate this change.
		if elsewhere {
			c.gen++
		} else {
			c.touch(path)
		}
		return
	}
	i, listed := c.index[path]
	switch {
	case listed && f(&c.controls[i], rulesFor(c.app.Toolkit)):
	case !listed && !elsewhere:
	default:
		c.valid = false
		c.gen++
	}
}

// sync returns once every event the application sent before it answered
// one request has been applied.
func (c *controlCache) sync(ctx context.Context) error {
	var count dbus.Variant
	err := c.app.bus.object(c.app.node).CallWithContext(ctx, ifaceProperties+".Get", 0, ifaceAccessible, "ChildCount").Store(&count)
	if err != nil {
		return fmt.Errorf("ask %s: %w", c.app.Name, err)
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
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// read returns the application's controls, from the cache when no change
// discarded it.
func (c *controlCache) read(ctx context.Context) ([]Control, error) {
	if err := c.sync(ctx); err != nil {
		return nil, fmt.Errorf("list controls of %s: %w", c.app.Name, err)
	}
	c.mu.Lock()
	valid, gen := c.valid, c.gen
	if !valid {
		// The walk below sees every change before this point.
		c.touched = nil
	}
	controls := append([]Control(nil), c.controls...)
	managed := c.managed
	c.mu.Unlock()
	if !valid {
		var err error
		controls, managed, err = c.walk(ctx, gen)
		if err != nil {
			return nil, err
		}
	}
	for _, m := range managed {
		more, err := c.walkManaged(ctx, m)
		if err != nil {
			return nil, err
		}
		controls = append(controls, more...)
	}
	return controls, nil
}

// walk lists the controls outside the managed subtrees and keeps them when
// no change arrived since gen.
func (c *controlCache) walk(ctx context.Context, gen uint64) ([]Control, []managedNode, error) {
	a := c.app
	rules := rulesFor(a.Toolkit)
	trace := &walkTrace{under: map[ref]int{}}
	candidates, _, err := a.walkFrom(ctx, Limits{}.withDefaults(), 0, rules.isCandidate, a.node, 0, trace)
	if err != nil {
		return nil, nil, fmt.Errorf("walk accessible tree of %s: %w", a.Name, err)
	}
	outside := candidates[:0:0]
	for _, n := range candidates {
		if _, in := trace.under[n.ref]; !in {
			outside = append(outside, n)
		}
	}
	controls, err := a.bus.describe(ctx, outside, rules)
	if err != nil {
		return nil, nil, fmt.Errorf("describe controls of %s: %w", a.Name, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.walks++
	index := make(map[dbus.ObjectPath]int, len(controls))
	stale := c.gen != gen || time.Now().Before(c.trustFrom)
	for i, ctl := range controls {
		index[ctl.node.Path] = i
		stale = stale || c.touched[ctl.node.Path]
	}
	if !stale {
		c.valid, c.controls, c.managed, c.index = true, controls, trace.managed, index
	}
	return append([]Control(nil), controls...), trace.managed, nil
}

// walkManaged lists the controls below one managed accessible.
func (c *controlCache) walkManaged(ctx context.Context, m managedNode) ([]Control, error) {
	a := c.app
	rules := rulesFor(a.Toolkit)
	candidates, _, err := a.walkFrom(ctx, Limits{}.withDefaults(), 0, rules.isCandidate, m.ref, m.depth, nil)
	if err != nil {
		return nil, fmt.Errorf("walk accessible tree of %s: %w", a.Name, err)
	}
	// The managed accessible itself was judged by the full walk.
	if len(candidates) > 0 && candidates[0].ref == m.ref {
		candidates = candidates[1:]
	}
	controls, err := a.bus.describe(ctx, candidates, rules)
	if err != nil {
		return nil, fmt.Errorf("describe controls of %s: %w", a.Name, err)
	}
	return controls, nil
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
