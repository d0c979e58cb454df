package tui

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/drivers/ocr"
	"github.com/kasmrt/kasmrt/tui/internal/cellimage"
)

// TestRunInTmuxWindowLegible runs a real scenario — Debian's zenity in the
// embedded Xvfb — with the live console in blocks mode inside tmux, gives
// the screen the whole 160×48 terminal, and reads the pane tmux holds
// (capture-pane -e, the cells with their colours, as tmux's 256-colour
// terminal has them) back as a picture: the dialog's question is read word
// for word above one of its buttons, as TestZenityWindowLegible judges it.
func TestRunInTmuxWindowLegible(t *testing.T) {
	t.Parallel()
	needBinary(t, "tmux")
	needBinary(t, "zenity")
	needBinary(t, "Xvfb")
	needBinary(t, ocr.Command)
	bin := buildKasmrt(t)
	scenario, err := filepath.Abs("testdata/zenity-held.yaml")
	if err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(t.TempDir(), "report")
	socket := filepath.Join(t.TempDir(), "tmux.sock")
	tmux := func(args ...string) (string, error) {
		out, err := exec.Command("tmux", append([]string{"-S", socket}, args...)...).CombinedOutput()
		return string(out), err
	}
	if out, err := tmux("new-session", "-d", "-x", "160", "-y", "48", "-s", "run",
		"env", "TERM=tmux-256color", bin, "run", scenario, "--graphics", "blocks", "--report", report); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() { _, _ = tmux("kill-server") })
	screen := func(want string, args ...string) string {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			out, err := tmux(append([]string{"capture-pane", "-p", "-t", "run"}, args...)...)
			if err == nil && strings.Contains(out, want) {
				return out
			}
			if time.Now().After(deadline) {
				t.Fatalf("the terminal never showed %q; last screen:\n%s", want, out)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	screen("window 404×120")
	if out, err := tmux("send-keys", "-t", "run", "z"); err != nil {
		t.Fatalf("send-keys z: %v\n%s", err, out)
	}
	// The image's lines: below the title, above the status and help. Until
	// the frame for the whole terminal is drawn, the console's pane's
	// (under 100 columns at this size) is shown.
	var image string
	deadline := time.Now().Add(30 * time.Second)
	for {
		lines := strings.Split(strings.TrimSuffix(screen("z: back to the console", "-e"), "\n"), "\n")
		if len(lines) != 48 {
			t.Fatalf("capture-pane gave %d lines, want 48", len(lines))
		}
		image = strings.Join(lines[1:46], "\n")
		if _, painted := cellimage.Decode(image); painted.Dx()/2 > 120 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the frame for the whole terminal never came:\n%s", image)
		}
		time.Sleep(100 * time.Millisecond)
	}
	judgeDialog(t, readCells(t, image))
	if out, err := tmux("send-keys", "-t", "run", "q"); err != nil {
		t.Fatalf("send-keys q: %v\n%s", err, out)
	}
}
