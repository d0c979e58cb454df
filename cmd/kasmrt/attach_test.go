package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
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

// TestAttachToAServerInTmux attaches a console to kasmrt serve with two
// open sessions: the table lists both, enter watches one and shows its
// agent's steps, esc goes back, and the other shows its own.
func TestAttachToAServerInTmux(t *testing.T) {
	need(t, "tmux", "Xvfb", "xterm")
	dir := t.TempDir()
	scen := filepath.Join(dir, "scenarios")
	if err := os.MkdirAll(scen, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"first.yaml", "second.yaml"} {
		if err := os.WriteFile(filepath.Join(scen, name), []byte(mcpScenario), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	_, endpoint := startServe(t, scen, filepath.Join(dir, "reports"), listenToken)
	root := strings.TrimSuffix(endpoint, "/mcp")
	post := func(path, body string) string {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, root+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+listenToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode/100 != 2 {
			t.Fatalf("POST %s: %s %s", path, resp.Status, b)
		}
		return string(b)
	}
	ids := map[string]string{}
	for name, call := range map[string]string{"first.yaml": `{"tool":"observe_screen"}`, "second.yaml": `{"tool":"wait","args":{"seconds":0.2}}`} {
		var opened struct{ Session string }
		if err := json.Unmarshal([]byte(post("/v1/sessions", `{"scenario":"`+name+`"}`)), &opened); err != nil {
			t.Fatal(err)
		}
		ids[name] = opened.Session
		post("/v1/sessions/"+opened.Session+"/calls", call)
	}
	socket := filepath.Join(dir, "tmux.sock")
	tmux := func(args ...string) (string, error) {
		b, err := exec.Command("tmux", append([]string{"-S", socket}, args...)...).CombinedOutput()
		return string(b), err
	}
	t.Cleanup(func() { _, _ = tmux("kill-server") })
	if o, err := tmux("new-session", "-d", "-x", "160", "-y", "40", "-s", "srv",
		"env", "TERM=tmux-256color", envToken+"="+listenToken, kasmrtBinary(t), "attach", root, "--graphics", "blocks"); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, o)
	}
	screen := func(want string, present bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			o, err := tmux("capture-pane", "-p", "-t", "srv")
			if err == nil && strings.Contains(o, want) == present {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%q present=%v never held; last screen:\n%s", want, !present, o)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	keys := func(ks ...string) {
		t.Helper()
		for _, k := range ks {
			if o, err := tmux("send-keys", "-t", "srv", k); err != nil {
				t.Fatalf("send-keys %s: %v\n%s", k, err, o)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	screen("first.yaml "+ids["first.yaml"][:8], true)
	screen("second.yaml "+ids["second.yaml"][:8], true)
	// The table sorts by scenario: first.yaml is the first row.
	keys("Enter")
	screen("1 observe_screen", true)
	keys("Escape")
	screen("second.yaml "+ids["second.yaml"][:8], true)
	keys("Down", "Enter")
	screen("1 wait", true)
	screen("1 observe_screen", false)
	keys("Escape", "q")
	deadline := time.Now().Add(10 * time.Second)
	for {
		if o, err := tmux("list-sessions"); err != nil || !strings.Contains(o, "srv") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("attach did not quit on q")
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Leaving the console left both sessions open.
	var list struct{ Sessions []struct{ Session string } }
	req, _ := http.NewRequest(http.MethodGet, root+"/v1/sessions", nil)
	req.Header.Set("Authorization", "Bearer "+listenToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || len(list.Sessions) != 2 {
		t.Errorf("sessions after the console left: %+v %v", list, err)
	}
}
