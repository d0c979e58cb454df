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
	return env
}

// discoverControls asks the accessibility registry for the application's
// named controls after its window appeared. When it publishes some,
// click_element joins the tool list; when not, the offer says why. The
// wait is bounded by app.startup_timeout_s counted from the window's
// mapping, and by connectGrace for an application that never connects to
// the bus.
func (st *Stage) discoverControls(ctx context.Context) {
	a := st.A11y
	if a == nil {
		return
	}
	if a.off != "" {
		st.noClickElement(a.off)
		return
	}
	connectCtx, cancel := context.WithTimeout(ctx, st.startupTimeout())
	bus, err := st.cfg.Machine.ConnectAccessibility(connectCtx, a.address)
	cancel()
	if err != nil {
		st.noClickElement(fmt.Sprintf("the accessibility bus is not running: %v", err))
		return
	}
	a.bus = bus
	started := time.Now()
	ctx, cancel = context.WithTimeout(ctx, st.startupTimeout())
	defer cancel()
	found, err := bus.Discover(ctx, st.App.PID(), atspi.DiscoverOptions{ConnectGrace: connectGrace, NoBusGrace: noBusGrace})
	if err != nil {
		st.noClickElement(err.Error())
		return
	}
	a.App, a.Found = found.App, true
	if extentsInWindow(st.Server) || toolkitPlacesInWindow(found.Toolkit) {
		a.App = placedApp{AccessibleApp: found.App, desk: st.Desk, pid: st.App.PID()}
	}
	if found.NoCache != nil {
		st.rep.Logf("read the controls of %s without a cache, walking its accessible tree at every read: %v", found.Name, found.NoCache)
	}
	who := found.Name
	if found.Toolkit != "" {
		who += " (" + found.Toolkit + ")"
	}
	st.rep.Offer(Offer{
		Message: fmt.Sprintf("%s published %d named controls in %s: %s",
			who, len(found.Controls), time.Since(started).Round(time.Millisecond),
			Truncate(strings.Join(atspi.Names(found.Controls), ", "), 300)),
		Controls: true, ControlCount: len(found.Controls),
	})
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
