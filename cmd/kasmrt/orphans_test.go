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
