package main

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/kasmrt/kasmrt/drivers/proc"
)

// becomeSubreaper makes orphaned descendants (a process that left its
// group with setsid, say) reparent to kasmrt instead of init, so that
// killOrphans can find them when the run is over.
func becomeSubreaper() {
	_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// killOrphans kills and reaps every process still left below kasmrt when a
// run is over: by then the runtime has stopped the app and the X server,
// so what remains escaped their process groups. No process of the run
// outlives it.
func killOrphans() int {
	self := os.Getpid()
	killed := 0
	for _, pid := range proc.Descendants(self)[1:] {
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			killed++
		}
		if proc.ParentPID(pid) == self {
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(pid, &ws, 0, nil)
		}
	}
	return killed
}
