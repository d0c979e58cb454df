package tui

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/drivers/ocr"
	"github.com/kasmrt/kasmrt/internal/testkit"
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
	testkit.Need(t, "tmux", "zenity", "Xvfb", ocr.Command)
	bin := kasmrt.Path(t)
	scenario, err := filepath.Abs("testdata/zenity-held.yaml")
	if err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(t.TempDir(), "report")
	term := testkit.StartTerminal(t, "run", 160, 48, bin, "run", scenario, "--graphics", "blocks", "--report", report)
	term.Screen("window 404×120")
	term.Keys("z")
	// The image's lines: below the title, above the status and help. Until
	// the frame for the whole terminal is drawn, the console's pane's
	// (under 100 columns at this size) is shown.
	var image string
	deadline := time.Now().Add(testkit.ScreenWait)
	for {
		lines := strings.Split(strings.TrimSuffix(term.Screen("z: back to the console", "-e"), "\n"), "\n")
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
	term.Keys("q")
	// The run finishes its report before the program ends; the report's
	// directory is removed only after that.
	term.WaitExit("q")
}
