package x11

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/kasmrt/kasmrt/drivers/proc"
)

// openboxConfig is the rc.xml the session's openbox reads. Undecorated
// windows keep their frames the size of the client, so a window's
// position and size are what the application asked for, moved inside the
// screen. With no keyboard bindings every key reaches the application.
const openboxConfig = `<?xml version="1.0" encoding="UTF-8"?>
<openbox_config xmlns="http://openbox.org/3.4/rc">
  <resistance><strength>0</strength><screen_edge_strength>0</screen_edge_strength></resistance>
  <focus>
    <focusNew>yes</focusNew>
    <followMouse>no</followMouse>
    <focusLast>yes</focusLast>
    <underMouse>no</underMouse>
  </focus>
  <placement><policy>Smart</policy><center>yes</center><monitor>Primary</monitor></placement>
  <theme><keepBorder>no</keepBorder><animateIconify>no</animateIconify></theme>
  <desktops><number>1</number><popupTime>0</popupTime></desktops>
  <margins><top>0</top><bottom>0</bottom><left>0</left><right>0</right></margins>
  <keyboard></keyboard>
  <mouse>
    <dragThreshold>1</dragThreshold>
    <context name="Client">
      <mousebind button="Left" action="Press"><action name="Focus"/><action name="Raise"/></mousebind>
      <mousebind button="Middle" action="Press"><action name="Focus"/><action name="Raise"/></mousebind>
      <mousebind button="Right" action="Press"><action name="Focus"/><action name="Raise"/></mousebind>
    </context>
  </mouse>
  <applications><application class="*"><decor>no</decor></application></applications>
</openbox_config>
`

// windowManager is a window manager process a session started.
type windowManager struct {
	cmd    *exec.Cmd
	done   chan struct{}
	dir    string // its configuration and home, removed on stop
	stderr *proc.Tail
	// probeConn is the connection that made the readiness probe, open
	// until stop (see waitManaging).
	probeConn *xgb.Conn
}

// wmStartTimeout bounds how long the window manager may take to take over
// the screen; openbox does so in ~15 ms here.
const wmStartTimeout = 10 * time.Second

// startWindowManager starts name on display and waits until it manages
// the screen (it announces itself through _NET_SUPPORTING_WM_CHECK).
func startWindowManager(ctx context.Context, name, display string) (*windowManager, error) {
	if name != WindowManagerOpenbox {
		return nil, fmt.Errorf("start the window manager: unknown window manager %q", name)
	}
	bin, err := exec.LookPath("openbox")
	if err != nil {
		return nil, fmt.Errorf("start the window manager: openbox is not installed (Debian package openbox, see scripts/setup.sh), or set session.window_manager: none: %w", err)
	}
	dir, err := os.MkdirTemp("", "kasmrt-wm-")
	if err != nil {
		return nil, fmt.Errorf("start the window manager: %w", err)
	}
	rc := filepath.Join(dir, "rc.xml")
	if err := os.WriteFile(rc, []byte(openboxConfig), 0o600); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start the window manager: write its configuration: %w", err)
	}
	cmd := exec.Command(bin, "--config-file", rc, "--sm-disable")
	// Its own home keeps it from reading or writing the user's openbox
	// settings, and a helper's environment from holding the run's secrets.
	cmd.Env = proc.HelperEnv("DISPLAY="+display, "HOME="+dir, "XDG_CONFIG_HOME="+dir,
		"XDG_CACHE_HOME="+dir, "XDG_DATA_HOME="+dir)
	cmd.Dir = dir
	// Like the server, it dies with the runtime if the runtime is killed
	// before it can stop it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stderr := proc.NewTail(4 << 10)
	cmd.Stdout, cmd.Stderr = stderr, stderr
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start the window manager: %w", err)
	}
	wm := &windowManager{cmd: cmd, done: make(chan struct{}), dir: dir, stderr: stderr}
	go func() {
		_ = cmd.Wait()
		close(wm.done)
	}()
	if err := wm.waitManaging(ctx, display); err != nil {
		wm.stop()
		return nil, err
	}
	return wm, nil
}

// waitManaging waits until the window manager manages new windows: it
// maps a probe window until the manager reparents it (openbox announces
// itself through _NET_SUPPORTING_WM_CHECK before its event loop runs, and
// a window mapped in between is never managed), then destroys the probe.
func (wm *windowManager) waitManaging(ctx context.Context, display string) error {
	x, err := xgb.NewConnDisplay(display)
	if err != nil {
		return fmt.Errorf("start the window manager: connect to %s: %w", display, err)
	}
	keep := false
	defer func() {
		if !keep {
			x.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, wmStartTimeout)
	defer cancel()
	screen := xproto.Setup(x).DefaultScreen(x)
	check, err := internAtom(x, "_NET_SUPPORTING_WM_CHECK")
	if err != nil {
		return fmt.Errorf("start the window manager: %w", err)
	}
	probe, err := xproto.NewWindowId(x)
	if err != nil {
		return fmt.Errorf("start the window manager: %w", err)
	}
	if err := xproto.CreateWindowChecked(x, 0, probe, screen.Root, 0, 0, 1, 1, 0,
		xproto.WindowClassInputOnly, 0, 0, nil).Check(); err != nil {
		return fmt.Errorf("start the window manager: create a probe window: %w", err)
	}
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	announced := false
	var lastMap time.Time
	for {
		if !announced {
			if announced, err = hasWindowProperty(x, screen.Root, check); err != nil {
				return fmt.Errorf("start the window manager: %w", err)
			}
		}
		if announced {
			tree, err := xproto.QueryTree(x, probe).Reply()
			if err != nil {
				return fmt.Errorf("start the window manager: watch the probe window: %w", err)
			}
			if tree.Parent != screen.Root {
				// The connection stays open until the manager stops: a
				// closed one's window IDs go to the next client, and
				// openbox, unmanaging the destroyed probe late, would
				// move and resize a new window with the same ID to the
				// probe's 1x1.
				xproto.DestroyWindow(x, probe)
				wm.probeConn, keep = x, true
				return nil
			}
			// A map request the manager dropped while starting (the first
			// one always is) is sent again, soon: each retry is a moment
			// every run waits.
			if time.Since(lastMap) > 20*time.Millisecond {
				xproto.MapWindow(x, probe)
				lastMap = time.Now()
			}
		}
		select {
		case <-wm.done:
			return fmt.Errorf("start the window manager: openbox exited: %s", strings.TrimSpace(wm.stderr.String()))
		case <-ctx.Done():
			return fmt.Errorf("start the window manager: openbox did not take over the screen: %w: %s",
				ctx.Err(), strings.TrimSpace(wm.stderr.String()))
		case <-t.C:
		}
	}
}

// stop ends the window manager (SIGTERM to its group, SIGKILL after a
// second) and removes its directory.
func (wm *windowManager) stop() error {
	var stopErr error
	pgid := wm.cmd.Process.Pid
	if err := syscall.Kill(-pgid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		stopErr = fmt.Errorf("stop the window manager: %w", err)
	}
	select {
	case <-wm.done:
	case <-time.After(time.Second):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-wm.done
	}
	if wm.probeConn != nil {
		wm.probeConn.Close()
	}
	if err := os.RemoveAll(wm.dir); err != nil && stopErr == nil {
		stopErr = fmt.Errorf("stop the window manager: %w", err)
	}
	return stopErr
}

func internAtom(x *xgb.Conn, name string) (xproto.Atom, error) {
	r, err := xproto.InternAtom(x, false, uint16(len(name)), name).Reply()
	if err != nil {
		return 0, fmt.Errorf("intern atom %s: %w", name, err)
	}
	return r.Atom, nil
}

// hasWindowProperty reports whether id carries prop as a WINDOW value.
func hasWindowProperty(x *xgb.Conn, id xproto.Window, prop xproto.Atom) (bool, error) {
	r, err := xproto.GetProperty(x, false, id, prop, xproto.AtomWindow, 0, 1).Reply()
	if err != nil {
		return false, fmt.Errorf("read root window property: %w", err)
	}
	return r.Format == 32 && len(r.Value) >= 4, nil
}
