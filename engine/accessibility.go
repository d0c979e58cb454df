package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kasmrt/kasmrt/drivers/atspi"
	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/scenarios"
)

// accessibility is the run's view of the application over AT-SPI: the bus
// it started (if any), the connection and the application node.
type accessibility struct {
	sessionBus *atspi.SessionBus // started by the run when there was none
	address    string
	bus        *atspi.Bus
	app        atspi.App
	found      bool
	// off says why the run does not look for controls at all, when it
	// does not.
	off string
	// missing says why click_element is not offered, once that is known.
	missing string
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

// click_element looks again for a control it did not find for
// findAgainFor, since a control can appear a moment after the previous
// action; findBound bounds the whole search, as one walk of a busy
// application's tree can take seconds on a loaded machine.
const (
	findAgainFor = 2 * time.Second
	findBound    = 5 * time.Second
)

// appAccessibilityEnv switches on the accessibility bridges that stay off
// outside a full desktop: Qt 5 and 6 publish over AT-SPI only with
// QT_LINUX_ACCESSIBILITY_ALWAYS_ON, and Chromium-based programs (Chromium,
// Electron) build their accessibility tree only with ACCESSIBILITY_ENABLED.
// GTK 3 and GTK 4 need nothing. The scenario's app.env can override either.
var appAccessibilityEnv = []string{"QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1", "ACCESSIBILITY_ENABLED=1"}

// accessibilityOff says why the run does not look for named controls, or
// "" when it does: the operator allows it, and click_element could be
// used (a goal run, a script with a click_element step, or a secret bound
// to accessibles). relevant is false when click_element could not be used
// anyway, so the reason is not worth telling.
func (s *runState) accessibilityOff() (reason string, relevant bool) {
	op, sc := s.files.Operator, s.files.Scenario
	if sc.App == nil {
		return "the browser is reached over the DevTools Protocol (the cdp_* tools)", false
	}
	relevant = sc.Goal != "" || sc.BindsAccessibles() || sc.NamesControls() ||
		slices.ContainsFunc(sc.Steps, func(st scenarios.Step) bool {
			return st.Tool == "click_element" || st.Expect.NeedsAccessibility()
		})
	switch {
	case op.Session.Accessibility != nil && !*op.Session.Accessibility:
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
func (s *runState) prepareAccessibility(ctx context.Context, display string) []string {
	if off, relevant := s.accessibilityOff(); off != "" {
		if relevant {
			s.a11y = &accessibility{off: off}
		}
		return nil
	}
	a := &accessibility{address: s.sessionBusAddress()}
	s.a11y = a
	env := append([]string{"GSETTINGS_BACKEND=memory"}, appAccessibilityEnv...)
	if a.address == "" {
		sb, err := atspi.StartSessionBus(ctx, display)
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
// click_element joins the tool list; when not, the tools event says why.
// The wait is bounded by app.startup_timeout_s counted from the window's
// mapping, and by connectGrace for an application that never connects to
// the bus.
func (s *runState) discoverControls(ctx context.Context) {
	a := s.a11y
	if a == nil {
		return
	}
	if a.off != "" {
		s.noClickElement(a.off)
		return
	}
	connectCtx, cancel := context.WithTimeout(ctx, s.startupTimeout())
	bus, err := atspi.ConnectSession(connectCtx, a.address)
	cancel()
	if err != nil {
		s.noClickElement(fmt.Sprintf("the accessibility bus is not running: %v", err))
		return
	}
	a.bus = bus
	started := time.Now()
	ctx, cancel = context.WithTimeout(ctx, s.startupTimeout())
	defer cancel()
	found, err := bus.Discover(ctx, s.app.PID(), atspi.DiscoverOptions{ConnectGrace: connectGrace, NoBusGrace: noBusGrace})
	if err != nil {
		s.noClickElement(err.Error())
		return
	}
	a.app, a.found = found.App, true
	offers := OffersFromFiles(s.files)
	offers.ATSPIControls = true
	offers.CDPTab = s.offers.CDPTab
	s.setTools(offers)
	who := found.App.Name
	if found.App.Toolkit != "" {
		who += " (" + found.App.Toolkit + ")"
	}
	s.publish(events.Event{Message: fmt.Sprintf("%s published %d named controls in %s: %s",
		who, len(found.Controls), time.Since(started).Round(time.Millisecond),
		truncate(strings.Join(atspi.Names(found.Controls), ", "), 300)),
		Data: events.ToolList{Tools: s.names, ATSPIControls: len(found.Controls)}})
}

// noClickElement publishes the tool list with why click_element is not on
// it, so the headless output and the console can say so.
func (s *runState) noClickElement(reason string) {
	s.a11y.missing = reason
	s.publish(events.Event{Message: "click_element is not offered: " + reason,
		Data: events.ToolList{Tools: s.names, NoClickElement: reason}})
}

// whyNotOffered is " (click_element is not offered: why)" for a
// click_element call the run cannot take, and "" otherwise.
func (s *runState) whyNotOffered(tool string) string {
	if tool != "click_element" || s.a11y == nil || s.a11y.missing == "" {
		return ""
	}
	return " (click_element is not offered: " + s.a11y.missing + ")"
}

// clickElement clicks a named control through its accessibility action,
// falling back to a pointer click at its centre.
func (s *runState) clickElement(ctx context.Context, c call) result {
	name, _ := c.Args["name"].(string)
	if s.a11y == nil || !s.a11y.found {
		why := "the application publishes no named controls"
		if s.a11y != nil && s.a11y.missing != "" {
			why = "click_element is not offered: " + s.a11y.missing
		}
		return failed(failResolution, "%s", why)
	}
	findCtx, cancel := context.WithTimeout(ctx, findBound)
	defer cancel()
	again := time.Now().Add(findAgainFor)
	// Controls can appear a moment after an action; look again briefly,
	// and report the last "not found" (with the names there are) rather
	// than the timeout.
	var ctl atspi.Control
	var err, notFound error
	for {
		ctl, err = s.a11y.app.Find(findCtx, name)
		var nf *atspi.NotFoundError
		if errors.As(err, &nf) {
			notFound = err
			if findCtx.Err() == nil && time.Now().Before(again) {
				time.Sleep(100 * time.Millisecond)
				continue
			}
		}
		if err != nil && notFound != nil && findCtx.Err() != nil {
			err = notFound
		}
		break
	}
	if err != nil {
		return failed(failResolution, "%s", explainDriverError(err))
	}
	centre := ctl.Centre()
	p := &events.Point{X: centre.X, Y: centre.Y}
	how := "its accessibility action"
	act := func() error {
		if err := ctl.Click(ctx); err != nil {
			how = "the pointer (the action was refused: " + err.Error() + ")"
			return s.desk.Click(ctx, centre.X, centre.Y)
		}
		return nil
	}
	r := s.input(ctx, act, "", p)
	if r.status == events.StatusOK {
		r.message = fmt.Sprintf("clicked the %s %q through %s", ctl.Role, ctl.Name, how)
	}
	return r
}

// close releases the connection and the bus the run started.
func (a *accessibility) close() {
	if a == nil {
		return
	}
	if a.bus != nil {
		a.bus.Close()
	}
	if a.sessionBus != nil {
		a.sessionBus.Close()
	}
}
