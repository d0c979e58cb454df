package proc

import (
	"os"
	"slices"
	"strings"
	"syscall"
)

// childAttr is how a disposable command starts (a long-lived child starts
// below a reaper instead, reaper.go): as the leader of its own process
// group, so it can be stopped with all its descendants, and with a
// parent-death signal, so it does not outlive a runtime that was killed
// before it could stop it. The kernel sends the signal when the thread
// that started the child ends; Go's runtime keeps its threads for the
// life of the process, so in practice that is when the runtime dies.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// reaperAttr is how a long-lived child's reaper starts: in a process group
// of its own (a terminal's Ctrl-C reaches the runtime, which ends the run
// in order, not the reaper), with SIGTERM as its parent-death signal, which
// it catches to kill the tree below it before it exits. Its control pipe
// says the same; the signal is the second way.
func reaperAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
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

// helperInherits are the only variables a helper takes from the runtime's
// environment: where programs are, the locale and the time zone. A helper
// (the X server, the window manager, a D-Bus session bus and the services
// it starts) needs nothing else of the runtime, and an environment built
// from these alone cannot carry a secret however the variable holding it
// was named.
var helperInherits = []string{"PATH", "LANG", "LANGUAGE", "TZ"}

// HelperEnv is the environment of a helper the runtime starts for a
// session: PATH, the locale (LANG, LANGUAGE, LC_*) and TZ from the
// runtime's environment, then extra, whose entries win.
func HelperEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if slices.Contains(helperInherits, name) || strings.HasPrefix(name, "LC_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}
