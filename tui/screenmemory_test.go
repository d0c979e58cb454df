package tui

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/tui/graphics"
)

// quarters is a 1280x800 screen in four flat colours, so a picture shows
// which part of it was drawn.
func quarters() *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, 1280, 800))
	colours := [4]color.RGBA{{200, 30, 30, 255}, {30, 200, 30, 255}, {30, 30, 200, 255}, {220, 220, 220, 255}}
	for y := range 800 {
		for x := range 1280 {
			img.SetRGBA(x, y, colours[x/640+2*(y/400)])
		}
	}
	return img
}

// TestLoadScreenFromMemory: a capture the run handed over is drawn from
// memory with no file in the report directory; the marks are drawn on a
// copy of the part shown, as thick as on the whole screen, and the shared
// capture is left as it was; in compare mode only the screen handed over
// comes from memory, the other from its file.
func TestLoadScreenFromMemory(t *testing.T) {
	t.Parallel()
	shared := quarters()
	pristine := bytes.Clone(shared.Pix)
	dir := t.TempDir() // no screens: the file must not be needed
	point := &events.Point{X: 700, Y: 420}
	crop := image.Rect(600, 380, 900, 560)

	// What the console drew from the file before: the marks on a copy of
	// the whole screen, then the crop.
	marked := func(crop image.Rectangle) image.Image {
		whole := toRGBA(shared)
		markPoint(whole, point, whole.Bounds())
		return cropTo(whole, crop)
	}
	tests := []struct {
		name string
		req  screenRequest
		want image.Image
	}{
		{"the whole screen", screenRequest{Screen: "screens/0002.png"}, shared},
		{"a crop", screenRequest{Screen: "screens/0002.png", Crop: crop}, shared.SubImage(crop)},
		{"a crop with the click marked", screenRequest{Screen: "screens/0002.png", Crop: crop, Point: point}, marked(crop)},
		{"the whole screen with the click marked", screenRequest{Screen: "screens/0002.png", Point: point}, marked(image.Rectangle{})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.Pixels = heldImage{shared}
			got, err := loadScreen(dir, tc.req)
			if err != nil {
				t.Fatalf("loadScreen: %v", err)
			}
			if d := differentPixel(got, tc.want); d != "" {
				t.Error(d)
			}
			if !bytes.Equal(shared.Pix, pristine) {
				t.Fatal("the capture the run shares was drawn on")
			}
		})
	}

	t.Run("compare mode", func(t *testing.T) {
		before := image.NewRGBA(shared.Rect) // black: another capture
		for i := 3; i < len(before.Pix); i += 4 {
			before.Pix[i] = 0xff
		}
		var buf bytes.Buffer
		if err := png.Encode(&buf, before); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, "screens"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "screens", "0001.png"), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := loadScreen(dir, screenRequest{Screen: "screens/0002.png", Before: "screens/0001.png", After: "screens/0002.png", Pixels: heldImage{shared}})
		if err != nil {
			t.Fatalf("loadScreen: %v", err)
		}
		if d := differentPixel(got, sideBySide(before, shared, nil, image.Rectangle{})); d != "" {
			t.Error(d)
		}
	})
}

// differentPixel describes the first pixel where a and b differ, or their
// sizes when those do; empty when they are the same picture.
func differentPixel(a, b image.Image) string {
	if a.Bounds() != b.Bounds() {
		return "bounds " + a.Bounds().String() + ", want " + b.Bounds().String()
	}
	r := a.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if color.RGBAModel.Convert(a.At(x, y)) != color.RGBAModel.Convert(b.At(x, y)) {
				return image.Pt(x, y).String() + " differs"
			}
		}
	}
	return ""
}

// TestStateKeepsNewestPixels: the console holds the newest capture handed
// over and no other, so a long run costs it one screen, and none once the
// run has ended (a suite's console keeps every ended run); an older
// capture, or one from a stream without pixels (a replay, an attach), is
// read from its file.
func TestStateKeepsNewestPixels(t *testing.T) {
	t.Parallel()
	s := NewState()
	first, second := heldImage{quarters()}, heldImage{quarters()}
	s.Apply(0, events.Event{Kind: events.KindScreen, Screen: "screens/0001.png", Data: events.ScreenCaptured{Width: 1280, Height: 800, Pixels: first}})
	if s.PixelsOf("screens/0001.png") != first {
		t.Error("the capture handed over is not the one drawn")
	}
	s.Apply(1, events.Event{Kind: events.KindScreen, Screen: "screens/0002.png", Data: events.ScreenCaptured{Width: 1280, Height: 800, Pixels: second}})
	if s.PixelsOf("screens/0001.png") != nil {
		t.Error("an older capture is still held")
	}
	if s.PixelsOf("screens/0002.png") != second {
		t.Error("the newest capture is not held")
	}
	s.Apply(2, events.Event{Kind: events.KindScreen, Screen: "screens/0003.png", Data: events.ScreenCaptured{Width: 1280, Height: 800}})
	if s.PixelsOf("screens/0003.png") != nil || s.PixelsOf("") != nil {
		t.Error("a capture without pixels has some")
	}
	s.Apply(3, events.Event{Kind: events.KindScreen, Screen: "screens/0004.png", Data: events.ScreenCaptured{Width: 1280, Height: 800, Pixels: first}})
	s.Apply(4, events.Event{Kind: events.KindRunEnded})
	if s.PixelsOf("screens/0004.png") != nil {
		t.Error("the capture is still held after the run ended, when its file is written")
	}
}

// TestLiveDrawsHandedOverCapture: a live console in the run's process
// draws a capture handed over in memory at once, though the report's
// writer has not written its file.
func TestLiveDrawsHandedOverCapture(t *testing.T) {
	t.Parallel()
	m, sink := NewLive(Options{
		Dir:      t.TempDir(),
		Controls: &fakeControls{},
		Theme:    testTheme(t, false),
		Graphics: graphics.Blocks,
		Profile:  colorprofile.TrueColor,
		Env:      func(string) string { return "" },
	})
	sink(events.Event{Kind: events.KindRunStarted, T: time.Now(), Data: events.RunStarted{Scenario: "memory", DeadlineS: 600}})
	sink(events.Event{Seq: 2, T: time.Now(), Kind: events.KindScreen, Screen: "screens/0001.png",
		Data: events.ScreenCaptured{Width: 1280, Height: 800, Pixels: heldImage{quarters()}}})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(160, 48),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.TrueColor)))
	t.Cleanup(func() { _ = tm.Quit() })
	waitScreen(t, m.LastView, "the capture handed over was not drawn", hasQuadrants)
}

// TestLiveQueuePacesBatches: events that come while the queue waits out
// the interval since the last batch join the next batch, which is handed
// over whole once the interval has passed, so a run's burst costs the
// console one Update and one View; with no interval each batch goes at
// once.
func TestLiveQueuePacesBatches(t *testing.T) {
	t.Parallel()
	step := func(n int) events.Event { return events.Event{Kind: events.KindStepStarted, Step: n} }
	steps := func(msg tea.Msg) []int {
		var got []int
		for _, e := range msg.(eventsMsg) {
			got = append(got, e.Step)
		}
		return got
	}

	q := newQueue(time.Hour)
	waiting := make(chan struct{})
	release := make(chan time.Time)
	q.after = func(time.Duration) <-chan time.Time {
		close(waiting)
		return release
	}
	q.last = time.Now() // a batch was just handed over
	q.Push(step(1))
	got := make(chan tea.Msg)
	go func() { got <- q.listen()() }()
	select {
	case <-waiting:
	case msg := <-got:
		t.Fatalf("the batch %v went before its interval had passed", steps(msg))
	}
	q.Push(step(2))
	q.Push(step(3))
	release <- time.Now()
	if s := steps(<-got); len(s) != 3 || s[0] != 1 || s[2] != 3 {
		t.Errorf("the batch held steps %v, want 1 2 3", s)
	}

	unpaced := newQueue(-1)
	unpaced.after = func(time.Duration) <-chan time.Time {
		t.Error("a queue without an interval waited")
		return nil
	}
	unpaced.last = time.Now()
	unpaced.Push(step(4))
	if s := steps(unpaced.listen()()); len(s) != 1 || s[0] != 4 {
		t.Errorf("the unpaced batch held steps %v, want 4", s)
	}
}

// TestLiveQueueDropsOlderCaptureWhole: a screen event replaced by a newer
// one before the console took it keeps nothing, so the capture it
// carried in memory is not held until the batch is taken.
func TestLiveQueueDropsOlderCaptureWhole(t *testing.T) {
	t.Parallel()
	q := newQueue(-1)
	screen := func(rel string) events.Event {
		return events.Event{Kind: events.KindScreen, Screen: rel, Data: events.ScreenCaptured{Width: 1, Height: 1, Pixels: heldImage{image.NewRGBA(image.Rect(0, 0, 1, 1))}}}
	}
	q.Push(screen("screens/0001.png"))
	q.Push(screen("screens/0002.png"))
	q.mu.Lock()
	dropped := q.pending[0]
	q.mu.Unlock()
	if dropped.Data != nil || dropped.Screen != "" {
		t.Errorf("the replaced screen event still holds %+v", dropped)
	}
	if got := q.take(); len(got) != 1 || got[0].Screen != "screens/0002.png" {
		t.Errorf("took %v, want the newest screen only", got)
	}
}
