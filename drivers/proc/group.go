package proc

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// groupPollInterval is how often a stopping group is checked for survivors.
const groupPollInterval = 10 * time.Millisecond

// signalGroup sends sig to every process in the process group pgid. A group
// that no longer exists is not an error: that is the state we want.
func signalGroup(pgid int, sig syscall.Signal) error {
	err := syscall.Kill(-pgid, sig)
	if err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// groupAlive reports whether any process of group pgid is still running.
// Zombies do not count: they run no code, and whether they are reaped
// depends on the init process of the machine, not on us. kill(-pgid, 0)
// would count them, so /proc is read instead.
func groupAlive(pgid int) bool {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		// Without /proc, fall back to the kernel's view, zombies included.
		return syscall.Kill(-pgid, 0) == nil
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		state, pgrp, ok := readStat(pid)
		if ok && pgrp == pgid && state != 'Z' && state != 'X' {
			return true
		}
	}
	return false
}

// readStat returns the state and process group of pid from /proc/PID/stat.
func readStat(pid int) (state byte, pgrp int, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	// The command name is in parentheses and may itself contain spaces or
	// parentheses, so fields are counted from the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, false
	}
	fields := strings.Fields(s[i+1:])
	// fields[0] state, [1] ppid, [2] pgrp.
	if len(fields) < 3 || len(fields[0]) != 1 {
		return 0, 0, false
	}
	pgrp, err = strconv.Atoi(fields[2])
	if err != nil {
		return 0, 0, false
	}
	return fields[0][0], pgrp, true
}

// ParentPID returns the parent of pid as recorded in /proc, or 0 when pid
// is gone. Drivers use it to match a window's process to the process they
// launched through wrapper scripts.
func ParentPID(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	fields := strings.Fields(s[i+1:])
	if len(fields) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(fields[1])
	return ppid
}

// Descendants returns pid and every process below it, parents before
// children, from one pass over /proc.
func Descendants(pid int) []int {
	children := map[int][]int{}
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		child, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		if ppid := ParentPID(child); ppid > 0 {
			children[ppid] = append(children[ppid], child)
		}
	}
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}

// killGroup ends process group pgid: SIGTERM first, then SIGKILL to whatever
// is left once grace has passed, then waits (bounded by ctx) until no member
// runs. A grace of zero sends SIGKILL at once.
func killGroup(ctx context.Context, pgid int, grace time.Duration) error {
	if grace > 0 {
		if err := signalGroup(pgid, syscall.SIGTERM); err != nil {
			return err
		}
		if waitGroupGone(ctx, pgid, grace) {
			return nil
		}
	}
	if err := signalGroup(pgid, syscall.SIGKILL); err != nil {
		return err
	}
	// SIGKILL cannot be ignored; the wait only covers the kernel tearing the
	// processes down.
	if !waitGroupGone(ctx, pgid, 5*time.Second) {
		return errors.New("process group survived SIGKILL")
	}
	return nil
}

// waitGroupGone polls until group pgid has no running member, d passes or
// ctx ends, and reports whether the group is gone.
func waitGroupGone(ctx context.Context, pgid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if !groupAlive(pgid) {
			return true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(groupPollInterval)
	}
}
