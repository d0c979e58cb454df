package atspi

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/kasmrt/kasmrt/drivers/proc"
)

// SessionBus is a private D-Bus session bus a run starts when it has none,
// so the application and the runtime meet on the same accessibility bus.
// The services the bus activates (at-spi-bus-launcher, the accessibility
// bus, the registry) run in its process group and stop with it.
type SessionBus struct {
	daemon     *proc.Process
	address    string
	runtimeDir string
}

// StartSessionBus starts dbus-daemon with the session configuration, a
// private XDG_RUNTIME_DIR and the given display, and waits for its address.
// The daemon's environment, and so that of the services it activates, is a
// helper's (proc.HelperEnv) with env added (dconf reads HOME and
// XDG_CONFIG_HOME from it); env wins over the defaults.
func StartSessionBus(ctx context.Context, display string, env ...string) (*SessionBus, error) {
	dir, err := os.MkdirTemp("", "kasmrt-bus-")
	if err != nil {
		return nil, fmt.Errorf("start session bus: %w", err)
	}
	out := &addressLine{line: make(chan string, 1)}
	daemon, err := proc.Start(ctx, proc.Spec{
		Argv: []string{"dbus-daemon", "--config-file=/usr/share/dbus-1/session.conf", "--print-address=1", "--nofork"},
		// The bus and the services it starts (the accessibility bus,
		// dconf) inherit nothing of the runtime's environment, which may
		// hold the run's secrets.
		Env:     proc.HelperEnv(append([]string{"DISPLAY=" + display, "XDG_RUNTIME_DIR=" + dir}, env...)...),
		EnvOnly: true,
		Output:  out,
	})
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start session bus: %w", err)
	}
	b := &SessionBus{daemon: daemon, runtimeDir: dir}
	select {
	case b.address = <-out.line:
	case <-daemon.Done():
		b.Close()
		return nil, errors.New("start session bus: dbus-daemon exited: " + daemon.ExitStatus().String())
	case <-time.After(5 * time.Second):
		b.Close()
		return nil, errors.New("start session bus: dbus-daemon announced no address within 5s")
	case <-ctx.Done():
		b.Close()
		return nil, ctx.Err()
	}
	if b.address == "" {
		b.Close()
		return nil, errors.New("start session bus: dbus-daemon announced an empty address")
	}
	return b, nil
}

// Address is the bus's DBUS_SESSION_BUS_ADDRESS.
func (b *SessionBus) Address() string { return b.address }

// Env is what an application needs to publish its controls on this bus.
func (b *SessionBus) Env() []string {
	return []string{"DBUS_SESSION_BUS_ADDRESS=" + b.address, "XDG_RUNTIME_DIR=" + b.runtimeDir}
}

// Close stops the bus and everything it activated, and removes its
// runtime directory.
func (b *SessionBus) Close() error {
	err := b.daemon.Stop(time.Second)
	os.RemoveAll(b.runtimeDir)
	return err
}

// addressLine hands the first line dbus-daemon prints (its address) to a
// channel and discards the rest.
type addressLine struct {
	once sync.Once
	line chan string
}

func (a *addressLine) Write(p []byte) (int, error) {
	a.once.Do(func() {
		line, _ := bufio.NewReader(strings.NewReader(string(p))).ReadString('\n')
		a.line <- strings.TrimSpace(line)
	})
	return len(p), nil
}
