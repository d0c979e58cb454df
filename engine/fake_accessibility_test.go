package engine

import (
	"context"
	"fmt"
	"image"
	"slices"

	"github.com/kasmrt/kasmrt/drivers/atspi"
	"github.com/kasmrt/kasmrt/engine/stage"
)

// The double's accessibility: a session bus that is never dialled, and an
// accessibility bus whose application shows the scripted controls. Every
// action on a control is recorded as input ("press OK"), so it changes the
// screen as a key or a click does.
var (
	_ stage.SessionBus       = fakeSessionBus{}
	_ stage.AccessibilityBus = fakeAccessibilityBus{}
	_ stage.AccessibleApp    = fakeAccessibleApp{}
)

func (f *fakeMachine) StartSessionBus(context.Context, string, ...string) (stage.SessionBus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.buses++
	return fakeSessionBus{address: fmt.Sprintf("unix:path=/nonexistent/kasmrt-fake-bus-%d", f.buses)}, nil
}

func (f *fakeMachine) ConnectAccessibility(_ context.Context, sessionAddress string) (stage.AccessibilityBus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dialled = append(f.dialled, sessionAddress)
	return fakeAccessibilityBus{f}, nil
}

// setControls replaces the application's controls (a dialog opened, a box
// was ticked).
func (f *fakeMachine) setControls(cs ...atspi.Control) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.controls = cs
}

func (f *fakeMachine) showing() []atspi.Control {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.controls)
}

type fakeSessionBus struct{ address string }

func (b fakeSessionBus) Address() string { return b.address }
func (b fakeSessionBus) Env() []string   { return []string{"DBUS_SESSION_BUS_ADDRESS=" + b.address} }
func (fakeSessionBus) Close() error      { return nil }

type fakeAccessibilityBus struct{ f *fakeMachine }

// Discover answers as the driver does for an application without a bridge
// (nil controls) or with no named controls (none), and otherwise finds it.
func (b fakeAccessibilityBus) Discover(_ context.Context, pid int, _ atspi.DiscoverOptions) (stage.Discovery, error) {
	b.f.mu.Lock()
	controls := b.f.controls
	if b.f.paintsOnDiscovery != nil {
		close(b.f.paintsOnDiscovery)
		b.f.paintsOnDiscovery = nil
	}
	b.f.mu.Unlock()
	switch {
	case pid != fakePID || controls == nil:
		return stage.Discovery{}, fmt.Errorf("%w within 0s", atspi.ErrNotConnected)
	case len(controls) == 0:
		return stage.Discovery{}, fmt.Errorf("%w within 0s: fake (pid %d, GTK 3.24.38)", atspi.ErrNoControls, pid)
	}
	return stage.Discovery{Name: "fake", Toolkit: "GTK 3.24.38", App: fakeAccessibleApp{b.f}, Controls: slices.Clone(controls),
		NoCache: b.f.noCache}, nil
}

func (fakeAccessibilityBus) Close() error { return nil }

type fakeAccessibleApp struct{ f *fakeMachine }

// Controls lists the controls shown. A walk whose context is over fails,
// as the driver's does: even a cached read asks the application over the
// bus first.
func (a fakeAccessibleApp) Controls(ctx context.Context) ([]atspi.Control, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("list controls of fake: ask fake: %w", err)
	}
	return a.f.showing(), nil
}

func (a fakeAccessibleApp) Find(_ context.Context, name string) (atspi.Control, error) {
	return atspi.FindControl(a.f.showing(), name)
}

func (a fakeAccessibleApp) Focused(context.Context) (atspi.Accessible, bool, error) {
	a.f.mu.Lock()
	defer a.f.mu.Unlock()
	if a.f.focused == nil {
		return atspi.Accessible{}, false, nil
	}
	return *a.f.focused, true, nil
}

// Activate records the press, or refuses it as an insensitive control's
// toolkit does, or holds it as a frozen application does.
func (a fakeAccessibleApp) Activate(_ context.Context, c atspi.Control) error {
	a.f.mu.Lock()
	refuse, stuck := a.f.refuse || !c.Enabled, a.f.stuck
	a.f.mu.Unlock()
	if refuse {
		return fmt.Errorf("act on control %q: the toolkit refused the action", c.Name)
	}
	if stuck {
		return fmt.Errorf("click control %q: %w within %s", c.Name, atspi.ErrActionStuck, atspi.ActionTimeout)
	}
	return a.f.record("press " + c.Name)
}

// Contains holds a point inside the control's extents, as the toolkit
// lays it out.
func (a fakeAccessibleApp) Contains(_ context.Context, c atspi.Control, p image.Point) (bool, error) {
	return p.In(c.Extents), nil
}

// WindowExtents places every control in the application's window.
func (a fakeAccessibleApp) WindowExtents(context.Context, atspi.Control) (image.Rectangle, error) {
	return fakeWindowBox(), nil
}
