package testkit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTerminalRunsAProgram drives cat in a real tmux terminal: typed text
// and a key reach the program, the screen shows what it echoed, and the
// session ends with the program.
func TestTerminalRunsAProgram(t *testing.T) {
	t.Parallel()
	term := StartTerminal(t, "cat", 60, 10, "cat")
	if pid := term.PanePID(); pid <= 0 {
		t.Fatalf("pane pid %d", pid)
	}
	// Typed, a key's name is text: "Enter" is typed, not pressed.
	term.Type("Enter")
	term.Keys("Enter")
	if out := term.Screen("Enter\nEnter"); strings.Count(out, "Enter") != 2 {
		t.Errorf("cat did not echo the typed line once:\n%s", out)
	}
	term.ScreenWithout("goodbye")
	term.Keys("C-d")
	term.WaitExit("ctrl+d")
}

// TestWriteFileMakesItsFolders writes below folders that do not exist yet,
// readable by the owner only.
func TestWriteFileMakesItsFolders(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := WriteFile(t, dir, filepath.Join("a", "b", "s.yaml"), "name: x\n")
	b, err := os.ReadFile(path)
	if err != nil || string(b) != "name: x\n" {
		t.Fatalf("read back %q: %v", b, err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v (%v), want 0600", st.Mode(), err)
	}
	n := 0
	Eventually(t, ScreenWait, "the third look", func() bool { n++; return n == 3 })
}

// TestNeedMarksTheIntegrationLayer runs a test that needs a program
// installed everywhere: under -short it must skip, so the unit and rule
// layers run without the integration tests; otherwise it must run.
func TestNeedMarksTheIntegrationLayer(t *testing.T) {
	t.Parallel()
	ran := false
	t.Run("integration", func(t *testing.T) {
		Need(t, "sh")
		ran = true
	})
	if testing.Short() && ran {
		t.Error("Need(sh) let the test run under -short")
	}
	if !testing.Short() && !ran {
		t.Error("Need(sh) skipped the test without -short, with sh installed")
	}
}
