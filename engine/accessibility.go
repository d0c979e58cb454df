package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kasmrt/kasmrt/drivers/atspi"
	"github.com/kasmrt/kasmrt/drivers/proc"
	"github.com/kasmrt/kasmrt/engine/events"
)

// accessibility is the run's view of the application over AT-SPI: the bus
// it started (if any), the connection and the application node.
type accessibility struct {
	sessionBus *atspi.SessionBus // started by the run when there was none
	address    string
	bus        *atspi.Bus
	app        atspi.App
	found      bool
}

// wantsAccessibility reports whether the run should look for named
// controls: the operator allows it, and click_element could be used (a
// goal run, or a script with a click_element step).
func (s *runState) wantsAccessibility() bool {
	op, sc := s.files.Operator, s.files.Scenario
	if sc.App == nil || (op.Session.Accessibility != nil && !*op.Session.Accessibility) {
		return false
	}
	for _, d := range op.Tools.Disabled {
		if d == "click_element" {
			return false
		}
	}
	if sc.Goal != "" || sc.BindsAccessibles() {
		return true
	}
	for _, st := range sc.Steps {
		if st.Tool == "click_element" {
			return true
		}
	}
	return false
}

// prepareAccessibility makes sure a session bus exists for the app to
// publish its controls on, and returns the environment the app needs.
func (s *runState) prepareAccessibility(ctx context.Context, display string) []string {
	if !s.wantsAccessibility() {
		return nil
	}
	a := &accessibility{address: s.r.getenv("DBUS_SESSION_BUS_ADDRESS")}
	env := []string{"GSETTINGS_BACKEND=memory"}
	if a.address == "" {
		sb, err := atspi.StartSessionBus(ctx, display)
		if err != nil {
			s.log("accessibility: %v; click_element is not offered", err)
			return nil
		}
		a.sessionBus, a.address = sb, sb.Address()
		env = append(env, sb.Env()...)
	}
	s.a11y = a
	return env
}

// discoverControls looks for the application's named controls after its
// window appeared. When it publishes some, click_element joins the tool
// list (seed 000: "The application published named controls over AT-SPI
// at launch").
func (s *runState) discoverControls(ctx context.Context) {
	a := s.a11y
	if a == nil {
		return
	}
	if !loadsAccessibilityBridge(s.app.PID()) {
		s.log("accessibility: the application loads no accessibility bridge; click_element is not offered")
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	bus, err := atspi.ConnectSession(ctx, a.address)
	if err != nil {
		s.log("accessibility: %v; click_element is not offered", err)
		return
	}
	a.bus = bus
	app, err := bus.AppByPID(ctx, s.app.PID())
	if err != nil {
		s.log("accessibility: the application did not register: %v", err)
		return
	}
	var controls []atspi.Control
	for ctx.Err() == nil {
		if controls, err = app.Controls(ctx); err == nil && len(controls) > 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(controls) == 0 {
		s.log("accessibility: the application published no named controls")
		return
	}
	a.app, a.found = app, true
	offers := OffersFromFiles(s.files)
	offers.ATSPIControls = true
	offers.CDPTab = s.offers.CDPTab
	s.setTools(offers)
	s.publish(events.Event{Message: fmt.Sprintf("the application published %d named controls: %s",
		len(controls), truncate(strings.Join(atspi.Names(controls), ", "), 300)),
		Data: events.ToolList{Tools: s.names, ATSPIControls: len(controls)}})
}

// clickElement clicks a named control through its accessibility action,
// falling back to a pointer click at its centre.
func (s *runState) clickElement(ctx context.Context, c call) result {
	name, _ := c.Args["name"].(string)
	if s.a11y == nil || !s.a11y.found {
		return failed(failResolution, "the application publishes no named controls")
	}
	findCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
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
			if findCtx.Err() == nil {
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

// loadsAccessibilityBridge reports whether the process or one of its
// descendants has an AT-SPI bridge mapped (GTK's atk-bridge, libatspi, Qt's
// D-Bus accessibility). Apps without one never register, so the run does
// not wait for them.
func loadsAccessibilityBridge(pid int) bool {
	for _, p := range proc.Descendants(pid) {
		maps, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p), "maps"))
		if err != nil {
			continue
		}
		m := string(maps)
		if strings.Contains(m, "atk-bridge") || strings.Contains(m, "libatspi") || strings.Contains(m, "libQt5DBus") || strings.Contains(m, "libQt6DBus") {
			return true
		}
	}
	return false
}
