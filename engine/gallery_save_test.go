package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
)

// TestGallerySaveDialogs saves a typed line through the file dialogs of
// the three toolkits a tester meets, as the examples do it: the name typed
// and Return pressed at once, with no wait step between them — GTK 3's
// file chooser (mousepad), GTK 4's through switch_window with no extra
// check (GNOME Text Editor) and Qt's (FeatherPad). Each flow runs ten
// times in a row and must save every time; with -short, once.
func TestGallerySaveDialogs(t *testing.T) {
	t.Parallel()
	rounds := 10
	if testing.Short() {
		rounds = 1
	}
	cases := []struct {
		example string
		bins    []string
		line    string
	}{
		{"mousepad-save-as.yaml", []string{"mousepad", "openbox", "dbus-daemon"}, "Saved through a dialog"},
		{"gtk4-text-editor-save-as.yaml", []string{"gnome-text-editor", "openbox", "dbus-daemon"}, "Saved through GTK 4"},
		{"qt-featherpad-save-as.yaml", []string{"featherpad", "openbox", "dbus-daemon"}, "Saved through Qt"},
	}
	for _, c := range cases {
		t.Run(c.example, func(t *testing.T) {
			t.Parallel()
			scriptNeed(t, append(c.bins, "Xvfb")...)
			for round := 1; round <= rounds; round++ {
				if !gallerySaves(t, c.example, c.line) {
					t.Fatalf("round %d of %d did not save", round, rounds)
				}
			}
		})
	}
}

// gallerySaves runs one save example in a directory of its own and
// reports whether every step held and the file holds the typed line.
func gallerySaves(t *testing.T, example, line string) bool {
	t.Helper()
	demoDir := t.TempDir()
	_, res, _ := galleryRun(t, example, demoDir)
	saved := true
	if res.Verdict != events.VerdictPass {
		t.Errorf("verdict %s (%s), want pass; reasons %q", res.Verdict, res.Outcome, res.Reasons)
		saved = false
	}
	b, err := os.ReadFile(filepath.Join(demoDir, "greeting.txt"))
	if err != nil || strings.TrimSpace(string(b)) != line {
		t.Errorf("greeting.txt = %q, %v; want %q saved", b, err, line)
		saved = false
	}
	return saved
}
