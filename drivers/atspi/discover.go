package atspi

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/godbus/dbus/v5"
)

// Why Discover found no controls. Each is wrapped with the details.
var (
	// ErrNotConnected: no process of the application's tree opened a
	// connection to the accessibility bus, so it has no accessibility
	// bridge (an X toolkit such as Athena, or Qt without its switch).
	ErrNotConnected = errors.New("the application did not connect to the accessibility bus")
	// ErrNotRegistered: the application is on the bus but the registry
	// lists no application of its process tree.
	ErrNotRegistered = errors.New("the application connected to the accessibility bus but did not register with the registry")
	// ErrNoControls: the application registered, but none of its showing
	// accessibles is a named control with an action.
	ErrNoControls = errors.New("the application registered but shows no named controls with an action")
	// ErrProcessGone: the application exited while being looked for.
	ErrProcessGone = errors.New("the application exited")
)

// DiscoverOptions bound Discover.
type DiscoverOptions struct {
	// ConnectGrace is how long Discover waits for the application's first
	// connection to the accessibility bus before it concludes that the
	// application has no bridge; zero waits as long as ctx allows. Toolkits
	// connect while they initialise, before their first window maps.
	ConnectGrace time.Duration
	// NoBusGrace replaces ConnectGrace while no process of the application
	// is connected to the session bus either: every accessibility bridge
	// asks the session bus for the accessibility bus's address as the
	// toolkit starts, so a program on neither bus (xterm, an Athena
	// program) has none. Zero means ConnectGrace.
	NoBusGrace time.Duration
	// Poll is the interval between two looks at the registry; zero means
	// 100 ms.
	Poll time.Duration
	// Limits bound each walk of the accessible tree.
	Limits Limits
}

// Discovery is an application found on the bus with its controls.
type Discovery struct {
	App      App
	Controls []Control
}

// Discover waits until an application whose process is pid or one of its
// descendants is registered with the accessibility registry and shows at
// least one named control with an action, and returns it with its
// controls. It asks the bus, not the process: the registry's applications
// are matched by the unix process id of their bus connection. It gives up
// when ctx ends, when the application exits, or after ConnectGrace when no
// process of the tree is connected to the bus; the error then wraps
// ErrNotConnected, ErrNotRegistered, ErrNoControls or ErrProcessGone.
func (b *Bus) Discover(ctx context.Context, pid int, opts DiscoverOptions) (Discovery, error) {
	poll := opts.Poll
	if poll <= 0 {
		poll = 100 * time.Millisecond
	}
	start := time.Now()
	connected := false
	var registered []App
	var lastErr error
	for {
		apps, err := b.Applications(ctx)
		if err != nil && ctx.Err() == nil {
			lastErr = err
		}
		registered = appsOf(apps, pid)
		for _, app := range registered {
			controls, err := app.ControlsWithin(ctx, opts.Limits)
			if err != nil {
				if ctx.Err() == nil {
					lastErr = err
				}
				continue
			}
			if len(controls) > 0 {
				return Discovery{App: app, Controls: controls}, nil
			}
		}
		if !connected {
			connected = len(registered) > 0 || b.treeConnected(ctx, b.conn, pid)
		}
		if !connected {
			grace, nor := opts.ConnectGrace, ""
			if opts.NoBusGrace > 0 && !b.treeConnected(ctx, b.session, pid) {
				grace, nor = opts.NoBusGrace, " (nor to the session bus: it uses no D-Bus)"
			}
			if grace > 0 && time.Since(start) >= grace {
				return Discovery{}, fmt.Errorf("%w within %s%s", ErrNotConnected, roundWait(grace), nor)
			}
		}
		if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			return Discovery{}, fmt.Errorf("%w (pid %d) while its controls were looked for", ErrProcessGone, pid)
		}
		select {
		case <-ctx.Done():
			return Discovery{}, discoverTimeout(connected, registered, time.Since(start), lastErr)
		case <-time.After(poll):
		}
	}
}

func discoverTimeout(connected bool, registered []App, waited time.Duration, lastErr error) error {
	in := "within " + roundWait(waited).String()
	var err error
	switch {
	case !connected:
		err = fmt.Errorf("%w %s", ErrNotConnected, in)
	case len(registered) == 0:
		err = fmt.Errorf("%w %s", ErrNotRegistered, in)
	default:
		names := make([]string, len(registered))
		for i, a := range registered {
			names[i] = fmt.Sprintf("%s (pid %d, %s)", a.Name, a.PID, cmp(a.Toolkit, "toolkit not reported"))
		}
		err = fmt.Errorf("%w %s: %s", ErrNoControls, in, strings.Join(names, ", "))
	}
	if lastErr != nil {
		return fmt.Errorf("%w (last error: %v)", err, lastErr)
	}
	return err
}

// roundWait rounds a wait for a message: to whole seconds from a second
// up, so a bound of 10s that took 9.96s reads as the bound it was.
func roundWait(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(time.Second)
	}
	return d.Round(10 * time.Millisecond)
}

func cmp(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

// appsOf returns the registered applications whose process is pid or one
// of its descendants, nearest to pid first.
func appsOf(apps []App, pid int) []App {
	type ranked struct {
		app   App
		depth int
	}
	var mine []ranked
	for _, a := range apps {
		if d := ancestorDepth(a.PID, pid); d >= 0 {
			mine = append(mine, ranked{a, d})
		}
	}
	slices.SortStableFunc(mine, func(x, y ranked) int { return x.depth - y.depth })
	out := make([]App, len(mine))
	for i, r := range mine {
		out[i] = r.app
	}
	return out
}

// treeConnected reports whether any connection on the bus conn belongs to
// pid or one of its descendants, by the unix process id the bus daemon
// knows for each connection. A bus it cannot ask counts as connected, so
// that Discover then waits rather than gives up, unless the wait is over.
func (b *Bus) treeConnected(ctx context.Context, conn *dbus.Conn, pid int) bool {
	pids, err := peerPIDs(ctx, conn)
	if err != nil {
		return ctx.Err() == nil
	}
	return slices.ContainsFunc(pids, func(p int) bool { return ancestorDepth(p, pid) >= 0 })
}

// peerPIDs lists the process ids of every connection on the bus conn,
// asking the bus daemon for each unique name's unix process id.
func peerPIDs(ctx context.Context, conn *dbus.Conn) ([]int, error) {
	var names []string
	if err := conn.BusObject().CallWithContext(ctx, ifaceDBus+".ListNames", 0).Store(&names); err != nil {
		return nil, fmt.Errorf("list bus connections: %w", err)
	}
	var calls []*dbus.Call
	for _, n := range names {
		if strings.HasPrefix(n, ":") {
			calls = append(calls, conn.BusObject().GoWithContext(ctx, ifaceDBus+".GetConnectionUnixProcessID", 0, nil, n))
		}
	}
	pids := make([]int, 0, len(calls))
	for _, c := range calls {
		var pid uint32
		// A connection that closed meanwhile has no process id any more.
		if (<-c.Done).Store(&pid) == nil {
			pids = append(pids, int(pid))
		}
	}
	return pids, nil
}
