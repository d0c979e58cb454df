package atspi

import (
	"bufio"
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/drivers/proc"
	"github.com/kasmrt/kasmrt/drivers/x11"
	"github.com/kasmrt/kasmrt/internal/testkit"
)

// desktop is a private X server and D-Bus session bus for one test, so tests
// can run in parallel without sharing an accessibility bus.
type desktop struct {
	display string
	// bus is the session bus address.
	bus string
	// env is what an application launched on this desktop needs.
	env []string
}

func requireBinaries(t testing.TB, names ...string) {
	t.Helper()
	testkit.Need(t, names...)
}

// newDesktop starts Xvfb and a session bus. The bus runs in its own process
// group, and the services it activates (at-spi-bus-launcher, the
// accessibility bus daemon, at-spi2-registryd) stay in that group, so
// stopping the group at cleanup leaves nothing behind. XDG_RUNTIME_DIR is
// private so the accessibility bus socket is not shared between tests.
func newDesktop(t testing.TB) desktop {
	t.Helper()
	requireBinaries(t, "Xvfb", "dbus-daemon")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()

	x := startX(t, ctx)
	t.Cleanup(func() {
		if t.Failed() {
			select {
			case <-x.Done():
				t.Logf("Xvfb %s had exited", x.Display())
			default:
				_, serr := os.Stat("/tmp/.X11-unix/X" + strings.TrimPrefix(x.Display(), ":"))
				t.Logf("Xvfb %s still runs; socket file: %v", x.Display(), serr)
			}
		}
		x.Close()
	})

	// Private as the XDG base directory specification wants it: Qt warns
	// about any other mode, as the runtime's own run directories have.
	runtimeDir := t.TempDir()
	if err := os.Chmod(runtimeDir, 0o700); err != nil {
		t.Fatal(err)
	}
	base := []string{
		"DISPLAY=" + x.Display(),
		"XDG_RUNTIME_DIR=" + runtimeDir,
		"HOME=" + runtimeDir,
		"GSETTINGS_BACKEND=memory",
		"LC_ALL=C.UTF-8",
	}
	out := newFirstLine()
	daemon, err := proc.Start(context.Background(), proc.Spec{
		Argv: []string{"dbus-daemon", "--config-file=/usr/share/dbus-1/session.conf",
			"--print-address=1", "--nofork"},
		Env:    base,
		Output: out,
	})
	if err != nil {
		t.Fatalf("start session bus: %v", err)
	}
	t.Cleanup(func() {
		if err := daemon.Stop(time.Second); err != nil {
			t.Errorf("stop session bus and its services: %v", err)
		}
	})
	var addr string
	select {
	case addr = <-out.line:
	case <-ctx.Done():
		t.Fatalf("session bus announced no address")
	}
	return desktop{
		display: x.Display(),
		bus:     addr,
		env:     append(base, "DBUS_SESSION_BUS_ADDRESS="+addr),
	}
}

// startX starts Xvfb and keeps a client connected for the test's life.
// Xvfb resets itself whenever its last client disconnects, and a client that
// connects during the reset fails with "cannot open display"; on this desktop
// at-spi-bus-launcher connects briefly just as the application starts, so
// without a standing client the launch fails now and then. (StartServer
// could pass -noreset instead.)
func startX(t testing.TB, ctx context.Context) *x11.Server {
	t.Helper()
	x, err := x11.StartServer(ctx, x11.DisplayOptions{})
	if err != nil {
		t.Fatalf("start Xvfb: %v", err)
	}
	c, err := x11.Dial(x.Display())
	if err != nil {
		x.Close()
		t.Fatalf("connect to Xvfb %s: %v", x.Display(), err)
	}
	t.Cleanup(func() { c.Close() })
	return x
}

// firstLine hands the first line written to it to a channel, as dbus-daemon
// announces its address, and discards the rest.
type firstLine struct {
	once sync.Once
	line chan string
}

func newFirstLine() *firstLine { return &firstLine{line: make(chan string, 1)} }

func (f *firstLine) Write(p []byte) (int, error) {
	f.once.Do(func() {
		line, _ := bufio.NewReader(strings.NewReader(string(p))).ReadString('\n')
		f.line <- strings.TrimSpace(line)
	})
	return len(p), nil
}

// launch starts argv on the desktop and stops it when the test ends.
func (d desktop) launch(t testing.TB, argv ...string) *proc.Process {
	t.Helper()
	requireBinaries(t, argv[0])
	out := &tail{}
	p, err := proc.Start(context.Background(), proc.Spec{Argv: argv, Env: d.env, Output: out})
	if err != nil {
		t.Fatalf("launch %s: %v", argv[0], err)
	}
	t.Cleanup(func() {
		p.Stop(time.Second)
		if t.Failed() {
			t.Logf("%s %s; its output:\n%s", argv[0], p.ExitStatus(), out)
		}
	})
	return p
}

// tail keeps the last lines an application printed, for failure reports.
type tail struct {
	mu    sync.Mutex
	lines []string
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, string(p))
	if len(t.lines) > 20 {
		t.lines = t.lines[1:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, "")
}

// connect opens the desktop's accessibility bus.
func (d desktop) connect(t testing.TB) *Bus {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := ConnectSession(ctx, d.bus)
	if err != nil {
		t.Fatalf("ConnectSession: %v", err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// waitControls polls the application's controls until every name in want is
// among them: a toolkit registers the application before its window is
// shown.
func waitControls(t testing.TB, app App, want ...string) []Control {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var last []Control
	var lastErr error
	for {
		controls, err := app.Controls(ctx)
		if err == nil && hasAll(controls, want) {
			return controls
		}
		if err == nil {
			last = controls
		} else if ctx.Err() == nil {
			lastErr = err
		}
		select {
		case <-ctx.Done():
			t.Fatalf("controls %q did not appear: last %v, error %v", want, Names(last), lastErr)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func hasAll(controls []Control, names []string) bool {
	for _, n := range names {
		found := false
		for _, c := range controls {
			found = found || c.Name == n
		}
		if !found {
			return false
		}
	}
	return true
}
