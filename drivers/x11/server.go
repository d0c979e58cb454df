package x11

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jezek/xgb"

	"github.com/kasmrt/kasmrt/drivers/proc"
)

// Server is an X server in use by a run: one it started (owned) or one it
// borrowed.
type Server struct {
	display string
	owned   bool
	cmd     *exec.Cmd
	done    chan struct{}
	stderr  *proc.Tail
	// watch is the connection that notices a borrowed server dying.
	watch *xgb.Conn
	// wm is the window manager an owned server started, if any.
	wm *windowManager

	closeOnce sync.Once
	closeErr  error
}

// StartServer starts Xvfb on a free display (chosen by the server through
// -displayfd) in its own process group, or borrows opts.Display. A borrowed
// display must accept a connection.
func StartServer(ctx context.Context, opts DisplayOptions) (*Server, error) {
	if opts.Display != "" {
		return borrowServer(opts.Display)
	}
	// An announced display that refuses its first connection is started
	// again: under heavy load a server can lose its socket to a display
	// number being reused, and a run should not fail for that.
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		s, err := startXvfb(ctx, opts)
		if err != nil {
			return nil, err
		}
		c, err := xgb.NewConnDisplay(s.display)
		if err == nil {
			c.Close()
			if opts.WindowManager == "" || opts.WindowManager == WindowManagerNone {
				return s, nil
			}
			if s.wm, err = startWindowManager(ctx, opts.WindowManager, s.display); err != nil {
				s.Close()
				return nil, err
			}
			return s, nil
		}
		lastErr = fmt.Errorf("start Xvfb: display %s refused a connection: %w", s.display, err)
		s.Close()
	}
	return nil, lastErr
}

// startXvfb starts one Xvfb and waits for it to announce its display.
func startXvfb(ctx context.Context, opts DisplayOptions) (*Server, error) {
	w, h, d := opts.Width, opts.Height, opts.Depth
	if w == 0 {
		w = 1280
	}
	if h == 0 {
		h = 800
	}
	if d == 0 {
		d = 24
	}
	timeout := opts.StartTimeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}

	r, wr, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("start Xvfb: displayfd pipe: %w", err)
	}
	defer r.Close()
	// ExtraFiles[0] is fd 3 in the child.
	cmd := exec.Command("Xvfb", "-displayfd", "3",
		"-screen", "0", fmt.Sprintf("%dx%dx%d", w, h, d),
		"-nolisten", "tcp",
		// Without -noreset the server resets whenever its last client
		// leaves (the AT-SPI launcher connects briefly at start-up), and an
		// app connecting during the reset fails with "cannot open display".
		"-noreset")
	cmd.ExtraFiles = []*os.File{wr}
	// The server needs nothing of the runtime's environment, which may hold
	// the run's secrets.
	cmd.Env = proc.HelperEnv()
	// The parent-death signal ends the server when the runtime is killed
	// before it can stop it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stderr := proc.NewTail(4 << 10)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		wr.Close()
		return nil, fmt.Errorf("start Xvfb: %w", err)
	}
	wr.Close()
	s := &Server{owned: true, cmd: cmd, done: make(chan struct{}), stderr: stderr}
	go func() {
		_ = cmd.Wait()
		close(s.done)
	}()

	type announce struct {
		line string
		err  error
	}
	got := make(chan announce, 1)
	go func() {
		line, err := bufio.NewReader(r).ReadString('\n')
		got <- announce{line, err}
	}()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	select {
	case a := <-got:
		num := strings.TrimSpace(a.line)
		if a.err != nil || num == "" {
			s.Close()
			return nil, fmt.Errorf("start Xvfb: no display announced: %s", s.stderrTail())
		}
		s.display = ":" + num
	case <-ctx.Done():
		s.Close()
		return nil, fmt.Errorf("start Xvfb: %w: %s", ctx.Err(), s.stderrTail())
	}
	return s, nil
}

func borrowServer(display string) (*Server, error) {
	x, err := xgb.NewConnDisplay(display)
	if err != nil {
		return nil, fmt.Errorf("borrow X display %s: %w", display, err)
	}
	s := &Server{display: display, done: make(chan struct{}), watch: x}
	go func() {
		// We select no events, so WaitForEvent returns (nil, nil) only when
		// the connection ends: the server died or Close closed it.
		for {
			ev, xerr := x.WaitForEvent()
			if ev == nil && xerr == nil {
				close(s.done)
				return
			}
		}
	}()
	return s, nil
}

// Display is the display name to give clients (":99").
func (s *Server) Display() string { return s.display }

// Owned reports whether the session started its own Xvfb.
func (s *Server) Owned() bool { return s.owned }

// WindowManager names the window manager the session started, or "".
func (s *Server) WindowManager() string {
	if s.wm == nil {
		return ""
	}
	return WindowManagerOpenbox
}

// WindowManagerExited reports whether the window manager the session
// started has exited while the server runs on; it is false when the
// session started none.
func (s *Server) WindowManagerExited() bool {
	if s.wm == nil {
		return false
	}
	select {
	case <-s.wm.done:
		return true
	default:
		return false
	}
}

// Done is closed when the X server has gone away (or, for a borrowed
// display, when the session is closed).
func (s *Server) Done() <-chan struct{} { return s.done }

// Close stops an owned Xvfb (SIGTERM to its process group, SIGKILL after
// two seconds) and waits for it; for a borrowed display it only lets go.
// It is safe to call more than once.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		if !s.owned {
			s.watch.Close()
			<-s.done
			return
		}
		if s.wm != nil {
			s.closeErr = s.wm.stop()
		}
		pgid := s.cmd.Process.Pid
		if err := syscall.Kill(-pgid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
			s.closeErr = fmt.Errorf("stop Xvfb: %w", err)
		}
		select {
		case <-s.done:
		case <-time.After(2 * time.Second):
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			<-s.done
		}
	})
	return s.closeErr
}

// stderrTail is the end of an owned server's stderr, for error messages.
func (s *Server) stderrTail() string {
	if s.stderr == nil {
		return ""
	}
	return s.stderr.String()
}
