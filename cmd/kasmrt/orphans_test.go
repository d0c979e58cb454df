package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/internal/testkit"
)

// TestNoOrphanOutlivesTheRun runs the built binary on an app that leaves a
// process outside its group (setsid): kasmrt adopts it as subreaper and
// kills it when the run is over.
func TestNoOrphanOutlivesTheRun(t *testing.T) {
	t.Parallel()
	need(t, "Xvfb", "xterm")
	dir := t.TempDir()
	bin := kasmrtBinary(t)
	marker := strconv.Itoa(1000 + os.Getpid()%9000)
	scenario := filepath.Join(dir, "s.yaml")
	src := "name: orphan\napp:\n  command: [xterm, -e, sh, -c, 'setsid sleep 4" + marker + " & sleep 3600']\nsteps:\n  - wait: 0.5\n"
	if err := os.WriteFile(scenario, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	// A run that waits on the orphan instead of killing it fails here
	// rather than holding the package's tests until their timeout.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "run", scenario, "--headless", "--report", filepath.Join(dir, "report"))
	cmd.Env = append(os.Environ(), "DISPLAY=")
	cmd.WaitDelay = time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		for _, p := range findCmdline("sleep 4" + marker) {
			p.Kill()
		}
		t.Fatalf("run: %v\n%s", err, out)
	}
	// The orphan sleeps for over an hour: gone within seconds, it was
	// killed.
	deadline := time.Now().Add(10 * time.Second)
	for pids := findCmdline("sleep 4" + marker); len(pids) > 0; pids = findCmdline("sleep 4" + marker) {
		if time.Now().After(deadline) {
			for _, p := range pids {
				p.Kill()
			}
			t.Fatalf("an orphaned process outlived the run:\n%s", out)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

func findCmdline(needle string) []*os.Process {
	var found []*os.Process
	paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil || !strings.Contains(strings.ReplaceAll(string(b), "\x00", " "), needle) {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p))); err == nil {
			if proc, err := os.FindProcess(pid); err == nil {
				found = append(found, proc)
			}
		}
	}
	return found
}

// TestKilledRuntimeTakesTheAppsSessionWithIt SIGKILLs kasmrt, which cannot
// catch it, while its application has a child that left the application's
// process group and session (setsid) and so has no terminal to lose and no
// parent-death signal: the application's reaper, which sees its control
// pipe close, kills it too.
func TestKilledRuntimeTakesTheAppsSessionWithIt(t *testing.T) {
	t.Parallel()
	need(t, "Xvfb", "xterm", "setsid")
	marker := "sleep 5" + strconv.Itoa(100000+os.Getpid()%900000)
	dir := t.TempDir()
	scenario := filepath.Join(dir, "s.yaml")
	src := "name: escaped\napp:\n  command: [xterm, -e, sh, -c, 'setsid " + marker + " & sleep 3600']\nsteps:\n  - wait: 25\n"
	if err := os.WriteFile(scenario, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	reportDir := filepath.Join(dir, "report")
	cmd := exec.Command(kasmrtBinary(t), "run", scenario, "--headless", "--report", reportDir)
	cmd.Env = append(os.Environ(), "DISPLAY=", "KASM_RUNTIME_DEADLINE_S=60")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		for _, p := range findCmdline(marker) {
			_ = p.Kill()
		}
	})
	waitForWaitStep(t, reportDir, func() string { return stderr.String() })
	var escaped []int
	testkit.Eventually(t, testkit.ScreenWait, "the setsid child runs", func() bool {
		escaped = escaped[:0]
		for _, p := range findCmdline(marker) {
			escaped = append(escaped, p.Pid)
		}
		return len(escaped) > 0
	})
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	killed := time.Now()
	wantNoneLeft(t, escaped)
	t.Logf("the setsid child was gone %v after kasmrt was killed", time.Since(killed).Round(time.Millisecond))
}

// TestKilledRuntimeTakesItsCompositorWithIt SIGKILLs kasmrt during a run
// on the Wayland desktop: the compositor, started below the runtime's
// reaper (and, as root, as another user), ends with it.
func TestKilledRuntimeTakesItsCompositorWithIt(t *testing.T) {
	t.Parallel()
	need(t, "sway", "zenity")
	dir := t.TempDir()
	scenario := filepath.Join(dir, "s.yaml")
	src := "name: killed on wayland\napp:\n  command: [zenity, --info, --title=Killed, --text=killed]\n  window: {title: Killed}\n  startup_timeout_s: 30\nsteps:\n  - wait: 25\n"
	if err := os.WriteFile(scenario, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	reportDir := filepath.Join(dir, "report")
	cmd := exec.Command(kasmrtBinary(t), "run", scenario, "--headless", "--desktop", "wayland", "--report", reportDir)
	cmd.Env = append(os.Environ(), "DISPLAY=", "KASM_RUNTIME_DEADLINE_S=60")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	waitForWaitStep(t, reportDir, func() string { return stderr.String() })
	evs, err := events.ReadFile(filepath.Join(reportDir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var socket string
	for _, e := range evs {
		if s, ok := e.Data.(events.DisplayStarted); ok {
			socket = s.Display
		}
	}
	if !filepath.IsAbs(socket) {
		t.Fatalf("the run's session is %q, want a Wayland socket's path", socket)
	}
	// sway's command line names its configuration, beside its runtime
	// directory.
	sessionDir := filepath.Dir(filepath.Dir(socket))
	var sway []int
	for _, p := range findCmdline(sessionDir) {
		sway = append(sway, p.Pid)
	}
	if len(sway) == 0 {
		t.Fatalf("no process runs with %s in its command line", sessionDir)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	wantNoneLeft(t, sway)
	// A killed runtime cannot remove the session's directory; the test
	// does, so its runs leave nothing behind.
	if err := os.RemoveAll(sessionDir); err != nil {
		t.Error(err)
	}
}
