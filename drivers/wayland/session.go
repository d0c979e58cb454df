package wayland

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kasmrt/kasmrt/drivers/desktop"
	"github.com/kasmrt/kasmrt/drivers/proc"
)

// Compositor names the compositor a session runs.
const Compositor = "sway"

// unprivileged is the user sway runs as when the runtime is root: sway
// refuses to start with root privileges it could regain ("Unable to drop
// root"), and a compositor needs none. 65534 is nobody on Debian.
const unprivileged = 65534

// ipcSocket is the name of sway's IPC socket in the session's runtime
// directory; Dial finds it beside the Wayland socket.
const ipcSocket = "ipc.sock"

// Server is a headless sway the run started: its own runtime directory
// (XDG_RUNTIME_DIR, mode 0700) under the system's temporary directory,
// its Wayland socket there, and no Xwayland, so an application can only
// be a native Wayland client.
type Server struct {
	dir     string
	runtime string
	socket  string
	p       *proc.Process
	out     *proc.Tail

	closeOnce sync.Once
	closeErr  error
}

// StartServer starts sway with the wlroots headless backend on a screen
// of opts.Width x opts.Height, and waits until it announces its socket. A
// Wayland session cannot borrow a running compositor: opts.Display must
// be empty.
func StartServer(ctx context.Context, opts desktop.DisplayOptions) (*Server, error) {
	if opts.Display != "" {
		return nil, fmt.Errorf("start the Wayland session: a Wayland session is always the run's own; it cannot borrow the display %s", opts.Display)
	}
	if _, err := exec.LookPath("sway"); err != nil {
		return nil, fmt.Errorf("start the Wayland session: %w (install Debian's sway: scripts/setup.sh)", err)
	}
	w, h := opts.Width, opts.Height
	if w == 0 {
		w = 1280
	}
	if h == 0 {
		h = 800
	}
	timeout := opts.StartTimeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	s, err := prepare(w, h)
	if err != nil {
		return nil, fmt.Errorf("start the Wayland session: %w", err)
	}
	ready := filepath.Join(s.runtime, "ready")
	// The fifo is opened for reading and writing, so opening it does not
	// wait for sway, and closing it ends the wait below if sway dies
	// before it writes.
	fifo, err := os.OpenFile(ready, os.O_RDWR, 0)
	if err != nil {
		s.removeDir()
		return nil, fmt.Errorf("start the Wayland session: %w", err)
	}
	defer fifo.Close()

	argv := []string{"sway", "--config", filepath.Join(s.dir, "sway.conf")}
	if os.Geteuid() == 0 {
		id := fmt.Sprint(unprivileged)
		argv = append([]string{"setpriv", "--reuid=" + id, "--regid=" + id, "--clear-groups", "--"}, argv...)
	}
	s.out = proc.NewTail(4 << 10)
	// The compositor outlives ctx, which bounds only the start: it runs
	// until Close, or until the runtime dies (the reaper's parent-death
	// signal).
	s.p, err = proc.Start(context.WithoutCancel(ctx), proc.Spec{
		Argv: argv,
		// The compositor needs nothing of the runtime's environment,
		// which may hold the run's secrets, nor of the operator's session.
		Env: proc.HelperEnv("XDG_RUNTIME_DIR="+s.runtime, "HOME="+s.dir, "SWAYSOCK="+filepath.Join(s.runtime, ipcSocket),
			"WLR_BACKENDS=headless", "WLR_LIBINPUT_NO_DEVICES=1", "WLR_RENDERER=pixman",
			"XCURSOR_PATH="+s.cursorPath()),
		EnvOnly: true,
		Output:  s.out,
	})
	if err != nil {
		s.removeDir()
		return nil, fmt.Errorf("start the Wayland session: %w", err)
	}
	type line struct {
		s   string
		err error
	}
	got := make(chan line, 1)
	go func() {
		l, err := bufio.NewReader(fifo).ReadString('\n')
		got <- line{strings.TrimSpace(l), err}
	}()
	wait, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	select {
	case l := <-got:
		if l.err != nil || l.s == "" {
			s.Close()
			return nil, fmt.Errorf("start the Wayland session: sway announced no socket: %s", s.tail())
		}
		s.socket = filepath.Join(s.runtime, l.s)
	case <-s.p.Done():
		fifo.Close()
		err := fmt.Errorf("start the Wayland session: sway %s: %s", s.p.ExitStatus(), s.tail())
		s.Close()
		return nil, err
	case <-wait.Done():
		fifo.Close()
		s.Close()
		return nil, fmt.Errorf("start the Wayland session: %w: %s", wait.Err(), s.tail())
	}
	return s, nil
}

// prepare makes the session's directories, its configuration and the
// fifo sway announces its socket on.
func prepare(w, h int) (*Server, error) {
	dir, err := os.MkdirTemp("", "kasmrt-wl-")
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir, runtime: filepath.Join(dir, "runtime")}
	fail := func(err error) (*Server, error) {
		s.removeDir()
		return nil, err
	}
	root := os.Geteuid() == 0
	if root {
		// sway, run as nobody, must reach its runtime directory and read
		// its configuration; nobody else may list the directory.
		if err := os.Chmod(dir, 0o711); err != nil {
			return fail(err)
		}
	}
	if err := os.Mkdir(s.runtime, 0o700); err != nil {
		return fail(err)
	}
	ready := filepath.Join(s.runtime, "ready")
	if err := syscall.Mkfifo(ready, 0o600); err != nil {
		return fail(fmt.Errorf("make the ready fifo: %w", err))
	}
	if err := os.WriteFile(filepath.Join(dir, "sway.conf"), []byte(config(w, h, ready)), 0o644); err != nil {
		return fail(err)
	}
	if err := writeCursorThemes(s.cursorPath()); err != nil {
		return fail(err)
	}
	if root {
		for _, p := range []string{s.runtime, ready} {
			if err := os.Chown(p, unprivileged, unprivileged); err != nil {
				return fail(err)
			}
		}
	}
	return s, nil
}

// config is sway's configuration: one output of the screen's size, no
// Xwayland, no borders or bars, every window floating (placed at its own
// size in the middle of the screen, as the X11 session's openbox places
// it), focus following clicks only, the blank cursor theme (cursor.go),
// and a last command that writes the
// Wayland socket's name to the ready fifo once sway serves it.
func config(w, h int, ready string) string {
	return fmt.Sprintf(`output * resolution %[1]dx%[2]d position 0 0 scale 1
xwayland disable
default_border none
default_floating_border none
focus_follows_mouse no
focus_on_window_activation focus
seat * xcursor_theme %[4]s %[5]d
floating_maximum_size %[1]d x %[2]d
for_window [shell=".*"] floating enable
exec printf '%%s\n' "$WAYLAND_DISPLAY" > '%[3]s'
`, w, h, ready, cursorTheme, cursorSize)
}

// Display is the Wayland socket's path, which a client takes as its
// WAYLAND_DISPLAY.
func (s *Server) Display() string { return s.socket }

// Owned is true: a Wayland session is always the run's own.
func (s *Server) Owned() bool { return true }

// WindowManager names the compositor, which manages the windows.
func (s *Server) WindowManager() string { return Compositor }

// Done is closed when the compositor exits.
func (s *Server) Done() <-chan struct{} { return s.p.Done() }

// ClientEnv is what an application needs to be a native Wayland client
// of the session: the socket by its absolute path (the application's
// XDG_RUNTIME_DIR is its own), and the toolkits told to use Wayland.
func (s *Server) ClientEnv() []string {
	return []string{
		"WAYLAND_DISPLAY=" + s.socket,
		"GDK_BACKEND=wayland",
		"QT_QPA_PLATFORM=wayland",
		"SDL_VIDEODRIVER=wayland",
		"MOZ_ENABLE_WAYLAND=1",
		"ELECTRON_OZONE_PLATFORM_HINT=wayland",
		"XDG_SESSION_TYPE=wayland",
		// The pointer's image is blank, so captures leave it out (cursor.go).
		"XCURSOR_PATH=" + s.cursorPath(),
		"XCURSOR_THEME=" + cursorTheme,
		fmt.Sprintf("XCURSOR_SIZE=%d", cursorSize),
	}
}

// cursorPath is the directory of the session's blank cursor themes.
func (s *Server) cursorPath() string { return filepath.Join(s.dir, "icons") }

// ClientUnset names the variables that would reach the operator's own
// session (an X display, another compositor or its IPC), which an
// application of the run must not inherit.
func (s *Server) ClientUnset() []string {
	return []string{"DISPLAY", "WAYLAND_SOCKET", "SWAYSOCK", "I3SOCK", "XAUTHORITY"}
}

// AccessibleExtentsInWindow is true: a Wayland client is never told where
// its windows are, so the extents it reports over AT-SPI are relative to
// its window, and the runtime places them.
func (s *Server) AccessibleExtentsInWindow() bool { return true }

// Missing says what this session lacks that the X11 session offers, in
// words the run's log shows when it starts.
func (s *Server) Missing() []string { return Missing() }

// Missing says what a Wayland session lacks that the X11 session offers,
// for the run's log and for validate.
func Missing() []string {
	return []string{
		"hang detection (the app_responsive check): sway offers no way for another client to ping an application (xdg_wm_base.ping is the compositor's own), so a hung application is not told from a slow one",
		"popup windows: a Wayland application's menus and tooltips are its own surfaces, not windows, so the window list holds its toplevel windows only",
	}
}

// Close stops sway and removes the session's directories. It is safe to
// call more than once.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		if s.p != nil {
			if err := s.p.Stop(2 * time.Second); err != nil {
				s.closeErr = fmt.Errorf("stop sway: %w", err)
			}
		}
		s.removeDir()
	})
	return s.closeErr
}

func (s *Server) removeDir() {
	if err := os.RemoveAll(s.dir); err != nil && !errors.Is(err, os.ErrNotExist) && s.closeErr == nil {
		s.closeErr = err
	}
}

// tail is the end of sway's output, for error messages.
func (s *Server) tail() string {
	if s.out == nil {
		return ""
	}
	return s.out.String()
}
