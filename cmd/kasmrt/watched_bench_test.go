package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/engine/model/modeltest"
)

// BenchmarkWatchedStep measures what watching a run costs it: the goal
// runs of BenchmarkGoalRunRSS (25 turns, observe_screen and press_key
// alternately on a 1280x800 xterm full of text, the model answering at
// once) headless, and with the live console in a 160x50 tmux terminal
// drawing block graphics, one of each in turn (A, B, A, B …, the first
// of each pair alternating), so a change in the machine's load falls on
// both. A turn is timed from one model request received to the next:
// the tool, the capture and everything the process does meanwhile,
// console included. It reports each way's median and p95 turn, their
// ratio, each way's peak RSS (VmHWM of the kasmrt process itself) and the
// median CPU time a run's own process used (its children's not counted),
// which the machine's load does not skew as it does the wall time.
// KASM_BENCH_KASMRT names another binary to measure.
func BenchmarkWatchedStep(b *testing.B) {
	need(b, "tmux", "Xvfb", "xterm")
	bin := measuredBinary(b)
	const turns = 25
	var headless, watched []time.Duration
	var headlessRSS, watchedRSS int
	var headlessCPU, watchedCPU []time.Duration
	i := 0
	for b.Loop() {
		for _, watch := range []bool{i%2 == 1, i%2 == 0} {
			dir := b.TempDir()
			scenario, operator, srv := goalRunFiles(b, dir, turns)
			if watch {
				u := watchedRun(b, bin, dir, scenario, operator)
				watchedRSS, watchedCPU = max(watchedRSS, u.peakKB), append(watchedCPU, u.cpu)
				watched = append(watched, turnGaps(b, srv, turns)...)
			} else {
				u := headlessRun(b, bin, dir, scenario, operator)
				headlessRSS, headlessCPU = max(headlessRSS, u.peakKB), append(headlessCPU, u.cpu)
				headless = append(headless, turnGaps(b, srv, turns)...)
			}
		}
		i++
	}
	hm, wm := quantileMS(headless, 0.5), quantileMS(watched, 0.5)
	b.ReportMetric(hm, "ms/headless-median")
	b.ReportMetric(quantileMS(headless, 0.95), "ms/headless-p95")
	b.ReportMetric(wm, "ms/watched-median")
	b.ReportMetric(quantileMS(watched, 0.95), "ms/watched-p95")
	b.ReportMetric(wm/hm, "watched/headless")
	b.ReportMetric(float64(headlessRSS)/1024, "MB/headless-rss")
	b.ReportMetric(float64(watchedRSS)/1024, "MB/watched-rss")
	b.ReportMetric(quantileMS(headlessCPU, 0.5), "cpu-ms/headless-run")
	b.ReportMetric(quantileMS(watchedCPU, 0.5), "cpu-ms/watched-run")
}

// turnGaps are the times between the model test server receiving one
// request and the next: a turn each.
func turnGaps(b *testing.B, srv *modeltest.Server, turns int) []time.Duration {
	b.Helper()
	reqs := srv.Requests()
	if len(reqs) != turns {
		b.Fatalf("%d model turns, want %d", len(reqs), turns)
	}
	gaps := make([]time.Duration, 0, len(reqs)-1)
	for k := 1; k < len(reqs); k++ {
		gaps = append(gaps, reqs[k].Received.Sub(reqs[k-1].Received))
	}
	return gaps
}

func quantileMS(d []time.Duration, q float64) float64 {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[int(float64(len(s)-1)*q)].Microseconds()) / 1000
}

// usage is what a kasmrt process used: its peak RSS in KiB and its CPU
// time, its children's not counted.
type usage struct {
	peakKB int
	cpu    time.Duration
}

// headlessRun runs kasmrt headless to its end and returns what its own
// process used.
func headlessRun(b *testing.B, bin, dir, scenario, operator string) usage {
	b.Helper()
	cmd := exec.Command(bin, "run", scenario, "-o", operator, "--headless", "--display", "-", "--report", filepath.Join(dir, "report"))
	cmd.Env = append(os.Environ(), "KASM_RUNTIME_VISION_ENDPOINT=")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		b.Fatalf("kasmrt run: %v", err)
	}
	u, err := usageUntilExit(cmd)
	if err != nil {
		b.Fatalf("kasmrt run: %v\n%s", err, out.Bytes())
	}
	return u
}

// watchedRun runs kasmrt with its live console in a 160x50 tmux terminal
// drawing block graphics, waits for the run's end, reads what the
// process used while the console still shows the run, and quits the
// console.
func watchedRun(b *testing.B, bin, dir, scenario, operator string) usage {
	b.Helper()
	reportDir := filepath.Join(dir, "report")
	socket := filepath.Join(dir, "tmux.sock")
	tmux := func(args ...string) (string, error) {
		out, err := exec.Command("tmux", append([]string{"-S", socket}, args...)...).CombinedOutput()
		return string(out), err
	}
	defer func() { _, _ = tmux("kill-server") }()
	if out, err := tmux("new-session", "-d", "-x", "160", "-y", "50", "-s", "watch",
		"env", "TERM=tmux-256color", "DISPLAY=", "KASM_RUNTIME_VISION_ENDPOINT=", bin, "run", scenario, "-o", operator,
		"--tui", "--graphics", "blocks", "--display", "-", "--report", reportDir); err != nil {
		b.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	out, err := tmux("list-panes", "-t", "watch", "-F", "#{pane_pid}")
	if err != nil {
		b.Fatalf("list-panes: %v\n%s", err, out)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		b.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		ev, _ := os.ReadFile(filepath.Join(reportDir, "events.jsonl"))
		if bytes.Contains(ev, []byte(`"kind":"run.ended"`)) {
			break
		}
		if time.Now().After(deadline) || !running(pid) {
			screen, _ := tmux("capture-pane", "-p", "-t", "watch")
			b.Fatalf("the run did not end in its console:\n%s", screen)
		}
		time.Sleep(50 * time.Millisecond)
	}
	hwm, err := peakRSSKB(pid)
	if err != nil {
		b.Fatal(err)
	}
	cpu, err := cpuTime(pid)
	if err != nil {
		b.Fatal(err)
	}
	if out, err := tmux("send-keys", "-t", "watch", "q"); err != nil {
		b.Fatalf("send-keys: %v\n%s", err, out)
	}
	for running(pid) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	return usage{peakKB: hwm, cpu: cpu}
}

// usageUntilExit waits for a started command and returns what its own
// process used: the most memory it held resident (VmHWM) and its CPU
// time, read from /proc/PID every 10 ms until it exits. Both only grow,
// so the last reading is the figure but for the last few milliseconds.
// wait4's rusage cannot say it: its ru_maxrss is the largest of the
// process and the children it waited for, which for an embedded display
// is the Xvfb, and its times include theirs.
func usageUntilExit(cmd *exec.Cmd) (usage, error) {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	pid := cmd.Process.Pid
	var u usage
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if kb, err := peakRSSKB(pid); err == nil {
			u.peakKB = max(u.peakKB, kb)
		}
		if cpu, err := cpuTime(pid); err == nil {
			u.cpu = max(u.cpu, cpu)
		}
		select {
		case err := <-done:
			if u.peakKB == 0 {
				return u, fmt.Errorf("no VmHWM read before the process ended (%v)", err)
			}
			return u, err
		case <-tick.C:
		}
	}
}

// cpuTime is the user and system CPU time process pid has used itself
// (utime and stime of /proc/PID/stat), in the kernel's clock ticks of
// 10 ms.
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, fmt.Errorf("read the CPU time of %d: %w", pid, err)
	}
	// The fields after the command's name, which may hold spaces, start
	// at the state (field 3): utime and stime are fields 14 and 15.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("read the CPU time of %d: %q", pid, s)
	}
	utime, err1 := strconv.Atoi(f[11])
	stime, err2 := strconv.Atoi(f[12])
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("read the CPU time of %d: %q", pid, s)
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil
}
