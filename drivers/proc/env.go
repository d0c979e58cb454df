package proc

import (
	"os"
	"slices"
	"strings"
	"syscall"
)

// childAttr is how every child starts: as the leader of its own process
// group, so it can be stopped with all its descendants, and with a
// parent-death signal, so it does not outlive a runtime that was killed
// before it could stop it. The kernel sends the signal when the thread
// that started the child ends; Go's runtime keeps its threads for the
// life of the process, so in practice that is when the runtime dies.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// environ is the environment of a child: the runtime's own without the
// variables named in unset, then extra, whose entries win over inherited
// ones. It returns nil (inherit everything) when there is nothing to
// change.
func environ(unset, extra []string) []string {
	if len(unset) == 0 && len(extra) == 0 {
		return nil
	}
	env := os.Environ()
	if len(unset) > 0 {
		env = slices.DeleteFunc(env, func(kv string) bool {
			name, _, _ := strings.Cut(kv, "=")
			return slices.Contains(unset, name)
		})
	}
	return append(env, extra...)
}
