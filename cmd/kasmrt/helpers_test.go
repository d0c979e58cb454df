package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/report"
	"github.com/kasmrt/kasmrt/internal/testkit"
)

// envRunMain makes this test binary run the command line instead of the
// tests. The tests that need kasmrt as its own process (a real terminal,
// a signal, a subreaper) start the test binary itself with it set, so
// the package's tests need no `go build` of their own.
const envRunMain = "KASMRT_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(envRunMain) == "1" {
		main()
	}
	// Every process the tests start inherits it: a binary started by
	// tmux, by a shell or by the test itself is the command line.
	if err := os.Setenv(envRunMain, "1"); err != nil {
		fmt.Fprintln(os.Stderr, "set", envRunMain+":", err)
		os.Exit(2)
	}
	os.Exit(m.Run())
}

// need skips the test when a program it starts is not installed.
func need(tb testing.TB, programs ...string) {
	tb.Helper()
	testkit.Need(tb, programs...)
}

// kasmrtBinary returns the path of a program that is this command line:
// the test binary, which TestMain turns into it.
func kasmrtBinary(tb testing.TB) string {
	tb.Helper()
	bin, err := os.Executable()
	if err != nil {
		tb.Fatalf("find the test binary: %v", err)
	}
	return bin
}

// readReport reads and decodes dir/report.json, and returns its raw text
// too for checks on what it must not contain.
func readReport(t *testing.T, dir string) (report.Report, string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatalf("no report.json: %v", err)
	}
	var rep report.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("report.json: %v", err)
	}
	return rep, string(b)
}

// wantIn fails the test for each of wants that text, which what names
// (stdout, stderr), does not contain.
func wantIn(t *testing.T, what, text string, wants []string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, text)
		}
	}
}

// kasmrtProcess runs the command line as its own process, with env added
// to the test's environment, and returns its exit code and output. A test
// that needs variables of its own runs the command this way rather than
// in-process after t.Setenv, so it can run in parallel with the others.
func kasmrtProcess(t *testing.T, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(kasmrtBinary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil && cmd.ProcessState == nil {
		t.Fatalf("start kasmrt %s: %v", strings.Join(args, " "), err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
}
