// Package testkit is the setup that the tests of the command (cmd/kasmrt),
// the server (serve), the suite runner (suite), the console (tui), the
// engine and the drivers share: marking a test of the integration layer,
// which skips under go test -short and when its Debian program is
// missing (Need), building the kasmrt
// binary once for a test process, writing input files, waiting on a
// condition instead of sleeping, and driving a program in a real terminal
// (Terminal, over tmux). It imports only the standard library, so any
// package's tests may use it.
package testkit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Need marks a test of the integration layer: one that starts a real
// program (an X server, a browser, tesseract, an application, a terminal).
// Under go test -short it skips, so the unit and rule layers run alone
// without those programs on the PATH; otherwise it skips the test when a
// program is not installed (scripts/setup.sh installs every one the tests
// name).
func Need(tb testing.TB, programs ...string) {
	tb.Helper()
	SkipIntegration(tb)
	for _, program := range programs {
		if _, err := exec.LookPath(program); err != nil {
			tb.Skipf("%s is not installed (%v); this test starts the real one (scripts/setup.sh installs it)", program, err)
		}
	}
}

// ShortReason is why go test -short skips a test of the integration layer.
const ShortReason = "integration test: starts real programs (X server, browser, OCR or an application); run without -short"

// SkipIntegration skips the test under go test -short: it belongs to the
// integration layer, which starts real programs. Need calls it; a test
// that starts its programs another way calls it first.
func SkipIntegration(tb testing.TB) {
	tb.Helper()
	if testing.Short() {
		tb.Skip(ShortReason)
	}
}

// WriteFile writes body to dir/name, readable by the owner only as the
// runtime wants its inputs, and returns the file's path.
func WriteFile(tb testing.TB, dir, name, body string) string {
	tb.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		tb.Fatalf("write %s: %v", name, err)
	}
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		tb.Fatalf("write %s: %v", name, err)
	}
	return path
}

// pollInterval is how often Eventually and the terminal's waits look
// again: often enough that a test goes on within a frame or two of its
// condition, seldom enough to leave the CPU to what is being waited for.
const pollInterval = 25 * time.Millisecond

// Eventually waits until done reports true and fails the test, naming
// what, when it has not within the given time. The time is a bound for a
// loaded machine, not an expectation: a passing test goes on as soon as
// done holds.
func Eventually(tb testing.TB, within time.Duration, what string, done func() bool) {
	tb.Helper()
	deadline := time.Now().Add(within)
	for !done() {
		if time.Now().After(deadline) {
			tb.Fatalf("%s: not within %v", what, within)
		}
		time.Sleep(pollInterval)
	}
}

// BuildKasmrt builds cmd/kasmrt into dir and returns the binary's path,
// for tests that need the command as its own process (a real terminal, a
// signal, a subreaper). TestMain calls it once for the whole package.
func BuildKasmrt(dir string) (string, error) {
	bin := filepath.Join(dir, "kasmrt")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/kasmrt/kasmrt/cmd/kasmrt").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build cmd/kasmrt: %w\n%s", err, out)
	}
	return bin, nil
}

// Binary is cmd/kasmrt built on first use, once for a test process, into
// a directory of its own that Remove deletes: a package's TestMain holds
// one for all its tests, so a run of tests that need no binary builds
// none.
type Binary struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// Path builds the binary the first time it is asked for and returns its
// path; a failed build fails every test that asks.
func (b *Binary) Path(tb testing.TB) string {
	tb.Helper()
	b.once.Do(func() {
		if b.dir, b.err = os.MkdirTemp("", "kasmrt-test-bin"); b.err == nil {
			b.path, b.err = BuildKasmrt(b.dir)
		}
	})
	if b.err != nil {
		tb.Fatal(b.err)
	}
	return b.path
}

// Remove deletes the built binary, if there is one.
func (b *Binary) Remove() {
	if b.dir != "" {
		_ = os.RemoveAll(b.dir)
	}
}

// GTKPython returns a Python 3 that has GTK 3 through PyGObject, for a
// test that runs a small GTK window of its own, or skips the test: Debian's
// /usr/bin/python3 first, whose python3-gi a python3 earlier on PATH
// (pyenv's) may not see.
func GTKPython(tb testing.TB) string {
	tb.Helper()
	for _, python := range []string{"/usr/bin/python3", "python3"} {
		probe := exec.Command(python, "-c", "import gi; gi.require_version('Gtk', '3.0'); from gi.repository import Gtk")
		if probe.Run() == nil {
			return python
		}
	}
	tb.Skip("no python3 with GTK 3 (Debian packages python3-gi, gir1.2-gtk-3.0; scripts/setup.sh installs them)")
	return ""
}
