package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/kasmrt/kasmrt/engine/report"
)

// need skips the test when a program it starts is not installed.
func need(t testing.TB, bins ...string) {
	t.Helper()
	for _, bin := range bins {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s is not installed (%v); this test starts the real one", bin, err)
		}
	}
}

// builtBinary builds this command once per test process, for the tests
// that need it as its own process (a real terminal, a subreaper).
var builtBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "kasmrt-cmd-test")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "kasmrt")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		return "", &buildError{err: err, out: string(out)}
	}
	return bin, nil
})

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return "go build: " + e.err.Error() + "\n" + e.out }

func kasmrtBinary(t *testing.T) string {
	t.Helper()
	bin, err := builtBinary()
	if err != nil {
		t.Fatal(err)
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
