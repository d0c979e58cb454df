package atspi

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/godbus/dbus/v5"

	"github.com/kasmrt/kasmrt/drivers/proc"
)

// D-Bus names of the AT-SPI protocol.
const (
	a11yBusName       = "org.a11y.Bus"
	a11yBusPath       = "/org/a11y/bus"
	registryName      = "org.a11y.atspi.Registry"
	rootPath          = "/org/a11y/atspi/accessible/root"
	ifaceAccessible   = "org.a11y.atspi.Accessible"
	ifaceApplication  = "org.a11y.atspi.Application"
	ifaceAction       = "org.a11y.atspi.Action"
	ifaceComponent    = "org.a11y.atspi.Component"
	ifaceValue        = "org.a11y.atspi.Value"
	ifaceProperties   = "org.freedesktop.DBus.Properties"
	ifaceDBus         = "org.freedesktop.DBus"
	coordTypeScreen   = uint32(0)
	sessionBusEnvName = "DBUS_SESSION_BUS_ADDRESS"
)

// ErrNoSessionBus means no D-Bus session bus address was given: the runtime
// and the application must run under one (dbus-run-session) for AT-SPI.
var ErrNoSessionBus = errors.New("no D-Bus session bus: " + sessionBusEnvName + " is not set (run under dbus-run-session)")

// Bus is a connection to the AT-SPI accessibility bus.
type Bus struct {
	conn    *dbus.Conn
	address string
	// session is the session bus the accessibility bus was found through,
	// kept to see which processes use D-Bus at all.
	session *dbus.Conn
}

// Connect connects to the accessibility bus of the session bus named by
// DBUS_SESSION_BUS_ADDRESS.
func Connect(ctx context.Context) (*Bus, error) {
	return ConnectSession(ctx, os.Getenv(sessionBusEnvName))
}

// ConnectSession connects to the accessibility bus of the session bus at
// sessionAddress. Asking org.a11y.Bus for its address starts the AT-SPI bus
// launcher on demand when the session bus can activate it.
func ConnectSession(ctx context.Context, sessionAddress string) (*Bus, error) {
	if sessionAddress == "" {
		return nil, ErrNoSessionBus
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("connect to session bus: %w", err)
	}
	session, err := dbus.Connect(sessionAddress)
	if err != nil {
		return nil, fmt.Errorf("connect to session bus: %w", err)
	}
	var address string
	ctx, cancel := bounded(ctx, CallTimeout)
	defer cancel()
	err = session.Object(a11yBusName, a11yBusPath).
		CallWithContext(ctx, a11yBusName+".GetAddress", 0).Store(&address)
	if err != nil {
		session.Close()
		return nil, fmt.Errorf("no accessibility bus on the session bus (is at-spi2-core installed?): %w", err)
	}
	conn, err := dbus.Connect(address)
	if err != nil {
		session.Close()
		return nil, fmt.Errorf("connect to accessibility bus: %w", err)
	}
	return &Bus{conn: conn, address: address, session: session}, nil
}

// Address is the accessibility bus address in use.
func (b *Bus) Address() string { return b.address }

// Close ends the connection to the accessibility bus.
func (b *Bus) Close() error {
	b.session.Close()
	if err := b.conn.Close(); err != nil {
		return fmt.Errorf("close accessibility bus: %w", err)
	}
	return nil
}

// App is an application registered on the accessibility bus.
type App struct {
	// Name is the application's accessible name (usually its program name).
	Name string
	// PID is the process that owns the application's bus connection.
	PID int
	// ChildCount is the number of top-level accessibles (windows) it has.
	ChildCount int
	// Toolkit is the toolkit's name and version as the application reports
	// them ("GTK 4.8.3", "Qt 5.15.8"); empty when it does not say.
	Toolkit string

	bus  *Bus
	node ref
	// cache, when set, answers Controls (see Cached).
	cache *controlCache
}

// ref addresses one accessible object: a bus name and an object path.
type ref struct {
	Dest string
	Path dbus.ObjectPath
}

func (b *Bus) object(r ref) dbus.BusObject { return b.conn.Object(r.Dest, r.Path) }

// Applications lists the applications registered on the accessibility bus.
func (b *Bus) Applications(ctx context.Context) ([]App, error) {
	ctx, cancel := bounded(ctx, CallTimeout)
	defer cancel()
	var roots []ref
	err := b.object(ref{registryName, rootPath}).
		CallWithContext(ctx, ifaceAccessible+".GetChildren", 0).Store(&roots)
	if err != nil {
		return nil, fmt.Errorf("list accessible applications: %w", err)
	}
	apps := make([]App, 0, len(roots))
	for _, r := range roots {
		app, err := b.describeApp(ctx, r)
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("list accessible applications: %w", ctx.Err())
			}
			// An application that exits while we ask about it is not an
			// error of the listing: it is simply no longer there.
			continue
		}
		apps = append(apps, app)
	}
	return apps, nil
}

func (b *Bus) describeApp(ctx context.Context, r ref) (App, error) {
	obj := b.object(r)
	name := obj.GoWithContext(ctx, ifaceProperties+".Get", 0, nil, ifaceAccessible, "Name")
	count := obj.GoWithContext(ctx, ifaceProperties+".Get", 0, nil, ifaceAccessible, "ChildCount")
	pid := b.conn.BusObject().GoWithContext(ctx, ifaceDBus+".GetConnectionUnixProcessID", 0, nil, r.Dest)
	toolkit := obj.GoWithContext(ctx, ifaceProperties+".Get", 0, nil, ifaceApplication, "ToolkitName")
	version := obj.GoWithContext(ctx, ifaceProperties+".Get", 0, nil, ifaceApplication, "Version")

	app := App{bus: b, node: r}
	var nameV, countV dbus.Variant
	var pidU uint32
	if err := (<-name.Done).Store(&nameV); err != nil {
		return App{}, fmt.Errorf("read name of %s: %w", r.Dest, err)
	}
	if err := (<-count.Done).Store(&countV); err != nil {
		return App{}, fmt.Errorf("read child count of %s: %w", r.Dest, err)
	}
	if err := (<-pid.Done).Store(&pidU); err != nil {
		return App{}, fmt.Errorf("read process id of %s: %w", r.Dest, err)
	}
	app.Name, _ = nameV.Value().(string)
	if n, ok := countV.Value().(int32); ok {
		app.ChildCount = int(n)
	}
	app.PID = int(pidU)
	// The toolkit is optional: an application that does not report it is
	// walked by the common rules.
	var toolkitV, versionV dbus.Variant
	if (<-toolkit.Done).Store(&toolkitV) == nil {
		app.Toolkit, _ = toolkitV.Value().(string)
		if (<-version.Done).Store(&versionV) == nil {
			if v, _ := versionV.Value().(string); v != "" && app.Toolkit != "" {
				app.Toolkit += " " + v
			}
		}
	}
	return app, nil
}

// ancestorDepth says how many generations pid is below ancestor (0 when they
// are the same process), or -1 when ancestor is not among pid's ancestors.
func ancestorDepth(pid, ancestor int) int {
	for depth := 0; pid > 1 && depth < 64; depth++ {
		if pid == ancestor {
			return depth
		}
		pid = proc.ParentPID(pid)
	}
	return -1
}
