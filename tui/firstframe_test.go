package tui

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/tui/graphics"
)

// hasQuadrants reports whether s holds the block elements a blocks frame
// is drawn with, i.e. a screen is shown rather than a label.
func hasQuadrants(s string) bool { return strings.ContainsAny(s, "▘▝▀▖▌▞▛") }

// TestLiveFirstFrameFromEarlierCaptures starts the live console on a run
// that has already captured screens (a console attached to a run under
// way): its first frame shows their latest capture, never "no capture
// yet", and it is drawn while the terminal has not yet answered the
// graphics probe, in the mode it would fall back to; the answer comes
// after.
func TestLiveFirstFrameFromEarlierCaptures(t *testing.T) {
	t.Parallel()
	r, err := LoadReport(zenityRun)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"TERM": "xterm-256color"}
	m, sink := NewLive(Options{
		Dir:      r.Dir,
		Controls: &fakeControls{},
		Theme:    testTheme(t, false),
		Graphics: graphics.Auto,
		Profile:  colorprofile.TrueColor,
		Env:      func(k string) string { return env[k] },
		// The test answers the probe itself, after the first frame.
		ProbeTimeout: time.Hour,
	})
	// The run up to its fourth capture, the dialog still open.
	for _, e := range r.Events[:17] {
		sink(e)
	}
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(160, 48),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.TrueColor)))
	t.Cleanup(func() { _ = tm.Quit() })
	waitView(t, m, "screen 0004 · window 404×120")
	waitScreen(t, m.LastView, "no frame was drawn while the graphics probe was out",
		func(v string) bool { return hasQuadrants(v) && strings.Contains(v, "· auto") })
	// A terminal without sixel or kitty graphics answers.
	tm.Send(uv.PrimaryDeviceAttributesEvent{62, 22})
	waitView(t, m, "· blocks")
	press(tm, "q")
	out, err := io.ReadAll(tm.FinalOutput(t, teatest.WithFinalTimeout(consoleWait)))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out, []byte("no capture yet")) {
		t.Error(`the console showed "no capture yet" although captures had been made`)
	}
}

// TestReplayFirstFrameAndViews opens the replay of the zenity run on its
// first capture with no key pressed, then switches the screen views with
// their keys and gives the screen the whole terminal and back.
func TestReplayFirstFrameAndViews(t *testing.T) {
	t.Parallel()
	r, err := LoadReport(zenityRun)
	if err != nil {
		t.Fatal(err)
	}
	m := NewReplay(r, Options{Theme: testTheme(t, false), Graphics: graphics.Blocks, Profile: colorprofile.TrueColor, Env: func(string) string { return "" }})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(160, 48),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.TrueColor)))
	t.Cleanup(func() { _ = tm.Quit() })
	// The replay opens at the end: the final capture, after the dialog
	// closed, has no window, so the view falls back to the whole screen.
	waitView(t, m, "screen 0006 · whole screen (no window)")
	press(tm, "<", "l", "l", "l", "l", "l", "l", "l")
	waitView(t, m, "screen 0001 · window 404×120")
	for _, s := range []struct{ keys, want string }{
		{"v", "screen 0001 · whole screen · blocks"},
		{"v", "screen 0001 · zoom 2× (the window)"},
		{"+", "screen 0001 · zoom 3× (the window)"},
		{"-", "screen 0001 · zoom 2× (the window)"},
		{"shift+right", "screen 0001 · zoom 2× (panned)"},
		{"v", "screen 0001 · window 404×120"},
		{"alt+h", "screen 0001 · zoom 2× (panned)"},
		{"v", "screen 0001 · window 404×120"},
		{"z", "z: back to the console"},
		{"z", "timeline · all"},
	} {
		switch s.keys {
		case "shift+right":
			tm.Send(tea.KeyPressMsg{Code: tea.KeyRight, Mod: tea.ModShift})
		case "alt+h":
			tm.Send(tea.KeyPressMsg{Code: 'h', Mod: tea.ModAlt})
		default:
			press(tm, s.keys)
		}
		waitPicture(t, m, s.want)
	}
	press(tm, "q")
	tm.WaitFinished(t, teatest.WithFinalTimeout(consoleWait))
}

// TestFullScreenKeepsQuestionsInSight gives the screen the whole terminal
// and checks that a question arriving then is still announced.
func TestFullScreenKeepsQuestionsInSight(t *testing.T) {
	t.Parallel()
	tm, sink, _ := newLiveTest(t)
	press(tm, "z")
	waitView(t, tm.m, "z: back to the console")
	sink(events.Event{Seq: 2, T: time.Now(), Kind: events.KindQuestion, Question: &events.Question{ID: "q1", Text: "Which printer?"}})
	waitView(t, tm.m, "1 question(s) waiting · screen")
	press(tm, "z")
	waitView(t, tm.m, "? q1 (waiting): Which printer?")
}

// waitPicture waits until the console shows want with a picture in the
// screen pane: the title changes with the key, the frame when it is drawn.
func waitPicture(t *testing.T, m *Model, want string) {
	t.Helper()
	waitScreen(t, m.LastView, fmt.Sprintf("the console never showed %q with a picture", want),
		func(v string) bool { return strings.Contains(v, want) && hasQuadrants(v) })
}
