package tui

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/tui/graphics"
)

// takeoverControls is a run started with --takeover behind the console.
type takeoverControls struct {
	fakeControls
}

func (f *takeoverControls) TakeOverDesktop(context.Context) (TakeoverAccess, error) {
	f.record("take over")
	return TakeoverAccess{Addr: "127.0.0.1:5901", URL: "vnc://127.0.0.1:5901", Password: "Pw3xK9mQ"}, nil
}

func (f *takeoverControls) HandBackDesktop() error {
	f.record("hand back")
	return nil
}

// TestLiveTakeover presses T: the console asks for the desktop and shows
// where to connect and the one-time password until the run says the
// desktop is back; T again hands it back.
func TestLiveTakeover(t *testing.T) {
	t.Parallel()
	fc := &takeoverControls{}
	m, sink := NewLive(Options{Dir: t.TempDir(), Controls: fc, Theme: testTheme(t, false), Graphics: graphics.None,
		Env: func(string) string { return "" }})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 36),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	t.Cleanup(func() { _ = tm.Quit() })
	sink(events.Event{Seq: 1, T: time.Now(), Kind: events.KindRunStarted, Data: events.RunStarted{Scenario: "flow", Mode: "agentic", DeadlineS: 600}})
	waitView(t, m, "flow")
	press(tm, "T")
	fc.waitCalls(t, "take over")
	waitView(t, m, "desktop taken over: vnc://127.0.0.1:5901  password Pw3xK9mQ")
	sink(events.Event{Seq: 2, T: time.Now(), Kind: events.KindTakeoverStarted, Data: events.TakeoverStarted{Addr: "127.0.0.1:5901", By: "console"}})
	waitView(t, m, "takeover by the console: VNC at 127.0.0.1:5901")
	press(tm, "T")
	fc.waitCalls(t, "take over", "hand back")
	sink(events.Event{Seq: 3, T: time.Now(), Kind: events.KindTakeoverEnded, Data: events.TakeoverEnded{Ended: events.TakeoverHandedBack, DurationS: 12, ScreenChanged: true}})
	waitView(t, m, "handed back after 12s: screen changed")
}

// TestLiveTakeoverWhileAQuestionWaits: the run hands the desktop over
// while the model's question waits for an answer. The console takes it
// over like any other time and says, beside the access, that the question
// still waits and the run goes on after the hand-back; answering it stays
// possible meanwhile.
func TestLiveTakeoverWhileAQuestionWaits(t *testing.T) {
	t.Parallel()
	fc := &takeoverControls{}
	m, sink := NewLive(Options{Dir: t.TempDir(), Controls: fc, Theme: testTheme(t, false), Graphics: graphics.None,
		Env: func(string) string { return "" }})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(200, 36),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	t.Cleanup(func() { _ = tm.Quit() })
	sink(events.Event{Seq: 1, T: time.Now(), Kind: events.KindRunStarted, Data: events.RunStarted{Scenario: "flow", Mode: "agentic", DeadlineS: 600}})
	sink(events.Event{Seq: 2, T: time.Now(), Kind: events.KindQuestion, Question: &events.Question{ID: "q1", Text: "Which file?"}})
	waitView(t, m, "Which file?")
	press(tm, "T")
	fc.waitCalls(t, "take over")
	waitView(t, m, "desktop taken over: vnc://127.0.0.1:5901  password Pw3xK9mQ")
	waitView(t, m, "question q1 still waits (answer it any time: the run goes on after the hand-back)")
	// Once answered, the line says no more of it.
	sink(events.Event{Seq: 3, T: time.Now(), Kind: events.KindAnswer, Question: &events.Question{ID: "q1", Text: "Which file?", Answer: "notes.txt", By: "console"}})
	waitScreen(t, m.LastView, "the line still says the question waits", func(v string) bool {
		return strings.Contains(v, "desktop taken over") && !strings.Contains(v, "still waits")
	})
	// T hands the desktop back.
	press(tm, "T")
	fc.waitCalls(t, "take over", "hand back")
}

// TestLiveTakeoverOff: a run without --takeover has no takeover to offer.
func TestLiveTakeoverOff(t *testing.T) {
	t.Parallel()
	tm, _, fc := newLiveTest(t)
	press(tm, "T")
	waitView(t, tm.m, "this console cannot take the desktop over")
	fc.waitCalls(t)
}

// TestPrinterTakeover: run --headless prints a line for each end of a
// takeover, saying what changed and never a password (it has none).
func TestPrinterTakeover(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	p := NewPrinter(&out)
	p.Event(events.Event{Kind: events.KindTakeoverStarted, Data: events.TakeoverStarted{Addr: "127.0.0.1:5901", By: "api"}})
	p.Event(events.Event{Kind: events.KindTakeoverEnded, Data: events.TakeoverEnded{Ended: events.TakeoverClientLeft, DurationS: 3,
		WindowsOpened: []string{"Sign in"}, ScreenChanged: true}})
	for _, want := range []string{"takeover by the api: VNC at 127.0.0.1:5901", "handed back (the viewer left) after 3s: 1 window(s) opened, screen changed"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the printer says %q, want %q", out.String(), want)
		}
	}
}
