package tui

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/themes"
	"github.com/kasmrt/kasmrt/tui/graphics"
)

// startLive runs a live console in a real program writing to io.Discard.
func startLive(b *testing.B) (*Model, func(events.Event), *tea.Program) {
	b.Helper()
	theme, err := themes.Load("dark", "", func(string) string { return "" })
	if err != nil {
		b.Fatal(err)
	}
	m, sink := NewLive(Options{Dir: b.TempDir(), Theme: theme, Graphics: graphics.None, Env: func(string) string { return "" }})
	p := tea.NewProgram(m, tea.WithInput(nil), tea.WithOutput(io.Discard), tea.WithWindowSize(140, 45),
		tea.WithColorProfile(colorprofile.ANSI256), tea.WithoutSignals())
	go func() { _, _ = p.Run() }()
	sink(events.Event{Kind: events.KindRunStarted, T: time.Now(), Data: events.RunStarted{Scenario: "bench", DeadlineS: 600}})
	b.Cleanup(func() { p.Quit(); p.Wait() })
	return m, sink, p
}

// streamEvent is the i-th event of a fast synthetic run: a step's start
// and end, a screen and a budget update, in turn.
func streamEvent(i int) events.Event {
	e := events.Event{Seq: int64(i), T: time.Now(), Step: i / 4}
	switch i % 4 {
	case 0:
		e.Kind, e.Tool, e.Args = events.KindStepStarted, "click", map[string]any{"target": "center"}
	case 1:
		e.Kind, e.Tool, e.Status, e.DurationMS = events.KindStepEnded, "click", events.StatusOK, 12
		if i%40 == 1 {
			e.Status, e.Message = events.StatusRefused, "observe_screen must come first"
		}
	case 2:
		e.Kind, e.Screen = events.KindScreen, fmt.Sprintf("screens/%04d.png", i)
	case 3:
		e.Kind, e.Budgets = events.KindBudget, []events.Budget{{Name: "iterations", Used: float64(i / 4), Limit: 1e9}}
	}
	return e
}

// BenchmarkEventThroughput measures how many events a second the console
// absorbs: the sink is called as fast as the bus can, and the clock stops
// when the last event is on screen.
func BenchmarkEventThroughput(b *testing.B) {
	m, sink, _ := startLive(b)
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		sink(streamEvent(i))
	}
	marker := fmt.Sprintf("sentinel-%d", b.N)
	sink(events.Event{Kind: events.KindStepEnded, T: time.Now(), Step: b.N + 1, Tool: marker, Status: events.StatusOK})
	for !strings.Contains(m.LastView(), marker) {
		time.Sleep(100 * time.Microsecond)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
}

// BenchmarkKeyToRepaint measures the time from a key press to a screen
// that shows its effect while events stream in as fast as they can.
func BenchmarkKeyToRepaint(b *testing.B) {
	m, sink, p := startLive(b)
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; !stop.Load(); i++ {
			sink(streamEvent(i))
			if i%64 == 0 {
				time.Sleep(time.Millisecond) // ~64k events/s, faster than any real run
			}
		}
	}()
	filters := []string{"timeline · refusals only", "timeline · grounding only", "timeline · all"}
	b.ResetTimer()
	for i := range b.N {
		want := filters[i%3]
		p.Send(tea.KeyPressMsg{Code: 'f', Text: "f"})
		for !strings.Contains(m.LastView(), want) {
			time.Sleep(20 * time.Microsecond)
		}
	}
	b.StopTimer()
	stop.Store(true)
	<-done
}

// BenchmarkRender measures drawing the whole console at 200x60 with a
// half-block screen, the most cells a frame carries.
func BenchmarkRender(b *testing.B) {
	dir := b.TempDir()
	writeReport(b, dir, sampleEvents(), true)
	r, err := LoadReport(dir)
	if err != nil {
		b.Fatal(err)
	}
	theme, err := themes.Load("dark", "", func(string) string { return "" })
	if err != nil {
		b.Fatal(err)
	}
	m := NewReplay(r, Options{Theme: theme, Graphics: graphics.Blocks, Profile: colorprofile.TrueColor, Env: func(string) string { return "" }})
	m.width, m.height = 200, 60
	req, ok := m.wantScreen()
	if !ok {
		b.Fatal("no screen to show")
	}
	msg := renderScreen(m.ctx, m.renderer, dir, req)().(frameMsg)
	if msg.err != nil {
		b.Fatal(msg.err)
	}
	m.installFrame(msg)
	b.ResetTimer()
	for range b.N {
		_ = m.render()
	}
}

// BenchmarkWatchedScreens streams screen events the way a fast run does
// (one capture every 20 ms, each a 1280×800 PNG the engine wrote) into a
// live console drawing half-block frames, and reports how many captures it
// drew per event and the CPU time it took per event, with the live render
// interval and without it, reading each capture from its file or handed
// over in memory as a run in the console's process does.
func BenchmarkWatchedScreens(b *testing.B) {
	dir := b.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "screens"), 0o755); err != nil {
		b.Fatal(err)
	}
	img := image.NewRGBA(image.Rect(0, 0, 1280, 800))
	for i := range img.Pix {
		img.Pix[i] = byte(i * 7)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		b.Fatal(err)
	}
	const screens = 8
	for i := range screens {
		if err := os.WriteFile(filepath.Join(dir, "screens", fmt.Sprintf("%04d.png", i)), buf.Bytes(), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name     string
		interval time.Duration
		memory   bool
	}{{"uncapped-file", -1, false}, {"capped-file", 0, false}, {"uncapped-memory", -1, true}, {"capped-memory", 0, true}} {
		b.Run(tc.name, func(b *testing.B) {
			theme, err := themes.Load("dark", "", func(string) string { return "" })
			if err != nil {
				b.Fatal(err)
			}
			m, sink := NewLive(Options{Dir: dir, Theme: theme, Graphics: graphics.Blocks, Env: func(string) string { return "" },
				RenderInterval: tc.interval})
			p := tea.NewProgram(m, tea.WithInput(nil), tea.WithOutput(io.Discard), tea.WithWindowSize(140, 45),
				tea.WithColorProfile(colorprofile.ANSI256), tea.WithoutSignals())
			go func() { _, _ = p.Run() }()
			defer func() { p.Quit(); p.Wait() }()
			sink(events.Event{Kind: events.KindRunStarted, T: time.Now(), Data: events.RunStarted{Scenario: "bench", DeadlineS: 600}})
			var before, after syscall.Rusage
			_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
			b.ResetTimer()
			for i := range b.N {
				d := events.ScreenCaptured{Width: 1280, Height: 800}
				if tc.memory {
					// As a run in the console's process hands them over.
					d.Pixels = heldImage{img}
				}
				sink(events.Event{Seq: int64(i + 2), T: time.Now(), Kind: events.KindScreen,
					Screen: fmt.Sprintf("screens/%04d.png", i%screens), Data: d})
				time.Sleep(20 * time.Millisecond)
			}
			b.StopTimer()
			_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
			cpu := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
			b.ReportMetric(float64(m.rendered.Load())/float64(b.N), "renders/event")
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/event")
		})
	}
}

// heldImage is a capture in memory, as a run hands it over.
type heldImage struct{ img *image.RGBA }

func (h heldImage) Image() (*image.RGBA, error) { return h.img, nil }
