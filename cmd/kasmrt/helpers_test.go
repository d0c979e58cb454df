package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// need skips the test when a program it starts is not installed.
func need(t *testing.T, bins ...string) {
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
