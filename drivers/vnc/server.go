// Package vnc starts a VNC server on an X display so an operator can take
// over a run's desktop (kasmrt run --takeover): x11vnc from Debian,
// listening on a loopback address only, for one client, with a one-time
// password kept in a private rfbauth file.
package vnc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kasmrt/kasmrt/drivers/proc"
)

// Options say where the server serves and how it is reached.
type Options struct {
	// Display is the X display to serve (":3").
	Display string
	// Addr is the loopback host:port to listen on; port 0 takes a free one.
	Addr string
	// Password is the one-time password a client must give; it is written
	// only to the rfbauth file in Dir, never on a command line.
	Password string
	// Dir is a private directory (0700) for the rfbauth file; it is the
	// server's HOME too, so it reads no one's x11vnc settings.
	Dir string
	// Env is added to the server's environment (XAUTHORITY for a borrowed
	// display); nothing else of the runtime's environment but PATH and the
	// locale reaches it.
	Env []string
}

// Server is a running x11vnc.
type Server struct {
	p    *proc.Process
	addr string
	out  *tail
}

// stopGrace is how long x11vnc is given to end on SIGTERM before it is
// killed.
const stopGrace = 2 * time.Second

// Start runs x11vnc for one client (-once: it exits when the client
// leaves) and returns once it listens. A non-loopback Addr is refused:
// VNC authentication uses at most eight password characters, too few to
// guard an address other machines reach.
func Start(ctx context.Context, o Options) (*Server, error) {
	host, port, err := net.SplitHostPort(o.Addr)
	if err != nil {
		return nil, fmt.Errorf("the VNC address %q: %w", o.Addr, err)
	}
	if !Loopback(host) {
		return nil, fmt.Errorf("the VNC address %s is not a loopback address", o.Addr)
	}
	if strings.Contains(host, ":") {
		return nil, fmt.Errorf("the VNC address %s is IPv6: use 127.0.0.1", o.Addr)
	}
	if host == "localhost" {
		host = "127.0.0.1"
	}
	if port == "0" || port == "" {
		if port, err = freePort(host); err != nil {
			return nil, err
		}
	}
	auth := filepath.Join(o.Dir, "rfbauth")
	if err := os.WriteFile(auth, passwordFile(o.Password), 0o600); err != nil {
		return nil, fmt.Errorf("write the VNC password file: %w", err)
	}
	ready := make(chan string, 1)
	out := &tail{ready: ready}
	argv := []string{"x11vnc", "-display", o.Display, "-rfbport", port, "-listen", host,
		// LibVNCServer opens an IPv6 listener of its own on every
		// interface (port 5900) unless told not to; -noipv6 does not.
		"-rfbportv6", "-1",
		"-rfbauth", auth, "-once", "-norc", "-nolookup", "-noxdamage", "-nossl", "-nocmds", "-noremote",
		"-noipv6", "-xkb",
		// No clipboard either way: the display's selections may hold
		// what the run typed, and nothing the viewer pastes is recorded.
		"-nosel"}
	p, err := proc.Start(ctx, proc.Spec{Argv: argv, EnvOnly: true,
		Env: proc.HelperEnv(append([]string{"HOME=" + o.Dir}, o.Env...)...), Dir: o.Dir, Output: out})
	if err != nil {
		return nil, fmt.Errorf("start x11vnc: %w", err)
	}
	s := &Server{p: p, out: out}
	select {
	case got := <-ready:
		s.addr = net.JoinHostPort(host, got)
		return s, nil
	case <-p.Done():
		return nil, fmt.Errorf("x11vnc ended before it listened (%s): %s", p.ExitStatus(), out.last())
	case <-ctx.Done():
		_ = p.Stop(stopGrace)
		return nil, fmt.Errorf("start x11vnc: %w", ctx.Err())
	}
}

// PID is the server's process id.
func (s *Server) PID() int { return s.p.PID() }

// Addr is the host:port the server listens on.
func (s *Server) Addr() string { return s.addr }

// Done is closed when the server has ended: its client left, or Stop.
func (s *Server) Done() <-chan struct{} { return s.p.Done() }

// Stop ends the server and waits for it.
func (s *Server) Stop() error {
	if err := s.p.Stop(stopGrace); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("stop x11vnc: %w", err)
	}
	return nil
}

// Loopback reports whether host only takes local connections.
func Loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// freePort asks the kernel for a free port on host. Another process could
// take it before x11vnc binds it; x11vnc then fails and says so.
func freePort(host string) (string, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return "", fmt.Errorf("find a free port for VNC on %s: %w", host, err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port), nil
}

// tail watches x11vnc's output for the line that says it listens
// (PORT=5901) and keeps the last lines for an error message.
type tail struct {
	mu    sync.Mutex
	lines []string
	ready chan string
	sent  bool
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, line := range bytes.Split(bytes.TrimRight(p, "\n"), []byte("\n")) {
		l := strings.TrimSpace(string(line))
		if port, ok := strings.CutPrefix(l, "PORT="); ok && !t.sent {
			t.sent = true
			t.ready <- port
		}
		t.lines = append(t.lines, l)
		if len(t.lines) > 5 {
			t.lines = t.lines[1:]
		}
	}
	return len(p), nil
}

func (t *tail) last() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, " | ")
}
