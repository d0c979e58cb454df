package main

import (
	"context"
	"fmt"
	"net"
	"strconv"

	"github.com/kasmrt/kasmrt/drivers/vnc"
	"github.com/kasmrt/kasmrt/engine"
	"github.com/kasmrt/kasmrt/internal/httpguard"
	"github.com/kasmrt/kasmrt/tui"
)

// takeoverAddr checks run --takeover's address and returns it with an
// empty host made loopback (":5900" is 127.0.0.1:5900, never every
// interface). A non-loopback address is refused by the rule every
// listener of kasmrt keeps (docs/security.md): an address other machines
// reach needs a credential of httpguard.MinTokenBits, and VNC
// authentication carries at most eight password characters.
func takeoverAddr(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("--takeover %q: want host:port, e.g. 127.0.0.1:5900 (port 0: any free port)", addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return "", fmt.Errorf("--takeover %q: the port must be a number from 0 to 65535", addr)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	addr = net.JoinHostPort(host, port)
	if ip := net.ParseIP(host); ip != nil && ip.To4() == nil && ip.IsLoopback() {
		return "", fmt.Errorf("--takeover %s: the VNC server listens on IPv4 only; use 127.0.0.1", addr)
	}
	if !httpguard.Loopback(addr) {
		return "", fmt.Errorf("--takeover %s is not a loopback address: VNC authentication carries at most %d password characters (about %.0f bits), short of the %d bits an address other machines reach needs; keep the VNC server on loopback and reach it through an SSH tunnel (ssh -L)",
			addr, vnc.MaxPasswordLen, vnc.PasswordBits(), httpguard.MinTokenBits)
	}
	return addr, nil
}

// consoleControls are the runner as the console acts on it, with the
// takeover in the console's own terms.
type consoleControls struct{ *engine.Runner }

func (c consoleControls) TakeOverDesktop(ctx context.Context) (tui.TakeoverAccess, error) {
	a, err := c.Runner.TakeOver(ctx, "console")
	return tui.TakeoverAccess{Addr: a.Addr, URL: a.URL, Password: a.Password}, err
}

func (c consoleControls) HandBackDesktop() error { return c.Runner.HandBack() }
