package proc

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A process Start launches runs below a reaper: this same program, started
// again from /proc/self/exe, that is the child subreaper of everything the
// process starts. A descendant that leaves the process group (setsid) and
// whose parent exits is re-parented to the reaper, not to init, so the
// reaper always knows the whole tree. The reaper kills that tree when the
// runtime stops the process, and also when the runtime dies: its control
// pipe, whose only writer is the runtime, reaches end of file however the
// runtime ends, SIGKILL included, and a parent-death signal backs that up.
// A parent-death signal alone cannot do this: it reaches only the direct
// child, not the grandchildren that setsid moved away.
//
// Nothing here needs privileges, systemd or a writable cgroup: a child
// subreaper is unprivileged (Linux 3.4). A PID namespace would also end
// every descendant with its init, but it needs CAP_SYS_ADMIN or a user
// namespace, and the application would see other PIDs than the runtime
// does (its windows' _NET_WM_PID among them).

// reaperEnv marks the environment of a reaper; the reaper removes it from
// the application's. Its value is the protocol's version, so that a
// stray variable of the same name is not mistaken for it.
const (
	reaperEnv     = "KASMRT_PROC_REAPER"
	reaperVersion = "1"
	// reaperArg0 is the reaper's argv[0], which ps shows.
	reaperArg0 = "kasmrt-reaper"
)

// The reaper's inherited descriptors: the control pipe's read end and the
// status pipe's write end.
const (
	reaperControlFD = 3
	reaperStatusFD  = 4
)

// reaperKillBound bounds how long the reaper keeps killing a tree that
// will not go (a process in uninterruptible sleep).
const reaperKillBound = 5 * time.Second

func init() {
	// Any program that starts processes through this package can be its
	// own reaper; the check comes before its main (or TestMain) runs.
	if os.Getenv(reaperEnv) == reaperVersion && len(os.Args) >= 3 && os.Args[0] == reaperArg0 {
		os.Exit(reap(os.Args[1], os.Args[2:]))
	}
}

// reap is the reaper's whole life: start path with argv in a process
// group of its own, report its PID and how it ended on the status pipe,
// reap every orphan below, and kill the tree when the control pipe ends
// or a signal asks the reaper to end.
func reap(path string, argv []string) int {
	// A child's parent-death signal follows the thread that forked it: the
	// application must not be killed because the runtime retired a thread.
	runtime.LockOSThread()
	control := os.NewFile(reaperControlFD, "control")
	status := os.NewFile(reaperStatusFD, "status")
	syscall.CloseOnExec(reaperControlFD)
	syscall.CloseOnExec(reaperStatusFD)
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintf(status, "error become a child subreaper: %v\n", err)
		return 127
	}
	ending := make(chan os.Signal, 1)
	signal.Notify(ending, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, reaperEnv+"=") })
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{
		Env:   env,
		Files: []uintptr{0, 1, 2},
		Sys:   &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		fmt.Fprintf(status, "error %v\n", err)
		return 127
	}
	fmt.Fprintf(status, "pid %d\n", pid)

	empty := make(chan struct{})
	go func() {
		defer close(empty)
		for {
			var ws syscall.WaitStatus
			got, err := syscall.Wait4(-1, &ws, 0, nil)
			if err == syscall.EINTR {
				continue
			}
			if err != nil {
				// ECHILD: the application and every orphan are gone; none
				// can come, as only descendants are re-parented here.
				return
			}
			if got == pid {
				fmt.Fprintf(status, "exit %d\n", uint32(ws))
			}
		}
	}()
	ended := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, control)
		close(ended)
	}()
	select {
	case <-empty:
		return 0
	case <-ended:
	case <-ending:
	}
	killTree(pid)
	return 0
}

// killTree kills the process group leader leads and every running process
// below the reaper until none is left (or the bound passes). A process
// forked while the tree is being killed is below the reaper too, and the
// next pass finds it.
func killTree(leader int) {
	self := os.Getpid()
	deadline := time.Now().Add(reaperKillBound)
	for {
		_ = syscall.Kill(-leader, syscall.SIGKILL)
		live := 0
		for _, pid := range Descendants(self)[1:] {
			if state, _, ok := readStat(pid); ok && state != 'Z' && state != 'X' {
				live++
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		if live == 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(groupPollInterval)
	}
}

// reaperLink is the runtime's end of a reaper: it reads the application's
// PID and how it ended, and holds the control pipe whose end stops the
// reaper.
type reaperLink struct {
	control *os.File
	status  *bufio.Reader
}

// appPID reads the status pipe's first line: the application's PID, or
// why it could not be started.
func (l *reaperLink) appPID() (int, error) {
	line, err := l.status.ReadString('\n')
	if err != nil {
		return 0, fmt.Errorf("the reaper ended before it started the process: %w", err)
	}
	line = strings.TrimSuffix(line, "\n")
	if msg, ok := strings.CutPrefix(line, "error "); ok {
		return 0, fmt.Errorf("%s", msg)
	}
	if s, ok := strings.CutPrefix(line, "pid "); ok {
		if pid, err := strconv.Atoi(s); err == nil && pid > 0 {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("the reaper said %q, want the process's pid", line)
}

// exitStatus reads the status pipe until the application's exit; ok is
// false when the pipe ended first (the reaper was killed).
func (l *reaperLink) exitStatus() (ws syscall.WaitStatus, ok bool) {
	for {
		line, err := l.status.ReadString('\n')
		if s, found := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "exit "); found {
			if n, perr := strconv.ParseUint(s, 10, 32); perr == nil {
				return syscall.WaitStatus(n), true
			}
		}
		if err != nil {
			return 0, false
		}
	}
}
