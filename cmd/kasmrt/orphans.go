package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// becomeSubreaper makes orphaned descendants (a process that left its
// group with setsid, say) reparent to kasmrt instead of init, so that
// killOrphans can find them when the run is over.
func becomeSubreaper() {
	_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// killOrphans kills and reaps every child process still left when a run is
// over: by then the runtime has stopped the app and the X server, so what
// remains escaped their process groups. No process of the run outlives it.
func killOrphans() int {
	self := os.Getpid()
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	killed := 0
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		// The fields after the command name (which may hold spaces) start
		// with the state, then the parent PID.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(s[i+1:])
		if len(fields) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(fields[1])
		if ppid != self {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(path)))
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			killed++
		}
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(pid, &ws, 0, nil)
	}
	return killed
}
