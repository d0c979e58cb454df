package tui

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/inbox"
	"github.com/kasmrt/kasmrt/tui/graphics"
)

// fakeControls records what the console asked of the run.
type fakeControls struct{ callLog }

func (f *fakeControls) AnswerMarked(id, text string, mark inbox.Mark) error {
	f.record("answer %s %q %s", id, text, mark)
	return nil
}

func (f *fakeControls) Steer(s events.Steer) error {
	f.record("steer %s %q %q", s.Action, s.Value, s.Reason)
	return nil
}

// liveTest is a live console under teatest with a fake run behind it.
type liveTest struct {
	*teatest.TestModel
	m *Model
}

func newLiveTest(t *testing.T) (*liveTest, func(events.Event), *fakeControls) {
	t.Helper()
	fc := &fakeControls{}
	m, sink := NewLive(Options{
		Dir:      t.TempDir(),
		Controls: fc,
		Theme:    testTheme(t, false),
		Graphics: graphics.None,
		Env:      func(string) string { return "" },
	})
	tm := teatest.NewTestModel(t, m,
		teatest.WithInitialTermSize(120, 36),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	t.Cleanup(func() { _ = tm.Quit() })
	lt := &liveTest{TestModel: tm, m: m}
	sink(events.Event{Seq: 1, T: time.Now(), Kind: events.KindRunStarted, Data: events.RunStarted{Scenario: "flow", Mode: "agentic", DeadlineS: 600}})
	waitView(t, m, "flow")
	return lt, sink, fc
}

// waitView waits until the console's rendered screen contains want.
func waitView(t *testing.T, m *Model, want string) {
	t.Helper()
	waitScreen(t, m.LastView, fmt.Sprintf("the console never showed %q", want),
		func(v string) bool { return strings.Contains(v, want) })
}

// waitOutput waits until the bytes written to the terminal contain want.
func waitOutput(t *testing.T, tm *teatest.TestModel, want string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(want)) },
		teatest.WithDuration(consoleWait), teatest.WithCheckInterval(10*time.Millisecond))
}

type sender interface {
	Send(tea.Msg)
	Type(string)
}

func press(tm sender, keys ...string) {
	for _, k := range keys {
		switch k {
		case "enter":
			tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
		case "esc":
			tm.Send(tea.KeyPressMsg{Code: tea.KeyEscape})
		case "tab":
			tm.Send(tea.KeyPressMsg{Code: tea.KeyTab})
		case markKey:
			tm.Send(tea.KeyPressMsg{Code: 's', Mod: tea.ModCtrl})
		default:
			tm.Type(k)
		}
	}
}

func TestLiveAnswerQuestion(t *testing.T) {
	t.Parallel()
	tm, sink, fc := newLiveTest(t)
	sink(events.Event{Seq: 2, T: time.Now(), Kind: events.KindQuestion, Question: &events.Question{ID: "q7", Text: "Which printer?"}})
	// The bell rings and the title is marked when a question arrives.
	waitOutput(t, tm.TestModel, "\a")
	waitView(t, tm.m, "1 question(s) waiting")
	press(tm, "i")
	tm.Type("the one by the door")
	press(tm, "enter")
	fc.waitCalls(t, `answer q7 "the one by the door" private`)
	sink(events.Event{Seq: 3, T: time.Now(), Kind: events.KindAnswer, Question: &events.Question{ID: "q7", Answer: "the one by the door", By: "operator"}})
	waitView(t, tm.m, "by operator: the one by the door")
	press(tm, "esc", "q")
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(consoleWait)).(*Model)
	if n := len(fm.State().Pending()); n != 0 {
		t.Fatalf("%d questions still pending after the answer", n)
	}
}

// TestLiveAnswerMarks marks answers in the inbox: an answer is private
// unless the operator cycles its mark, the input row says the mark and
// what it means, an answer marked secret is drawn masked and never on the
// screen, and each answer starts private again.
func TestLiveAnswerMarks(t *testing.T) {
	t.Parallel()
	tm, sink, fc := newLiveTest(t)
	sink(events.Event{Seq: 2, T: time.Now(), Kind: events.KindQuestion, Question: &events.Question{ID: "q1", Text: "Which printer?"}})
	waitView(t, tm.m, "1 question(s) waiting")
	press(tm, "i")
	waitView(t, tm.m, "private: model can type it, not read it")
	press(tm, markKey)
	waitView(t, tm.m, "shareable: model can read it")
	tm.Type("the one by the door")
	press(tm, "enter")
	fc.waitCalls(t, `answer q1 "the one by the door" shareable`)
	waitView(t, tm.m, "private: model can type it")

	sink(events.Event{Seq: 3, T: time.Now(), Kind: events.KindAnswer, Question: &events.Question{ID: "q1", Answer: "the one by the door", By: "console"}})
	sink(events.Event{Seq: 4, T: time.Now(), Kind: events.KindQuestion, Question: &events.Question{ID: "q2", Text: "The code?"}})
	waitView(t, tm.m, "The code?")
	press(tm, markKey, markKey)
	waitView(t, tm.m, "secret: masked; model can type it")
	tm.Type("ZqXw")
	waitView(t, tm.m, "> ••••")
	if v := tm.m.LastView(); strings.Contains(v, "ZqXw") {
		t.Fatalf("the secret answer is on the screen:\n%s", v)
	}
	press(tm, "enter")
	fc.waitCalls(t, `answer q1 "the one by the door" shareable`, `answer q2 "ZqXw" secret`)
	waitView(t, tm.m, "private: model can type it")
	press(tm, "esc", "q")
	tm.WaitFinished(t, teatest.WithFinalTimeout(consoleWait))
}

func TestLivePauseResume(t *testing.T) {
	t.Parallel()
	tm, sink, fc := newLiveTest(t)
	press(tm, "p")
	fc.waitCalls(t, `steer pause "" ""`)
	sink(events.Event{Seq: 2, T: time.Now(), Kind: events.KindSteer, Steer: &events.Steer{Action: events.SteerPause}})
	waitView(t, tm.m, "PAUSED")
	press(tm, "p")
	fc.waitCalls(t, `steer pause "" ""`, `steer resume "" ""`)
}

func TestLiveStepApproveReject(t *testing.T) {
	t.Parallel()
	tm, sink, fc := newLiveTest(t)
	press(tm, "a") // nothing proposed yet: no call
	press(tm, "s")
	fc.waitCalls(t, `steer step "on" ""`)
	sink(events.Event{Seq: 2, T: time.Now(), Kind: events.KindSteer, Steer: &events.Steer{Action: events.SteerStep, Value: "on"}})
	sink(events.Event{Seq: 3, T: time.Now(), Kind: events.KindProposal, Step: 1, Tool: "click", Args: map[string]any{"target": "center"}})
	waitView(t, tm.m, `proposed: step 1 click {"target":"center"}`)
	press(tm, "a")
	fc.waitCalls(t, `steer step "on" ""`, `steer approve "" ""`)
	sink(events.Event{Seq: 4, T: time.Now(), Kind: events.KindSteer, Steer: &events.Steer{Action: events.SteerApprove}})
	sink(events.Event{Seq: 5, T: time.Now(), Kind: events.KindStepEnded, Step: 1, Tool: "click", Status: events.StatusOK})
	sink(events.Event{Seq: 6, T: time.Now(), Kind: events.KindProposal, Step: 2, Tool: "press_key", Args: map[string]any{"key": "ctrl+q"}})
	waitView(t, tm.m, "proposed: step 2 press_key")
	press(tm, "r")
	tm.Type("that quits the app")
	press(tm, "enter")
	fc.waitCalls(t, `steer step "on" ""`, `steer approve "" ""`, `steer reject "" "that quits the app"`)
}

func TestLiveAbortConfirm(t *testing.T) {
	t.Parallel()
	tm, _, fc := newLiveTest(t)
	press(tm, "x", "n") // declined: nothing happens
	press(tm, "n")      // the note prompt
	tm.Type("try the menu")
	press(tm, "enter")
	fc.waitCalls(t, `steer note "try the menu" ""`)
	press(tm, "x")
	waitView(t, tm.m, "abort the run? (y/n)")
	press(tm, "y")
	fc.waitCalls(t, `steer note "try the menu" ""`, `steer abort "" ""`)
}

func TestReplayNavigation(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	evs := sampleEvents()
	// A killed run: no report.json and a torn last line.
	writeReport(t, dir, evs, false)
	r, err := LoadReport(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := NewReplay(r, Options{Theme: testTheme(t, false), Graphics: graphics.Blocks, Profile: colorprofile.ANSI256, Env: func(string) string { return "" }})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 36),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.ANSI256)))
	index := func(match func(events.Event) bool, nth int) int {
		for i, e := range evs {
			if match(e) {
				if nth == 0 {
					return i
				}
				nth--
			}
		}
		t.Fatal("no such event")
		return -1
	}
	at := func(i int) string { return fmt.Sprintf("event %d/%d", i+1, len(evs)) }
	question := index(isKind(events.KindQuestion), 0)
	concern := index(isKind(events.KindConcern), 0)
	askEnded := index(func(e events.Event) bool { return e.Kind == events.KindStepEnded && e.Tool == "ask_human" }, 0)
	steps := []struct {
		keys []string
		show string
	}{
		{[]string{"<"}, at(0)},
		{[]string{"r"}, at(index(isRefusal, 0))},
		{[]string{"r"}, at(index(isRefusal, 1))},
		{[]string{"R"}, at(index(isRefusal, 0))},
		{[]string{"g"}, "grounding step 4"},
		{[]string{"b"}, "before | after"},
		{[]string{"a"}, at(question)},
		// The only concern is before the question: c wraps round, as
		// the live view's jumps do.
		{[]string{"c"}, "wrapped around the run"},
		{[]string{"C"}, at(concern)},
		{[]string{"l", "l"}, at(concern + 2)},
		{[]string{"h"}, at(concern + 1)},
		{[]string{"a", "j"}, at(askEnded)},
		{[]string{"k"}, at(lastSteerBefore(evs, askEnded))},
		{[]string{">"}, at(len(evs) - 1)},
	}
	for _, s := range steps {
		press(tm, s.keys...)
		waitView(t, m, s.show)
	}
	press(tm, "q")
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(consoleWait)).(*Model)
	if fm.Cursor() != len(evs)-1 {
		t.Fatalf("cursor = %d, want %d", fm.Cursor(), len(evs)-1)
	}
	if fm.State().Verdict == nil {
		t.Fatal("at the last event the verdict is not shown")
	}
}

// lastSteerBefore is the index of the last steering event before event i:
// the row the replay's "previous row" key reaches from i.
func lastSteerBefore(evs []events.Event, i int) int {
	for j := i - 1; j >= 0; j-- {
		if evs[j].Kind == events.KindSteer {
			return j
		}
	}
	return -1
}

// TestHeaderBeforeTheRunStarts: while a run starts (kasmrt record, run
// --tui) its console has no scenario name yet, and says it is starting in
// words a user reads, not the name of an event.
func TestHeaderBeforeTheRunStarts(t *testing.T) {
	t.Parallel()
	m, _ := NewLive(Options{Dir: t.TempDir(), Controls: &fakeControls{}, Theme: testTheme(t, true), Graphics: graphics.None, Env: func(string) string { return "" }})
	m.width, m.height = 120, 36
	h := ansi.Strip(m.header())
	if !strings.Contains(h, "starting…") || strings.Contains(h, "run.started") {
		t.Errorf("header before run.started = %q, want it to say the run is starting", h)
	}
}
