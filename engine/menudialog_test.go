package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/scenarios"
)

// menuDialogRuns is how many times TestMenuOpensDialog runs the example:
// ten, the bar a flow that once froze the app must clear; two under
// -short.
func menuDialogRuns() int {
	if testing.Short() {
		return 2
	}
	return 10
}

// TestMenuOpensDialog runs scenarios/examples/mousepad-menu-save-as.yaml
// against Debian's Mousepad again and again: click_element on File, then
// on "Save As...", opens GTK's file chooser as a modal dialog that takes
// the typed name and saves, every time. Through the accessibility action
// the same clicks left Mousepad frozen inside the bus call, the dialog
// painted once and deaf to every key.
func TestMenuOpensDialog(t *testing.T) {
	t.Parallel()
	scriptNeed(t, "mousepad", "dbus-daemon", "Xvfb")
	for i := range menuDialogRuns() {
		demoDir := t.TempDir()
		env := map[string]string{"KASM_DEMO_DIR": demoDir}
		files, err := scenarios.Load("../scenarios/examples/mousepad-menu-save-as.yaml", "", lookupIn(env))
		if err != nil {
			t.Fatalf("load the example: %v", err)
		}
		dir := filepath.Join(t.TempDir(), "report")
		runner, err := New(files, Options{ReportDir: dir, Display: "-", Getenv: func(name string) string { return env[name] }})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		res, err := runner.Run(ctx)
		cancel()
		if err != nil {
			t.Fatalf("run %d: %v", i+1, err)
		}
		if res.Verdict != events.VerdictPass || res.Outcome != OutcomeCompleted {
			rep, _ := scriptReadReport(t, dir)
			t.Fatalf("run %d of %d: verdict %s (%s), want pass (completed); reasons %q; steps %+v",
				i+1, menuDialogRuns(), res.Verdict, res.Outcome, res.Reasons, rep.Steps)
		}
		rep, _ := scriptReadReport(t, dir)
		for _, n := range []int{3, 4} {
			if s := rep.Steps[n-1]; !strings.Contains(s.Message, "with the pointer at its centre") {
				t.Errorf("run %d step %d: %q, want the menu clicked with the pointer", i+1, n, s.Message)
			}
		}
		b, err := os.ReadFile(filepath.Join(demoDir, "menu.txt"))
		if err != nil || strings.TrimSpace(string(b)) != "Saved through the menu" {
			t.Errorf("run %d: menu.txt = %q, %v; want the typed line saved", i+1, b, err)
		}
	}
}
