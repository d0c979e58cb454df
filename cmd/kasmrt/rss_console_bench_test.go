package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkConsoleRunRSS measures the peak resident memory of `kasmrt run`
// with its live console, which runs in the run's own process, for the
// goal runs of BenchmarkGoalRunRSS: in a 160x50 tmux terminal with block
// graphics, so the console draws every screen the run captures. The peak
// is read once the run has ended, while the console still shows it.
// KASM_BENCH_KASMRT names another binary to measure.
func BenchmarkConsoleRunRSS(b *testing.B) {
	need(b, "tmux", "Xvfb", "xterm")
	bin := measuredBinary(b)
	for _, turns := range []int{13, 25, 49} {
		b.Run(fmt.Sprintf("turns-%d", turns), func(b *testing.B) {
			var peak int
			for b.Loop() {
				dir := b.TempDir()
				scenario, operator, srv := goalRunFiles(b, dir, turns)
				reportDir := filepath.Join(dir, "report")
				socket := filepath.Join(dir, "tmux.sock")
				tmux := func(args ...string) (string, error) {
					out, err := exec.Command("tmux", append([]string{"-S", socket}, args...)...).CombinedOutput()
					return string(out), err
				}
				if out, err := tmux("new-session", "-d", "-x", "160", "-y", "50", "-s", "rss",
					"env", "TERM=tmux-256color", "DISPLAY=", "KASM_RUNTIME_VISION_ENDPOINT=", bin, "run", scenario, "-o", operator,
					"--tui", "--graphics", "blocks", "--display", "-", "--report", reportDir); err != nil {
					b.Fatalf("tmux new-session: %v\n%s", err, out)
				}
				out, err := tmux("list-panes", "-t", "rss", "-F", "#{pane_pid}")
				if err != nil {
					b.Fatalf("list-panes: %v\n%s", err, out)
				}
				pid, err := strconv.Atoi(strings.TrimSpace(out))
				if err != nil {
					b.Fatal(err)
				}
				deadline := time.Now().Add(2 * time.Minute)
				for {
					ev, _ := os.ReadFile(filepath.Join(reportDir, "events.jsonl"))
					if bytes.Contains(ev, []byte(`"kind":"run.ended"`)) {
						break
					}
					if time.Now().After(deadline) || !running(pid) {
						screen, _ := tmux("capture-pane", "-p", "-t", "rss")
						_, _ = tmux("kill-server")
						b.Fatalf("the run did not end in its console:\n%s", screen)
					}
					time.Sleep(100 * time.Millisecond)
				}
				hwm, err := peakRSSKB(pid)
				if err != nil {
					b.Fatal(err)
				}
				peak = max(peak, hwm)
				if out, err := tmux("send-keys", "-t", "rss", "q"); err != nil {
					b.Fatalf("send-keys: %v\n%s", err, out)
				}
				for running(pid) && time.Now().Before(deadline) {
					time.Sleep(50 * time.Millisecond)
				}
				_, _ = tmux("kill-server")
				if n := len(srv.Requests()); n != turns {
					b.Fatalf("%d model turns, want %d", n, turns)
				}
			}
			b.ReportMetric(float64(peak)/1024, "MB/peak-rss")
		})
	}
}

// peakRSSKB is the most memory process pid has held resident (VmHWM), in
// KiB.
func peakRSSKB(pid int) (int, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, fmt.Errorf("read the peak RSS of %d: %w", pid, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			return strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
		}
	}
	return 0, fmt.Errorf("read the peak RSS of %d: no VmHWM", pid)
}
