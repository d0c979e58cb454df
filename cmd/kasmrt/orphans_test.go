package main

import (
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
	cmd := exec.Command(bin, "run", scenario, "--headless", "--report", filepath.Join(dir, "report"))
	cmd.Env = append(os.Environ(), "DISPLAY=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	time.Sleep(200 * time.Millisecond)
	if pids := findCmdline("sleep 4" + marker); len(pids) > 0 {
		for _, p := range pids {
			p.Kill()
		}
		t.Fatalf("an orphaned process outlived the run:\n%s", out)
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
