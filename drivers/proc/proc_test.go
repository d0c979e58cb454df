package proc

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestRunCommandExitCodes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		spec       CommandSpec
		wantCode   int
		wantStdout string
		wantStderr string
		wantStatus string
	}{
		{"success", CommandSpec{Argv: []string{"echo", "hi"}}, 0, "hi\n", "", "exited with status 0"},
		{"failure", CommandSpec{Shell: "echo out; echo err >&2; exit 3"}, 3, "out\n", "err\n", "exited with status 3"},
		{"signal", CommandSpec{Shell: "kill -SEGV $$"}, -1, "", "", "killed by signal SEGV"},
		{"env and dir", CommandSpec{Shell: `printf %s "$KASM_X:$(pwd)"`, Env: []string{"KASM_X=42"}, Dir: "/"}, 0, "42:/", "", "exited with status 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := RunCommand(context.Background(), tt.spec)
			if err != nil {
				t.Fatalf("RunCommand: %v", err)
			}
			if res.ExitCode != tt.wantCode || string(res.Stdout) != tt.wantStdout || string(res.Stderr) != tt.wantStderr {
				t.Errorf("got code %d stdout %q stderr %q, want %d %q %q", res.ExitCode, res.Stdout, res.Stderr, tt.wantCode, tt.wantStdout, tt.wantStderr)
			}
			if got := res.Status.String(); got != tt.wantStatus {
				t.Errorf("status %q, want %q", got, tt.wantStatus)
			}
			if res.TimedOut {
				t.Error("TimedOut set for a command that finished")
			}
		})
	}
}

func TestRunCommandNotFound(t *testing.T) {
	t.Parallel()
	_, err := RunCommand(context.Background(), CommandSpec{Argv: []string{"kasm-no-such-command"}})
	if err == nil || !strings.Contains(err.Error(), "kasm-no-such-command") || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("error %v, want one naming the command and saying not found", err)
	}
}

func TestRunCommandTimeoutKillsHang(t *testing.T) {
	t.Parallel()
	res, err := RunCommand(context.Background(), CommandSpec{Shell: "echo started; exec sleep 30", Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatalf("RunCommand: %v", err)
	}
	if !res.TimedOut || res.ExitCode != -1 {
		t.Errorf("TimedOut %v code %d, want true -1", res.TimedOut, res.ExitCode)
	}
	if string(res.Stdout) != "started\n" {
		t.Errorf("stdout %q, want output before the kill kept", res.Stdout)
	}
	if res.Duration > 10*time.Second {
		t.Errorf("took %v: the timeout did not end the command", res.Duration)
	}
}

// A child that ignores SIGTERM, leaves the shell behind and holds stdout
// open must neither make RunCommand hang nor survive it.
func TestRunCommandKillsStubbornGrandchild(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	script := `sh -c 'trap "" TERM; echo $$ > ` + pidFile + `; while :; do sleep 1; done' & sleep 0.2; echo parent done`
	res, err := RunCommand(context.Background(), CommandSpec{Shell: script, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatalf("RunCommand: %v", err)
	}
	if res.TimedOut {
		t.Errorf("TimedOut: the command itself finished, only its child lingered")
	}
	if !strings.Contains(string(res.Stdout), "parent done") {
		t.Errorf("stdout %q", res.Stdout)
	}
	assertGone(t, pidFile)
}

func TestRunCommandTimeoutKillsStubbornGrandchild(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	script := `sh -c 'trap "" TERM; echo $$ > ` + pidFile + `; while :; do sleep 1; done' & wait`
	res, err := RunCommand(context.Background(), CommandSpec{Shell: script, Timeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatalf("RunCommand: %v", err)
	}
	if !res.TimedOut {
		t.Error("TimedOut not set")
	}
	assertGone(t, pidFile)
}

func assertGone(t *testing.T, pidFile string) {
	t.Helper()
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("grandchild never wrote its pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("pid file %q: %v", b, err)
	}
	if state, _, ok := readStat(pid); ok && state != 'Z' {
		t.Errorf("grandchild %d still running (state %c)", pid, state)
	}
}

func TestRunCommandFloodKeepsCap(t *testing.T) {
	t.Parallel()
	// 64 MiB on stdout and 1 MiB on stderr; both must be drained.
	res, err := RunCommand(context.Background(), CommandSpec{
		Shell:     "head -c 67108864 /dev/zero; head -c 1048576 /dev/zero >&2; echo end >&2",
		Timeout:   60 * time.Second,
		OutputCap: 1000,
	})
	if err != nil {
		t.Fatalf("RunCommand: %v", err)
	}
	if res.TimedOut || res.ExitCode != 0 {
		t.Fatalf("TimedOut %v code %d: the flood blocked the command", res.TimedOut, res.ExitCode)
	}
	if len(res.Stdout) != 1000 || !res.StdoutTruncated || len(res.Stderr) != 1000 || !res.StderrTruncated {
		t.Errorf("kept %d/%d bytes truncated %v/%v, want 1000 each, truncated", len(res.Stdout), len(res.Stderr), res.StdoutTruncated, res.StderrTruncated)
	}
}

func TestRunCommandDefaultCap(t *testing.T) {
	t.Parallel()
	res, err := RunCommand(context.Background(), CommandSpec{Shell: "head -c 100000 /dev/zero"})
	if err != nil {
		t.Fatalf("RunCommand: %v", err)
	}
	if len(res.Stdout) != DefaultOutputCap || !res.StdoutTruncated {
		t.Errorf("kept %d truncated %v, want %d true", len(res.Stdout), res.StdoutTruncated, DefaultOutputCap)
	}
}

func TestRunCommandContextCancel(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	res, err := RunCommand(ctx, CommandSpec{Argv: []string{"sleep", "30"}})
	if err != nil {
		t.Fatalf("RunCommand: %v", err)
	}
	if !res.TimedOut || res.Status.Signal != syscall.SIGKILL {
		t.Errorf("TimedOut %v status %v, want killed by signal KILL", res.TimedOut, res.Status)
	}
}

// syncBuffer is a bytes.Buffer safe to read while the pump writes.
type syncBuffer struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes []string
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.writes = append(b.writes, string(p))
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestStartNotFound(t *testing.T) {
	t.Parallel()
	_, err := Start(context.Background(), Spec{Argv: []string{"xterm-nope"}})
	if err == nil || !strings.HasPrefix(err.Error(), "launch xterm-nope: ") || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("error %v, want launch xterm-nope: ... not found", err)
	}
}

func TestStartExitStatusAndOutput(t *testing.T) {
	t.Parallel()
	out := &syncBuffer{}
	p, err := Start(context.Background(), Spec{Argv: []string{"sh", "-c", "echo one; echo two >&2; printf tail; exit 7"}, Output: out})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	<-p.Done()
	if p.Alive() {
		t.Error("Alive after Done")
	}
	if err := p.Stop(time.Second); err != nil {
		t.Errorf("Stop after exit: %v", err)
	}
	if got := p.ExitStatus().String(); got != "exited with status 7" {
		t.Errorf("status %q", got)
	}
	if got := out.String(); got != "one\ntwo\ntail" {
		t.Errorf("output %q", got)
	}
	for _, w := range out.writes[:2] {
		if !strings.HasSuffix(w, "\n") {
			t.Errorf("write %q is not a whole line", w)
		}
	}
}

func TestStopKillsGroup(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	out := &syncBuffer{}
	p, err := Start(context.Background(), Spec{
		Argv:   []string{"sh", "-c", `sh -c 'trap "" TERM; echo $$ > ` + pidFile + `; while :; do sleep 1; done' & echo ready; wait`},
		Output: out,
	})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	if !p.Alive() || p.ExitStatus().String() != "running" {
		t.Fatalf("not running after Start: %v", p.ExitStatus())
	}
	waitFor(t, func() bool { _, err := os.Stat(pidFile); return err == nil && strings.Contains(out.String(), "ready") })
	if err := p.Stop(200 * time.Millisecond); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := p.Stop(200 * time.Millisecond); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	if p.Alive() {
		t.Error("Alive after Stop")
	}
	if got := p.ExitStatus().String(); got != "killed by signal TERM" {
		t.Errorf("status %q, want killed by signal TERM", got)
	}
	if groupAlive(p.PID()) {
		t.Error("process group still has running members")
	}
	assertGone(t, pidFile)
}

func TestStartContextEndStopsGroup(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	p, err := Start(ctx, Spec{Argv: []string{"sleep", "30"}})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	cancel()
	select {
	case <-p.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("process still running 10 s after its context ended")
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
