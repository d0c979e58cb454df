package main

// Hostile input and misconfiguration: each test here replays one way an
// adversarial or careless user broke the command line, and fails without
// the fix that stops it.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/drivers/x11"
	"github.com/kasmrt/kasmrt/engine/events"
)

// TestEmbeddedSessionIsTheDefault sets DISPLAY to a live X server, as every
// desktop terminal does, and checks that a run without --display starts its
// own Xvfb instead of launching the app on that server.
func TestEmbeddedSessionIsTheDefault(t *testing.T) {
	need(t, "Xvfb", "xterm")
	operatorDesktop, err := x11.StartServer(context.Background(), x11.DisplayOptions{Width: 640, Height: 480})
	if err != nil {
		t.Fatalf("start the stand-in for the operator's desktop: %v", err)
	}
	t.Cleanup(func() { operatorDesktop.Close() })
	t.Setenv("DISPLAY", operatorDesktop.Display())
	t.Setenv("KASM_RUNTIME_DEADLINE_S", "60")
	path, dir := runScenarioFile(t, `name: embedded default
app:
  command: [xterm, -class, KasmEmbedded, -e, sh, -c, 'echo "$DISPLAY" > shown.txt; exec sleep 3600']
  window: {class: KasmEmbedded}
  startup_timeout_s: 10
steps:
  - observe_screen: {}
`)
	reportDir := filepath.Join(dir, "report")
	code, out, errs := kasmrt(t, "run", path, "--headless", "--report", reportDir)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	shown, err := os.ReadFile(filepath.Join(dir, "shown.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(shown)); got == operatorDesktop.Display() || got == "" {
		t.Errorf("the app ran on DISPLAY=%q; the operator's display is %s", got, operatorDesktop.Display())
	}
	var started *events.DisplayStarted
	for _, e := range readEventsFile(t, reportDir) {
		if d, ok := e.Data.(events.DisplayStarted); ok {
			started = &d
		}
	}
	if started == nil || !started.Owned {
		t.Errorf("session.started %+v: want an owned (embedded) session", started)
	}
}

// TestHelpNamesRealFiles checks that every example path --help mentions
// exists and that it says which display a run uses.
func TestHelpNamesRealFiles(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--help"}, {"run", "--help"}} {
		code, out, errs := kasmrt(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		paths := regexp.MustCompile(`scenarios/examples/[\w.-]+`).FindAllString(out, -1)
		for _, p := range paths {
			if _, err := os.Stat(filepath.Join("../..", p)); err != nil {
				t.Errorf("%v names %s: %v", args, p, err)
			}
		}
		if !strings.Contains(out, "$DISPLAY") || !strings.Contains(out, "never") {
			t.Errorf("%v does not say that $DISPLAY alone is never used:\n%s", args, out)
		}
	}
}

// readEventsFile reads a report's events.jsonl.
func readEventsFile(t *testing.T, reportDir string) []events.Event {
	t.Helper()
	evs, err := events.ReadFile(filepath.Join(reportDir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// TestShellPlaceholderIsNotCode runs the injection from the hostile-input
// report: WHO='x; touch pwned' must never run touch. Written as ${WHO} in
// the command it is refused before anything launches; passed through the
// tool's env: a real declared tool prints it as data.
func TestShellPlaceholderIsNotCode(t *testing.T) {
	need(t, "Xvfb", "xterm")
	t.Setenv("WHO", "x; touch pwned")
	t.Setenv("KASM_RUNTIME_DEADLINE_S", "60")
	const app = `app:
  command: [xterm, -class, KasmInject, -e, sh, -c, 'exec sleep 3600']
  window: {class: KasmInject}
  startup_timeout_s: 10
steps:
  - observe_screen: {}
  - greet: {}
`
	t.Run("placeholder in the command", func(t *testing.T) {
		path, dir := runScenarioFile(t, "name: inject refused\n"+app+`tools:
  greet:
    run: shell
    command: echo hello ${WHO}
`)
		code, out, errs := kasmrt(t, "run", path, "--headless", "--report", filepath.Join(dir, "report"))
		if code != 3 {
			t.Errorf("exit %d, want 3\nstdout:\n%s\nstderr:\n%s", code, out, errs)
		}
		if !strings.Contains(errs, "scenario.yaml:12:14: tools.greet.command: ${WHO} in a run: shell command") {
			t.Errorf("stderr does not point at the placeholder:\n%s", errs)
		}
		if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
			t.Error("the value ran as a command")
		}
	})
	t.Run("placeholder in env", func(t *testing.T) {
		path, dir := runScenarioFile(t, "name: inject as data\n"+app+`tools:
  greet:
    run: shell
    env: {WHO: "${WHO}"}
    command: echo hello "$WHO"
`)
		code, out, errs := kasmrt(t, "run", path, "--headless", "--report", filepath.Join(dir, "report"))
		if code != 0 {
			t.Errorf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, out, errs)
		}
		if !strings.Contains(out, "greet succeeded: hello x; touch pwned") {
			t.Errorf("the tool did not print the value as data:\n%s", out)
		}
		if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
			t.Error("the value ran as a command")
		}
	})
}

// TestDefaultReportDirsAreNeverShared creates default report directories
// for the same scenario in the same second, and one for a name far longer
// than a file name may be: each is new, exclusive and usable.
func TestDefaultReportDirsAreNeverShared(t *testing.T) {
	t.Parallel()
	base := filepath.Join(t.TempDir(), "reports")
	now := time.Date(2026, 12, 1, 19, 0, 0, 0, time.UTC)
	seen := map[string]bool{}
	for range 3 {
		d, err := newDefaultReportDir(base, "same second", now)
		if err != nil {
			t.Fatal(err)
		}
		if seen[d.path] {
			t.Fatalf("%s handed out twice", d.path)
		}
		seen[d.path] = true
		if st, err := os.Stat(d.path); err != nil || !st.IsDir() || !d.created {
			t.Errorf("%s was not created: %v", d.path, err)
		}
	}
	long, err := newDefaultReportDir(base, strings.Repeat("a very long scenario name ", 40), now)
	if err != nil {
		t.Fatalf("a long scenario name gives no directory: %v", err)
	}
	if n := len(filepath.Base(long.path)); n > 100 {
		t.Errorf("default directory name is %d bytes: %s", n, filepath.Base(long.path))
	}
}

// TestTwoRunsInTheSameSecond starts two runs of one scenario at once with
// the default report directory, as two CI jobs in one workspace would:
// each gets its own directory and its own complete event stream.
func TestTwoRunsInTheSameSecond(t *testing.T) {
	t.Parallel()
	need(t, "Xvfb", "xterm")
	bin := kasmrtBinary(t)
	path, dir := runScenarioFile(t, `name: same second`+runTestXterm+`steps:
  - observe_screen: {}
`)
	cmds := make([]*exec.Cmd, 2)
	for i := range cmds {
		cmds[i] = exec.Command(bin, "run", path, "--headless")
		cmds[i].Dir = dir
		cmds[i].Env = append(os.Environ(), "KASM_RUNTIME_DEADLINE_S=60")
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Errorf("run: %v", err)
		}
	}
	dirs, _ := filepath.Glob(filepath.Join(dir, "reports", "same-second-*"))
	if len(dirs) != 2 {
		t.Fatalf("report directories %v, want two", dirs)
	}
	for _, d := range dirs {
		evs := readEventsFile(t, d)
		runs := 0
		for _, e := range evs {
			if e.Kind == events.KindRunStarted {
				runs++
			}
		}
		if runs != 1 || evs[len(evs)-1].Kind != events.KindRunEnded {
			t.Errorf("%s holds %d runs' events, ending with %s", d, runs, evs[len(evs)-1].Kind)
		}
	}
}

// TestReportFlagRefusals names report directories that are used or
// unusable: each is exit 3 before anything launches, and an existing
// directory is left as it was.
func TestReportFlagRefusals(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	used := filepath.Join(root, "used")
	notReport := filepath.Join(root, "notes")
	file := filepath.Join(root, "file")
	for p, content := range map[string]string{filepath.Join(used, "events.jsonl"): "{}\n", filepath.Join(notReport, "todo.txt"): "keep me\n", file: "x"} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name  string
		flags []string
		errs  string
	}{
		{"non-empty directory", []string{"--report", used}, "the directory is not empty; give --overwrite"},
		{"overwrite a directory without a report", []string{"--report", notReport, "--overwrite"}, "holds no kasmrt report"},
		{"a file", []string{"--report", file}, "it exists and is not a directory"},
		{"below a file", []string{"--report", filepath.Join(file, "sub")}, "sub: not a directory"},
		{"not creatable", []string{"--report", "/proc/kasmrt-report"}, "--report /proc/kasmrt-report: cannot create it"},
		{"display with shell syntax", []string{"--report", filepath.Join(root, "fresh"), "--display", ":98; touch pwned"}, "--display: not an X display name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path, dir := runScenarioFile(t, "name: refused\napp: {command: [sh, -c, 'touch $DIR/launched']}\nsteps: [{observe_screen: {}}]\n")
			for _, sub := range []string{"run", "validate"} {
				args := append([]string{sub, path}, tt.flags...)
				if sub == "run" {
					args = append(args, "--headless")
				}
				code, out, errs := kasmrt(t, args...)
				if code != 3 || !strings.Contains(errs, tt.errs) {
					t.Errorf("%s: exit %d, want 3 and %q\nstdout:\n%s\nstderr:\n%s", sub, code, tt.errs, out, errs)
				}
				if strings.Contains(errs, "panic") {
					t.Errorf("%s panicked:\n%s", sub, errs)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "launched")); err == nil {
				t.Error("the app was launched")
			}
			if _, err := os.Stat(filepath.Join(root, "fresh")); err == nil {
				t.Error("a report directory was made")
			}
		})
	}
	if b, err := os.ReadFile(filepath.Join(notReport, "todo.txt")); err != nil || string(b) != "keep me\n" {
		t.Errorf("a refused directory was changed: %q, %v", b, err)
	}
}

// TestOverwriteKeepsTheInputs gives --overwrite the directory that holds
// the scenario and an earlier report: it is refused, and the scenario
// survives.
func TestOverwriteKeepsTheInputs(t *testing.T) {
	t.Parallel()
	path, dir := runScenarioFile(t, "name: keep\napp: {command: [sh, -c, 'touch $DIR/launched']}\nsteps: [{observe_screen: {}}]\n")
	if err := os.WriteFile(filepath.Join(dir, "events.jsonl"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"validate", "run"} {
		code, out, errs := kasmrt(t, sub, path, "--report", dir, "--overwrite", "--display", "-")
		if code != 3 || !strings.Contains(errs, "holds "+path+", which --overwrite would delete") {
			t.Errorf("%s: exit %d, want 3\nstdout:\n%s\nstderr:\n%s", sub, code, out, errs)
		}
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("the scenario is gone: %v", err)
	}
}

// TestOverwriteReplacesAReport runs into a directory holding an earlier
// report with --overwrite: the old files are gone, the new report is whole.
func TestOverwriteReplacesAReport(t *testing.T) {
	t.Parallel()
	need(t, "Xvfb", "xterm")
	path, dir := runScenarioFile(t, `name: overwrite`+runTestXterm+`steps:
  - observe_screen: {}
`)
	reportDir := filepath.Join(dir, "report")
	if err := os.MkdirAll(filepath.Join(reportDir, "screens"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeTree(t, reportDir, []string{"manifest.json"})
	for _, name := range []string{"events.jsonl", "screens/0099.png"} {
		if err := os.WriteFile(filepath.Join(reportDir, name), []byte("stale\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errs := kasmrt(t, "run", path, "--headless", "--report", reportDir, "--overwrite")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(reportDir, "screens", "0099.png")); err == nil {
		t.Error("a stale screen survived --overwrite")
	}
	if evs := readEventsFile(t, reportDir); evs[0].Kind != events.KindRunStarted {
		t.Errorf("events.jsonl starts with %s", evs[0].Kind)
	}
}

// TestBusyInboxPortRefused gives inbox.listen an address another process
// holds: the run says so and exits 3 before anything launches, instead of
// logging it while ask_human waits out the deadline.
func TestBusyInboxPortRefused(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	path, dir := runScenarioFile(t, "name: busy port\napp: {command: [sh, -c, 'touch $DIR/launched']}\nsteps: [{observe_screen: {}}]\n")
	op := filepath.Join(dir, "operator.yaml")
	if err := os.WriteFile(op, []byte("inbox: {session_token: t0ken-abc, listen: '"+ln.Addr().String()+"'}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	reportDir := filepath.Join(dir, "report")
	code, out, errs := kasmrt(t, "run", path, "-o", op, "--headless", "--report", reportDir)
	if code != 3 || !strings.Contains(errs, "serve the inbox on "+ln.Addr().String()+" (inbox.listen)") || !strings.Contains(errs, "address already in use") {
		t.Errorf("exit %d, want 3 naming the busy address\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "launched")); err == nil {
		t.Error("the app was launched")
	}
	if _, err := os.Stat(reportDir); err == nil {
		t.Error("a report directory was left behind")
	}
}

// TestFIFOScenarioDoesNotBlock names a FIFO as the scenario: validate and
// run refuse it at once rather than waiting for a writer.
func TestFIFOScenarioDoesNotBlock(t *testing.T) {
	t.Parallel()
	fifo := filepath.Join(t.TempDir(), "scenario.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"validate", "run"} {
		done := make(chan string, 1)
		go func() {
			code, _, errs := kasmrt(t, sub, fifo, "--display", "-")
			done <- fmt.Sprintf("exit %d: %s", code, errs)
		}()
		select {
		case got := <-done:
			if !strings.HasPrefix(got, "exit 3: ") || !strings.Contains(got, "not a regular file (a FIFO)") {
				t.Errorf("%s: %s", sub, got)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s blocked on a FIFO", sub)
		}
	}
}

// TestValidateWarnsOfAnExposedInbox gives inbox.listen an address other
// machines can reach: validate accepts it and says so, with its position.
func TestValidateWarnsOfAnExposedInbox(t *testing.T) {
	t.Parallel()
	path, dir := runScenarioFile(t, "name: exposed\napp: {command: [xterm]}\nsteps: [{observe_screen: {}}]\n")
	op := filepath.Join(dir, "operator.yaml")
	if err := os.WriteFile(op, []byte("inbox:\n  session_token: t0ken-abc\n  listen: ':8765'\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := kasmrt(t, "validate", path, "-o", op)
	if code != 0 || !strings.Contains(errs, "warning: "+op+":3:3: inbox.listen: :8765 is reachable from other machines") {
		t.Errorf("exit %d, want 0 and a positioned warning\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
}

// TestFlagFilesOnlyRegular names a FIFO for the files run reads or writes
// besides the scenario: each is refused at once, exit 3, instead of the
// run hanging on the FIFO where Ctrl-C cannot reach it.
func TestFlagFilesOnlyRegular(t *testing.T) {
	t.Parallel()
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	path, _ := runScenarioFile(t, "name: flags\napp: {command: [xterm]}\nsteps: [{observe_screen: {}}]\n")
	for _, flag := range []string{"--replay-model", "--record-model", "--theme"} {
		done := make(chan string, 1)
		go func() {
			code, _, errs := kasmrt(t, "run", path, "--headless", "--display", "-", flag, fifo)
			done <- fmt.Sprintf("exit %d: %s", code, errs)
		}()
		select {
		case got := <-done:
			if !strings.HasPrefix(got, "exit 3: ") || !strings.Contains(got, flag+" "+fifo+": not a") {
				t.Errorf("%s FIFO: %s", flag, got)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s FIFO: the run blocked", flag)
		}
	}
}

// TestCtrlCAtEveryStage sends SIGINT to a real kasmrt process at each stage
// a run can be waiting in — the app's window that never comes, a wait
// step, a declared tool that hangs — and checks that it ends promptly as a
// test-error with a complete report and nothing left running.
func TestCtrlCAtEveryStage(t *testing.T) {
	t.Parallel()
	need(t, "Xvfb", "xterm")
	bin := kasmrtBinary(t)
	stages := []struct {
		name     string
		scenario string
		after    events.Kind // SIGINT once this event is printed
		tool     string      // ... for this tool, when a step
	}{
		{"waiting for the window", `name: no window
app:
  command: [sleep, "3600"]
  startup_timeout_s: 120
steps: [{observe_screen: {}}]
`, events.KindAppLaunched, ""},
		{"in a wait step", `name: long wait` + runTestXterm + `steps:
  - observe_screen: {}
  - wait: 30
`, events.KindStepStarted, "wait"},
		{"in a declared tool", `name: hanging tool` + runTestXterm + `steps:
  - observe_screen: {}
  - hang: {}
tools:
  hang:
    run: shell
    command: sleep 3600
    timeout_s: 600
`, events.KindStepStarted, "hang"},
	}
	for _, st := range stages {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			path, dir := runScenarioFile(t, st.scenario)
			reportDir := filepath.Join(dir, "report")
			cmd := exec.Command(bin, "run", path, "--json", "--report", reportDir)
			cmd.Env = append(os.Environ(), "KASM_RUNTIME_DEADLINE_S=600")
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(stdout)
			sc.Buffer(nil, 1<<20)
			signalled := false
			for sc.Scan() {
				var e events.Event
				if json.Unmarshal(sc.Bytes(), &e) == nil && !signalled && e.Kind == st.after && (st.tool == "" || e.Tool == st.tool) {
					signalled = true
					if err := cmd.Process.Signal(os.Interrupt); err != nil {
						t.Fatal(err)
					}
				}
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err = <-done:
			case <-time.After(60 * time.Second):
				cmd.Process.Kill()
				t.Fatal("kasmrt did not end after Ctrl-C")
			}
			if !signalled {
				t.Fatalf("the run never reached the stage (%v)", err)
			}
			if code := cmd.ProcessState.ExitCode(); code != exitTestError {
				t.Errorf("exit %d, want %d", code, exitTestError)
			}
			var rep struct {
				Verdict events.Verdict
				Outcome string
			}
			b, err := os.ReadFile(filepath.Join(reportDir, "report.json"))
			if err != nil || json.Unmarshal(b, &rep) != nil || rep.Verdict != events.VerdictTestError {
				t.Errorf("report.json %s (%v), want a test-error verdict", b, err)
			}
		})
	}
}
