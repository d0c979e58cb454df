package tui

import (
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/internal/testkit"
)

// kasmrt is the command line, built once for the tests that run it in a
// real terminal or against a real X server.
var kasmrt testkit.Binary

func TestMain(m *testing.M) {
	code := m.Run()
	kasmrt.Remove()
	os.Exit(code)
}

// consoleWait bounds how long a console test waits for a screen, a call
// or the program's end. It is a bound for a loaded machine, where the
// package's real-terminal tests and a build share two cores with the
// teatest ones, not an expectation: a passing test goes on as soon as
// what it waits for is there.
const consoleWait = 30 * time.Second

// waitScreen waits until ok holds for the view the console last rendered
// and fails with what and that view when it does not within consoleWait.
func waitScreen(t *testing.T, view func() string, what string, ok func(string) bool) {
	t.Helper()
	deadline := time.Now().Add(consoleWait)
	for v := view(); !ok(v); v = view() {
		if time.Now().After(deadline) {
			t.Fatalf("%s; last screen:\n%s", what, v)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// callLog records what the console asked of a fake run or fleet, one
// line a call.
type callLog struct {
	mu    sync.Mutex
	calls []string
}

func (l *callLog) record(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, fmt.Sprintf(format, args...))
}

// waitCalls waits until the console has made as many calls as are
// wanted and checks they are those.
func (l *callLog) waitCalls(t *testing.T, want ...string) {
	t.Helper()
	deadline := time.Now().Add(consoleWait)
	for {
		l.mu.Lock()
		got := slices.Clone(l.calls)
		l.mu.Unlock()
		if len(got) >= len(want) {
			if !slices.Equal(got, want) {
				t.Fatalf("calls = %q, want %q", got, want)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("calls = %q, still waiting for %q", got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
