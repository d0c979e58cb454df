package stage

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kasmrt/kasmrt/drivers/atspi"
	"github.com/kasmrt/kasmrt/scenarios"
)

// Accessibility is the run's view of the application over AT-SPI: the bus
// the stage started (if any), the connection and the application node.
type Accessibility struct {
	sessionBus SessionBus // started by the stage when there was none
	address    string
	bus        AccessibilityBus
	// connecting delivers the connection to the accessibility bus that
	// the stage opens while the application starts (connect).
	connecting chan connection
	conn       connection
	// App is the application's node, once Found.
	App   AccessibleApp
	Found bool
	// off says why the run does not look for controls at all, when it
	// does not.
	off string
	// Missing says why click_element is not offered, once that is known.
	Missing string
}

// connectGrace is how long after its window maps an application may take
// to open its first connection to the accessibility bus. Toolkits connect
// while they initialise (GTK 4 when it realises its first widget), so one
// that has not connected by then has no accessibility bridge, and the run
// does not wait the whole startup timeout for it. An application on
// neither the accessibility nor the session bus (xterm, Athena programs)
// gets only noBusGrace, so goal runs against them lose no time.
const (
	connectGrace = 2 * time.Second
	noBusGrace   = 300 * time.Millisecond
)

// appAccessibilityEnv switches on the accessibility bridges that stay off
// outside a full desktop: Qt 5 and 6 publish over AT-SPI only with
// QT_LINUX_ACCESSIBILITY_ALWAYS_ON, and Chromium-based programs (Chromium,
// Electron) build their accessibility tree only with ACCESSIBILITY_ENABLED.
// GTK 3 and GTK 4 need nothing. The scenario's app.env can override either.
var appAccessibilityEnv = []string{"QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1", "ACCESSIBILITY_ENABLED=1"}

// accessibilityOff says why the run does not look for named controls, or
// "" when it does: the operator allows it, and click_element could be
// used (a goal run, a recording, a script with a click_element step, or a
// secret bound to accessibles). relevant is false when click_element could not be used
// anyway, so the reason is not worth telling.
func (st *Stage) accessibilityOff() (reason string, relevant bool) {
	op, sc := st.cfg.Files.Operator, st.cfg.Files.Scenario
	if sc.App == nil {
		return "the browser is reached over the DevTools Protocol (the cdp_* tools)", false
	}
	relevant = sc.Goal != "" || sc.Recording || sc.BindsAccessibles() || sc.NamesControls() || sc.TypesSecrets() ||
		slices.ContainsFunc(sc.Steps, func(st scenarios.Step) bool {
			return st.Tool == "click_element" || st.Expect.NeedsAccessibility()
		})
	switch {
	case op.Desktop.Accessibility != nil && !*op.Desktop.Accessibility:
		return "accessibility is off (session.accessibility: false)", relevant
	case slices.Contains(op.Tools.Disabled, "click_element"):
		return "click_element is disabled (tools.disabled)", relevant
	case !relevant:
		return "the script has no click_element step", false
	}
	return "", true
}

// prepareAccessibility makes sure a session bus exists for the app to
// publish its controls on, and returns the environment the app needs.
func (st *Stage) prepareAccessibility(ctx context.Context, display string) []string {
	if off, relevant := st.accessibilityOff(); off != "" {
		if relevant {
			st.A11y = &Accessibility{off: off}
		}
		return nil
	}
	a := &Accessibility{address: st.sessionBusAddress()}
	st.A11y = a
	env := append([]string{"GSETTINGS_BACKEND=memory"}, appAccessibilityEnv...)
	if a.address == "" {
		sb, err := st.cfg.Machine.StartSessionBus(ctx, display)
		if err != nil {
			a.off = fmt.Sprintf("the accessibility bus is not running: %v", err)
			return nil
		}
		a.sessionBus, a.address = sb, sb.Address()
		env = append(env, sb.Env()...)
	}
	st.connect(ctx, a)
	return env
}

// connection is the outcome of connecting to the accessibility bus.
type connection struct {
	bus AccessibilityBus
	err error
}

// connect opens the connection to the accessibility bus in the
// background, bounded by app.startup_timeout_s. Asking the session bus
// for the accessibility bus's address starts the AT-SPI bus launcher, the
// accessibility bus and its registry; started while the application
// starts, they are up by the time the application registers, instead of
// being started by the application's own first request or by the
// runtime's after the window painted.
func (st *Stage) connect(ctx context.Context, a *Accessibility) {
	a.connecting = make(chan connection, 1)
	go func() {
		ctx, cancel := context.WithTimeout(ctx, st.startupTimeout())
		defer cancel()
		bus, err := st.cfg.Machine.ConnectAccessibility(ctx, a.address)
		a.connecting <- connection{bus, err}
	}()
}

// connection waits for the connection connect opened. It is called from
// one goroutine at a time: discovery's, then the strike's.
func (a *Accessibility) connection() connection {
	if a.connecting != nil {
		a.conn = <-a.connecting
		a.connecting = nil
	}
	return a.conn
}

// discoverControls asks the accessibility registry for the application's
// named controls once its window appeared, in the background, and returns
// the function that waits for the answer and offers it: when the
// application publishes controls, click_element joins the tool list; when
// not, the offer says why. The wait is bounded by app.startup_timeout_s
// counted from the window's mapping, and by connectGrace for an
// application that never connects to the bus. The caller waits for the
// window to paint meanwhile: a toolkit registers with the accessibility
// registry as it draws its first frames, and the two waits overlap.
func (st *Stage) discoverControls(ctx context.Context) (offer func()) {
	a := st.A11y
	if a == nil {
		return func() {}
	}
	if a.off != "" {
		return func() { st.noClickElement(a.off) }
	}
	type outcome struct {
		found Discovery
		took  time.Duration
		err   error
	}
	done := make(chan outcome, 1)
	pid, desk, server := st.App.PID(), st.Desk, st.Server
	go func() {
		c := a.connection()
		if c.err != nil {
			done <- outcome{err: fmt.Errorf("the accessibility bus is not running: %v", c.err)}
			return
		}
		a.bus = c.bus
		started := time.Now()
		ctx, cancel := context.WithTimeout(ctx, st.startupTimeout())
		defer cancel()
		found, err := c.bus.Discover(ctx, pid, atspi.DiscoverOptions{ConnectGrace: connectGrace, NoBusGrace: noBusGrace})
		if err == nil {
			a.App, a.Found = found.App, true
			if extentsInWindow(server) || toolkitPlacesInWindow(found.Toolkit) {
				a.App = placedApp{AccessibleApp: found.App, desk: desk, pid: pid}
			}
		}
		done <- outcome{found: found, took: time.Since(started), err: err}
	}()
	return func() {
		o := <-done
		if o.err != nil {
			st.noClickElement(o.err.Error())
			return
		}
		found := o.found
		if found.NoCache != nil {
			st.rep.Logf("read the controls of %s without a cache, walking its accessible tree at every read: %v", found.Name, found.NoCache)
		}
		who := found.Name
		if found.Toolkit != "" {
			who += " (" + found.Toolkit + ")"
		}
		st.rep.Offer(Offer{
			Message: fmt.Sprintf("%s published %d named controls in %s: %s",
				who, len(found.Controls), o.took.Round(time.Millisecond),
				Truncate(strings.Join(atspi.Names(found.Controls), ", "), 300)),
			Controls: true, ControlCount: len(found.Controls),
		})
	}
}

// noClickElement offers the tool list with why click_element is not on
// it, so the headless output and the console can say so.
func (st *Stage) noClickElement(reason string) {
	st.A11y.Missing = reason
	st.rep.Offer(Offer{Message: "click_element is not offered: " + reason, NoControls: reason})
}

// close releases the connection and the bus the stage started, and tells
// rep what would not close.
func (a *Accessibility) close(rep Reporter) {
	if a == nil {
		return
	}
	if a.bus == nil {
		// A run that ended before discovery still has the connection
		// opened while the application started.
		a.bus = a.connection().bus
	}
	if a.bus != nil {
		if err := a.bus.Close(); err != nil {
			rep.Logf("close the accessibility connection: %v", err)
		}
	}
	if a.sessionBus != nil {
		if err := a.sessionBus.Close(); err != nil {
			rep.Logf("stop the session bus started for the accessibility bus: %v", err)
		}
	}
}
