package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAttachInTmux serves a goal run against xterm with run --listen (its
// own process) and attaches two consoles to it in real terminals: the
// run's steps and question appear in both; an answer typed in one's inbox
// reaches the run and leaves the other's inbox with nothing waiting; an
// abort from the other reaches the engine, and both show the verdict.
func TestAttachInTmux(t *testing.T) {
	need(t, "tmux", "Xvfb", "xterm")
	model := listenModel(t)
	bin := kasmrtBinary(t)
	dir := t.TempDir()
	scenario := filepath.Join(dir, "listen.yaml")
	if err := os.WriteFile(scenario, []byte(listenScenario), 0o600); err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(dir, "report")
	runCmd := exec.Command(bin, "run", scenario, "--headless", "--display", "-", "--listen", "127.0.0.1:0", "--report", report)
	runCmd.Env = append(os.Environ(), "KASM_RUNTIME_VISION_ENDPOINT="+model.URL(), envToken+"="+listenToken, "DISPLAY=")
	stderr, err := runCmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := runCmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if _, rest, ok := strings.Cut(sc.Text(), "kasmrt attach http://"); ok {
				addr <- strings.TrimSuffix(rest, ")")
			}
		}
		exited <- runCmd.Wait()
	}()
	t.Cleanup(func() { _ = runCmd.Process.Kill() })
	var server string
	select {
	case server = <-addr:
	case <-time.After(30 * time.Second):
		t.Fatal("the run never said where it serves")
	}

	socket := filepath.Join(dir, "tmux.sock")
	tmux := func(args ...string) (string, error) {
		b, err := exec.Command("tmux", append([]string{"-S", socket}, args...)...).CombinedOutput()
		return string(b), err
	}
	t.Cleanup(func() { _, _ = tmux("kill-server") })
	for _, name := range []string{"one", "two"} {
		if o, err := tmux("new-session", "-d", "-x", "140", "-y", "40", "-s", name,
			"env", "TERM=tmux-256color", envToken+"="+listenToken, bin, "attach", "http://"+server, "--graphics", "blocks"); err != nil {
			t.Fatalf("tmux new-session: %v\n%s", err, o)
		}
	}
	screen := func(name, want string, present bool) string {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			o, err := tmux("capture-pane", "-p", "-t", name)
			if err == nil && strings.Contains(o, want) == present {
				return o
			}
			if time.Now().After(deadline) {
				t.Fatalf("console %s: %q present=%v never held; last screen:\n%s", name, want, !present, o)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	keys := func(name string, ks ...string) {
		t.Helper()
		for _, k := range ks {
			if o, err := tmux("send-keys", "-t", name, k); err != nil {
				t.Fatalf("send-keys %s: %v\n%s", k, err, o)
			}
			time.Sleep(150 * time.Millisecond)
		}
	}
	for _, name := range []string{"one", "two"} {
		screen(name, "listen xterm", true)
		screen(name, "1 observe_screen", true)
		screen(name, "q1 (waiting)", true)
	}
	keys("one", "i")
	if o, err := tmux("send-keys", "-t", "one", "-l", "the friendly one"); err != nil {
		t.Fatalf("type the answer: %v\n%s", err, o)
	}
	keys("one", "Enter")
	screen("two", "q1 by attach: the friendly one", true)
	screen("two", "(waiting)", false)
	screen("one", "(waiting)", false)
	screen("two", "3 wait", true)
	keys("two", "x", "y")
	for _, name := range []string{"one", "two"} {
		screen(name, "test-error (aborted)", true)
	}
	select {
	case err := <-exited:
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitTestError {
			t.Errorf("the run ended with %v, want exit %d", err, exitTestError)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the run did not end after the abort")
	}
	rep, _ := readReport(t, report)
	if rep.Verdict != "test-error" || rep.Outcome != "aborted" || len(rep.Questions) != 1 || rep.Questions[0].Answer != "the friendly one" {
		t.Errorf("report: verdict %s (%s), questions %+v", rep.Verdict, rep.Outcome, rep.Questions)
	}
}
