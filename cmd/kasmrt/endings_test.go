package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/drivers/proc"
	"github.com/kasmrt/kasmrt/internal/testkit"
)

// endingScenario runs xterm and then waits long enough for the test to end
// the run from outside while it waits.
const endingScenario = `name: ending
app:
  command: [xterm, -class, KasmEnding, -e, sleep, '3600']
  window: {class: KasmEnding}
  startup_timeout_s: 10
steps:
  - observe_screen: {}
  - wait: 25
`

// startEnding starts the built binary on endingScenario with args and
// waits until the run is in its wait step. It returns the command and the
// report directory.
func startEnding(t *testing.T, stdout io.Writer, args ...string) (*exec.Cmd, string) {
	t.Helper()
	dir := t.TempDir()
	scenario := testkit.WriteFile(t, dir, "ending.yaml", endingScenario)
	reportDir := filepath.Join(dir, "report")
	cmd := exec.Command(kasmrtBinary(t), append([]string{"run", scenario, "--report", reportDir}, args...)...)
	cmd.Env = append(os.Environ(), "DISPLAY=", "KASM_RUNTIME_DEADLINE_S=60")
	cmd.Stdout = stdout
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	waitForWaitStep(t, reportDir, func() string { return stderr.String() })
	return cmd, reportDir
}

// waitForWaitStep polls events.jsonl until the wait step has started.
func waitForWaitStep(t *testing.T, reportDir string, why func() string) {
	t.Helper()
	deadline := time.Now().Add(testkit.ScreenWait)
	for {
		b, _ := os.ReadFile(filepath.Join(reportDir, "events.jsonl"))
		if strings.Contains(string(b), `"kind":"step.started"`) && strings.Contains(string(b), `"tool":"wait"`) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run never reached its wait step:\n%s\n%s", b, why())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// running reports whether pid is a live process (zombies are not).
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z' && s[i+2] != 'X'
}

// wantNoneLeft fails when any of pids still runs a few seconds on.
func wantNoneLeft(t *testing.T, pids []int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		var left []string
		for _, pid := range pids {
			if running(pid) {
				cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
				left = append(left, fmt.Sprintf("%d %s", pid, strings.ReplaceAll(string(cmdline), "\x00", " ")))
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, pid := range pids {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Fatalf("processes outlived the run:\n%s", strings.Join(left, "\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// wantReport checks that report.json is complete with the wanted outcome.
func wantReport(t *testing.T, reportDir, outcome, reason string) {
	t.Helper()
	rep, _ := readReport(t, reportDir)
	if string(rep.Outcome) != outcome || !strings.Contains(strings.Join(rep.Reasons, "\n"), reason) {
		t.Errorf("report: %s (%s) %q, want outcome %s with %q", rep.Verdict, rep.Outcome, rep.Reasons, outcome, reason)
	}
	ev, _ := os.ReadFile(filepath.Join(reportDir, "events.jsonl"))
	if !strings.Contains(string(ev), `"kind":"run.ended"`) {
		t.Error("events.jsonl does not end with run.ended")
	}
}

// TestSignalEndingsWriteReportAndLeaveNothing ends a running kasmrt with
// each signal a terminal, a shell or a supervisor sends: each ends the run
// as interrupted, with a complete report, exit 2, and no process the run
// started still running.
func TestSignalEndingsWriteReportAndLeaveNothing(t *testing.T) {
	t.Parallel()
	need(t, "Xvfb", "xterm")
	for _, tt := range []struct {
		sig    syscall.Signal
		reason string
	}{
		{syscall.SIGINT, "interrupt"},
		{syscall.SIGTERM, "terminated"},
		{syscall.SIGHUP, "hangup"},
	} {
		t.Run(tt.sig.String(), func(t *testing.T) {
			t.Parallel()
			cmd, reportDir := startEnding(t, io.Discard, "--headless")
			started := proc.Descendants(cmd.Process.Pid)[1:]
			if len(started) < 2 {
				t.Fatalf("want Xvfb and xterm below kasmrt, found %v", started)
			}
			sent := time.Now()
			if err := cmd.Process.Signal(tt.sig); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			t.Logf("kasmrt ended %s after %v", time.Since(sent).Round(time.Millisecond), tt.sig)
			if code := cmd.ProcessState.ExitCode(); code != exitTestError {
				t.Errorf("exit %d (%v), want %d", code, err, exitTestError)
			}
			wantReport(t, reportDir, "interrupted", tt.reason)
			wantNoneLeft(t, started)
		})
	}
}

// TestReaderLeavingStdoutDoesNotKillTheRun pipes --json into a reader that
// leaves after two lines, as `kasmrt run --json | head -2` does: the run
// is not killed by SIGPIPE but goes on to its verdict and report, and
// leaves no process.
func TestReaderLeavingStdoutDoesNotKillTheRun(t *testing.T) {
	t.Parallel()
	need(t, "Xvfb", "xterm")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	scenario := testkit.WriteFile(t, dir, "s.yaml", strings.Replace(endingScenario, "wait: 25", "wait: 1", 1))
	reportDir := filepath.Join(dir, "report")
	cmd := exec.Command(kasmrtBinary(t), "run", scenario, "--json", "--report", reportDir)
	cmd.Env = append(os.Environ(), "DISPLAY=")
	cmd.Stdout = w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	br := bufio.NewReader(r)
	for range 2 {
		if _, err := br.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	started := proc.Descendants(cmd.Process.Pid)[1:]
	r.Close()
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		t.Fatalf("kasmrt was killed by %v", ws.Signal())
	}
	if code := cmd.ProcessState.ExitCode(); code != exitPass {
		t.Errorf("exit %d (%v), want %d", code, err, exitPass)
	}
	wantReport(t, reportDir, "completed", "")
	wantNoneLeft(t, started)
}

// TestKilledRuntimeLeavesNoChildren kills kasmrt with SIGKILL, which it
// cannot catch: the parent-death signal still ends the X server and the
// app, and the app's own children go with its terminal.
func TestKilledRuntimeLeavesNoChildren(t *testing.T) {
	t.Parallel()
	need(t, "Xvfb", "xterm")
	cmd, _ := startEnding(t, io.Discard, "--headless")
	started := proc.Descendants(cmd.Process.Pid)[1:]
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	wantNoneLeft(t, started)
}

// TestClosedConsoleTerminalEndsTheRun runs `kasmrt run --tui` in tmux and
// kills the session, as closing the terminal window does: kasmrt gets
// SIGHUP, writes a complete report naming it, and leaves nothing running.
func TestClosedConsoleTerminalEndsTheRun(t *testing.T) {
	t.Parallel()
	need(t, "tmux", "Xvfb", "xterm")
	dir := t.TempDir()
	scenario := testkit.WriteFile(t, dir, "ending.yaml", endingScenario)
	reportDir := filepath.Join(dir, "report")
	term := testkit.StartTerminal(t, "ending", 120, 36,
		"DISPLAY=", "KASM_RUNTIME_DEADLINE_S=60", kasmrtBinary(t), "run", scenario, "--tui", "--graphics", "none", "--report", reportDir)
	waitForWaitStep(t, reportDir, func() string { return term.Capture() })
	pid := term.PanePID()
	all := proc.Descendants(pid)
	term.Close()
	testkit.Eventually(t, testkit.ScreenWait, "kasmrt ends after its terminal was closed", func() bool { return !running(pid) })
	wantReport(t, reportDir, "interrupted", "hangup")
	wantNoneLeft(t, all)
}
