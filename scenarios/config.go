package scenarios

import (
	"fmt"
	"math"
	"net"
	"net/netip"
	"regexp"
	"strconv"
)

// The range KASM_RUNTIME_DEADLINE_S may take: at least a second, at most a
// day. Outside it a deadline is a typo (or 1e12, which overflows a
// duration), not a plan.
const (
	MinDeadlineS = 1
	MaxDeadlineS = 86400
)

// displayRE is an X display name: an optional host (a name, an IPv4
// address or a bracketed IPv6 address), a colon, the display number and an
// optional screen number.
var displayRE = regexp.MustCompile(`^([A-Za-z0-9][A-Za-z0-9.-]*|\[[0-9A-Fa-f:.]+\])?:[0-9]{1,5}(\.[0-9]{1,3})?$`)

// The desktops a run's session can be (session.desktop, run --desktop).
const (
	DesktopX11     = "x11"
	DesktopWayland = "wayland"
)

// BrowserNeedsX11 is the problem of a browser: section on the Wayland
// desktop: the runtime starts Chromium on an X display.
const BrowserNeedsX11 = "a browser: section needs the X11 desktop (the runtime starts Chromium on an X display); use session.desktop: x11"

// CheckDesktop reports whether name is a desktop a run can start
// (x11 or wayland), and whether it fits the scenario: a Wayland run has no
// browser. It says why not in the terms of run's --desktop flag.
func CheckDesktop(name string, s *Scenario) error {
	if !oneOf(name, DesktopX11, DesktopWayland) {
		return fmt.Errorf("want x11 or wayland, got %q", name)
	}
	if name == DesktopWayland && s != nil && s.Browser != nil {
		return fmt.Errorf("%s", BrowserNeedsX11)
	}
	return nil
}

// CheckDisplay reports whether name is an X display name such as ":1",
// ":99.0" or "host:0". It says why not without repeating the name, which
// may be anything a shell passed on.
func CheckDisplay(name string) error {
	if !displayRE.MatchString(name) {
		return fmt.Errorf("not an X display name; want [host]:number[.screen], e.g. :1")
	}
	return nil
}

// parseDeadline reads KASM_RUNTIME_DEADLINE_S: a finite number of seconds
// within [MinDeadlineS, MaxDeadlineS].
func parseDeadline(raw string) (float64, error) {
	d, err := strconv.ParseFloat(raw, 64)
	switch {
	case err != nil && !isRangeError(err):
		return 0, fmt.Errorf("want a number of seconds, got %q", raw)
	case math.IsNaN(d) || math.IsInf(d, 0) || err != nil:
		return 0, fmt.Errorf("want a finite number of seconds, got %q", raw)
	case d < MinDeadlineS || d > MaxDeadlineS:
		return 0, fmt.Errorf("want between %d and %d seconds, got %q", MinDeadlineS, MaxDeadlineS, raw)
	}
	return d, nil
}

func isRangeError(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// checkListen parses an inbox.listen address, host:port with a host that
// is empty (every interface), localhost or an IP address. It reports
// whether the address is reachable from other machines, which deserves a
// warning: the inbox then answers anyone with the token on the network.
func checkListen(addr string) (exposed bool, err error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return false, fmt.Errorf("not a listen address; want host:port, e.g. 127.0.0.1:8765")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return false, fmt.Errorf("port %q is not a number between 0 and 65535", port)
	}
	switch host {
	case "localhost":
		return false, nil
	case "":
		return true, nil
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return false, fmt.Errorf("host %q is not an IP address or localhost", host)
	}
	return !ip.IsLoopback(), nil
}
