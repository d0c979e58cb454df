package proc

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStopEndsWhatLeftTheSession starts a child whose own child leaves the
// process group and the session (setsid) and ignores SIGTERM: Stop still
// returns with it gone, as the child's reaper kills it, and the program
// that called Start need not be a subreaper itself (a suite is not).
func TestStopEndsWhatLeftTheSession(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	p, err := Start(context.Background(), Spec{
		Argv: []string{"sh", "-c", `setsid sh -c 'trap "" TERM; echo $$ > ` + pidFile + `.tmp; mv ` + pidFile + `.tmp ` + pidFile + `; exec sleep 1000' & wait`},
	})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	waitFor(t, func() bool { _, err := os.Stat(pidFile); return err == nil })
	if err := p.Stop(200 * time.Millisecond); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	assertGone(t, pidFile)
}

// TestReaperReportsTheChild checks what the runtime sees through the
// reaper: the child's own PID (whose parent is the reaper, in a process
// group of its own), its exit status, and an error naming a program that
// cannot be executed.
func TestReaperReportsTheChild(t *testing.T) {
	t.Parallel()
	p, err := Start(context.Background(), Spec{Argv: []string{"sh", "-c", "kill -SEGV $$"}})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	<-p.Done()
	if got := p.ExitStatus().String(); got != "killed by signal SEGV" {
		t.Errorf("status %q, want killed by signal SEGV", got)
	}
	_ = p.Stop(time.Second)

	q, err := Start(context.Background(), Spec{Argv: []string{"sleep", "30"}})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer q.Stop(0)
	if _, pgrp, ok := readStat(q.PID()); !ok || pgrp != q.PID() {
		t.Errorf("the child %d is not the leader of its process group (%d)", q.PID(), pgrp)
	}
	cmdline, _ := os.ReadFile("/proc/" + itoa(q.PID()) + "/cmdline")
	if !strings.HasPrefix(string(cmdline), "sleep\x0030") {
		t.Errorf("PID %d runs %q, want the child itself", q.PID(), cmdline)
	}
	parent, _ := os.ReadFile("/proc/" + itoa(ParentPID(q.PID())) + "/cmdline")
	if !strings.HasPrefix(string(parent), reaperArg0+"\x00") {
		t.Errorf("the child's parent runs %q, want its reaper", parent)
	}
	if env, _ := os.ReadFile("/proc/" + itoa(q.PID()) + "/environ"); strings.Contains(string(env), reaperEnv) {
		t.Errorf("the child's environment holds %s", reaperEnv)
	}

	noexec := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(noexec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Start(context.Background(), Spec{Argv: []string{noexec}}); err == nil || !strings.Contains(err.Error(), "launch "+noexec) {
		t.Errorf("Start of a file without x: %v, want a launch error", err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// envStarter makes TestStarterHelper start the command it names and wait
// to be killed: a runtime that dies without stopping what it started.
const envStarter = "PROC_TEST_STARTER"

func TestStarterHelper(t *testing.T) {
	script := os.Getenv(envStarter)
	if script == "" {
		t.Skip("run by TestKilledStarterTakesTheTreeWithIt")
	}
	if _, err := Start(context.Background(), Spec{Argv: []string{"sh", "-c", script}}); err != nil {
		t.Fatal(err)
	}
	select {}
}

// TestKilledStarterTakesTheTreeWithIt SIGKILLs a program that started a
// child whose own child left the group and the session (setsid): nothing
// in the dead program can act, yet the reaper, whose control pipe closed,
// kills the setsid descendant. It needs no privileges.
func TestKilledStarterTakesTheTreeWithIt(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	starter := exec.Command(self, "-test.run=^TestStarterHelper$")
	starter.Env = append(os.Environ(), envStarter+"=setsid sh -c 'echo $$ > "+pidFile+".tmp; mv "+pidFile+".tmp "+pidFile+"; exec sleep 1000' & wait")
	if err := starter.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { _, err := os.Stat(pidFile); return err == nil })
	b, _ := os.ReadFile(pidFile)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	if err := starter.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = starter.Wait()
	killed := time.Now()
	waitFor(t, func() bool { state, _, ok := readStat(pid); return !ok || state == 'Z' || state == 'X' })
	t.Logf("the setsid descendant was gone %v after its starter was killed", time.Since(killed).Round(time.Millisecond))
}
