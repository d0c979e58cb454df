package engine

import (
	"context"
	"image"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/report"
)

// TestInterruptedRunLeavesEveryScreen interrupts a run (Ctrl-C) while its
// screens are still being written in the background: every screen an event
// names must be on disk, whole, when Run returns. The double's screen is
// noise, which takes PNG far longer to encode than a desktop does, and its
// teardown is instant, so the screens still queued when the work stops are
// there only if the report waits for them.
func TestInterruptedRunLeavesEveryScreen(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		once    sync.Once
		mu      sync.Mutex
		screens int
	)
	r := loopRun(t, loopCase{
		ctx:      ctx,
		scenario: rulesApp + "steps:\n" + strings.Repeat("  - observe_screen: {}\n", 40),
		operator: "runner: {}\n",
		machine:  &fakeMachine{frames: []*image.RGBA{screensNoise(1280, 800)}},
		sink: func(_ *Runner, e events.Event) {
			if e.Kind != events.KindScreen {
				return
			}
			mu.Lock()
			screens++
			n := screens
			mu.Unlock()
			if n == 12 {
				once.Do(cancel)
			}
		},
	})
	loopWant(t, r, events.VerdictTestError, OutcomeInterrupted, 0, 0)
	named := map[string]bool{}
	for _, e := range r.events {
		if e.Screen != "" {
			named[e.Screen] = true
		}
	}
	if len(named) < 12 {
		t.Fatalf("the events name %d screens, want at least 12", len(named))
	}
	for rel := range named {
		f, err := os.Open(filepath.Join(r.dir, filepath.FromSlash(rel)))
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
	leftovers, _ := filepath.Glob(filepath.Join(r.dir, "screens", "*.tmp"))
	if len(leftovers) > 0 {
		t.Errorf("half-written screens left behind: %v", leftovers)
	}
}

// screensNoise is a screen of random pixels: PNG cannot compress it, so
// each one takes tens of milliseconds to encode.
func screensNoise(width, height int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, width, height))
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range img.Pix {
		img.Pix[i] = byte(rng.Uint32())
	}
	for i := 3; i < len(img.Pix); i += 4 {
		img.Pix[i] = 0xff
	}
	return img
}

// TestOnlyAScreenSentIsEncodedOnTheStep checks whose the PNG of a kept
// screen is in an outside agent's session: a screen the step's result
// carries (observe_screen) is encoded on every core on the step's path,
// while an action's settled screen, which no result carries (cdp_click,
// press_key), is encoded only by the report's writer in the background,
// off the step's path.
func TestOnlyAScreenSentIsEncodedOnTheStep(t *testing.T) {
	t.Parallel()
	rep, err := report.Create(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	a := &actor{r: &Runner{agent: &agentFeed{}}, rep: rep, loop: &loopStats{}}
	action, sent := rep.NewFrame(screensNoise(64, 40)), rep.NewFrame(screensNoise(64, 40))
	a.saveScreen(action, false)
	a.saveScreen(sent, true)
	if cores, encoded := sent.EncodedOn(); !encoded || cores != 0 {
		t.Errorf("the screen sent: encoded %v on %d cores when saved, want encoded on every core (0)", encoded, cores)
	}
	if err := rep.Close(); err != nil {
		t.Fatal(err)
	}
	if cores, encoded := action.EncodedOn(); !encoded || cores != 1 {
		t.Errorf("the action's screen: encoded %v on %d cores, want the report writer's one", encoded, cores)
	}
}
