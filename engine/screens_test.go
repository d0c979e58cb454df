package engine

import (
	"context"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
)

// TestInterruptedRunLeavesEveryScreen interrupts a run (Ctrl-C) while its
// screens are still being written in the background: every screen an event
// names must be on disk, whole, when Run returns.
func TestInterruptedRunLeavesEveryScreen(t *testing.T) {
	t.Parallel()
	scriptNeed(t, "xterm")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	screens := 0
	steps := strings.Repeat("  - observe_screen: {}\n", 40)
	o := scriptRun(t, scriptRunSpec{
		ctx: ctx,
		scenario: `name: interrupted while writing screens
app:
  command: [xterm, -class, KasmScreens, -geometry, 200x60+0+0, -e, sh, -c, 'ls -l /usr/bin | head -58; exec sleep 3600']
  window: {class: KasmScreens}
steps:
` + steps,
		onEvent: func(_ scriptRunInfo, e events.Event) {
			if e.Kind == events.KindScreen {
				screens++
				if screens == 12 {
					once.Do(cancel)
				}
			}
		},
	})
	o.want(t, events.VerdictTestError, OutcomeInterrupted, "interrupted")
	named := map[string]bool{}
	for _, e := range o.events {
		if e.Screen != "" {
			named[e.Screen] = true
		}
	}
	if len(named) < 12 {
		t.Fatalf("the events name %d screens, want at least 12", len(named))
	}
	for rel := range named {
		f, err := os.Open(filepath.Join(o.info.reportDir, filepath.FromSlash(rel)))
		if err != nil {
			t.Errorf("%s is named by an event but missing: %v", rel, err)
			continue
		}
		cfg, err := png.DecodeConfig(f)
		f.Close()
		if err != nil || cfg.Width != 1280 || cfg.Height != 800 {
			t.Errorf("%s: %dx%d, %v; want a whole 1280x800 PNG", rel, cfg.Width, cfg.Height, err)
		}
	}
	leftovers, _ := filepath.Glob(filepath.Join(o.info.reportDir, "screens", "*.tmp"))
	if len(leftovers) > 0 {
		t.Errorf("half-written screens left behind: %v", leftovers)
	}
}
