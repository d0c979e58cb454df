package tui

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/inbox"
	"github.com/kasmrt/kasmrt/themes"
	"github.com/kasmrt/kasmrt/tui/graphics"
)

// fakeFleet is a source the test feeds: Watch hands the sink over and
// waits; answers and steering are recorded.
type fakeFleet struct {
	sinkCh chan FleetSink
	callLog
}

func newFakeFleet() *fakeFleet { return &fakeFleet{sinkCh: make(chan FleetSink, 1)} }

func (s *fakeFleet) Watch(ctx context.Context, sink FleetSink) error {
	s.sinkCh <- sink
	<-ctx.Done()
	return nil
}

func (s *fakeFleet) AnswerMarked(runID, questionID, text string, mark inbox.Mark) error {
	s.record("answer %s %s %q %s", runID, questionID, text, mark)
	return nil
}

func (s *fakeFleet) Steer(runID string, st events.Steer) error {
	s.record("steer %s %s", runID, st.Action)
	return nil
}

// oscRE matches an operating system command (a window title), which a
// BEL may end.
var oscRE = regexp.MustCompile("\x1b\\][^\x07\x1b]*(\x07|\x1b\\\\)")

var fleetT0 = time.Date(2026, 12, 1, 22, 0, 0, 0, time.UTC)

func fleetAt(s float64) time.Time { return fleetT0.Add(time.Duration(s * float64(time.Second))) }

// fleetSample is the runs of a suite: one passed, one asking a question
// mid-run, one waiting for a worker, one waiting for the model's capacity;
// and a resumed run that sent no events.
func fleetSample() ([]FleetRun, map[string][]events.Event) {
	runs := []FleetRun{
		{ID: "login.yaml#0", Scenario: "login form", Sample: 0, State: RunEnded},
		{ID: "printer.yaml#0", Scenario: "pick a printer", Sample: 0, State: RunRunning},
		{ID: "printer.yaml#1", Scenario: "pick a printer", Sample: 1, State: RunQueued},
		{ID: "save.yaml#0", Scenario: "save as", Sample: 0, State: RunEnded, Verdict: "app-failed", DurationMS: 4200, Tokens: 1800},
		{ID: "save.yaml#1", Scenario: "save as", Sample: 1, State: RunRunning},
	}
	evs := map[string][]events.Event{
		"login.yaml#0": {
			{Seq: 1, T: fleetAt(0), Kind: events.KindRunStarted, Data: events.RunStarted{Scenario: "login form", Mode: "goal", DeadlineS: 600}},
			{Seq: 2, T: fleetAt(1), Kind: events.KindStepStarted, Step: 1, Tool: "observe_screen", Source: events.SourceModel},
			{Seq: 3, T: fleetAt(1.2), Kind: events.KindStepEnded, Step: 1, Tool: "observe_screen", Source: events.SourceModel, Status: events.StatusOK},
			{Seq: 4, T: fleetAt(2), Kind: events.KindModelReply, Usage: map[string]float64{"total_tokens": 2400}, Data: events.ModelReply{Calls: 1, Attempts: 1}},
			{Seq: 5, T: fleetAt(2.5), Kind: events.KindStepStarted, Step: 2, Tool: "record_verdict", Source: events.SourceModel},
			{Seq: 6, T: fleetAt(2.6), Kind: events.KindStepEnded, Step: 2, Tool: "record_verdict", Source: events.SourceModel, Status: events.StatusOK},
			{Seq: 7, T: fleetAt(3.1), Kind: events.KindVerdict, Verdict: &events.Decision{Verdict: "pass", Outcome: "goal-met"}},
			{Seq: 8, T: fleetAt(3.3), Kind: events.KindRunEnded, Data: events.RunEnded{Report: "runs/login"}},
		},
		"save.yaml#1": {
			{Seq: 1, T: fleetAt(8), Kind: events.KindRunStarted, Data: events.RunStarted{Scenario: "save as", Mode: "goal", DeadlineS: 600}},
			{Seq: 2, T: fleetAt(8.5), Kind: events.KindCapacityWait, Message: "model waits for capacity group vision", Data: events.CapacityWait{Group: "vision", Limit: 2, For: "model"}},
		},
		"printer.yaml#0": {
			{Seq: 1, T: fleetAt(5), Kind: events.KindRunStarted, Data: events.RunStarted{Scenario: "pick a printer", Mode: "goal", DeadlineS: 600}},
			{Seq: 2, T: fleetAt(6), Kind: events.KindStepStarted, Step: 1, Tool: "ask_human", Source: events.SourceModel},
			{Seq: 3, T: fleetAt(6.1), Kind: events.KindQuestion, Question: &events.Question{ID: "q1", Text: "Which printer, the one by the door?"}},
		},
	}
	return runs, evs
}

// newSampleFleet returns a fleet fed the sample synchronously, at fleetT0+10s.
func newSampleFleet(t *testing.T, w, h int) *Fleet {
	t.Helper()
	return newSampleFleetThemed(t, testTheme(t, false), w, h)
}

// newSampleFleetThemed is newSampleFleet drawn with th.
func newSampleFleetThemed(t *testing.T, th themes.Theme, w, h int) *Fleet {
	t.Helper()
	f := NewFleet(t.Context(), FleetOptions{Source: newFakeFleet(), Title: "nightly", Run: Options{
		Theme: th, Graphics: graphics.None, Env: func(string) string { return "" },
		Now: func() time.Time { return fleetAt(10) },
	}})
	runs, evs := fleetSample()
	for _, r := range runs {
		f.intake.Run(r)
	}
	f.Update(f.intake.listen()())
	for _, fr := range f.runs {
		if e := evs[fr.desc.ID]; len(e) > 0 {
			f.Update(fleetRunMsg{run: fr, msg: eventsMsg(e)})
		}
	}
	f.Update(fleetRefreshMsg{})
	f.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return f
}

// TestFleetGolden renders the runs table at a wide and a narrow size, and
// sorted by duration, longest first.
func TestFleetGolden(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		w, h int
		keys []string
	}{
		{"table_120x30", 120, 30, nil},
		{"table_80x24", 80, 24, nil},
		{"sorted_by_duration", 120, 30, []string{"s", "s", "s", "s", "s", "S"}},
		{"inbox_focused", 120, 30, []string{"i"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newSampleFleet(t, tc.w, tc.h)
			for _, k := range tc.keys {
				f.Update(keyPress(k))
			}
			golden.RequireEqual(t, pinned(t, f.View().Content, colorprofile.Ascii))
		})
	}
}

func keyPress(k string) tea.KeyPressMsg {
	switch k {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case markKey:
		return tea.KeyPressMsg{Code: 's', Mod: tea.ModCtrl}
	}
	r := []rune(k)[0]
	return tea.KeyPressMsg{Code: r, Text: k}
}

// The table's state, step, verdict, duration and tokens come from each
// run's events, or from its description when it sent none.
func TestFleetRows(t *testing.T) {
	t.Parallel()
	f := newSampleFleet(t, 120, 30)
	got := map[string][]string{}
	for _, r := range f.table.Rows() {
		got[r[0]+" "+r[1]] = r[2:]
	}
	want := map[string][]string{
		"login form #0":     {"ended", "2 record_verdict ok", "pass", "3.3s", "2400", ""},
		"pick a printer #0": {"running", "1 ask_human …", "", "5.0s", "", "1"},
		"pick a printer #1": {"queued", "", "", "", "", ""},
		"save as #0":        {"ended", "", "app-failed", "4.2s", "1800", ""},
		"save as #1":        {"running", "waits for vision", "", "2.0s", "", ""},
	}
	for k, w := range want {
		if !slices.Equal(got[k], w) {
			t.Errorf("%s = %q, want %q", k, got[k], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("rows = %v", got)
	}
}

// fleetTest is a fleet console under teatest with a fake source.
type fleetTest struct {
	*teatest.TestModel
	f    *Fleet
	src  *fakeFleet
	sink FleetSink
}

func newFleetTest(t *testing.T) *fleetTest {
	t.Helper()
	src := newFakeFleet()
	f := NewFleet(t.Context(), FleetOptions{Source: src, Title: "flows", Run: Options{
		Dir: t.TempDir(), Theme: testTheme(t, false), Graphics: graphics.None, Env: func(string) string { return "" },
	}})
	tm := teatest.NewTestModel(t, f, teatest.WithInitialTermSize(120, 36),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	t.Cleanup(func() { _ = tm.Quit() })
	var sink FleetSink
	select {
	case sink = <-src.sinkCh:
	case <-time.After(consoleWait):
		t.Fatal("the fleet never watched its source")
	}
	for i, name := range []string{"alpha", "beta"} {
		id := name + ".yaml#0"
		sink.Run(FleetRun{ID: id, Scenario: name, State: RunRunning})
		sink.Event(id, events.Event{Seq: 1, T: time.Now(), Kind: events.KindRunStarted, Data: events.RunStarted{Scenario: name, Mode: "goal", DeadlineS: 600}})
		sink.Event(id, events.Event{Seq: 2, T: time.Now(), Kind: events.KindStepStarted, Step: 1, Tool: "ask_human", Source: events.SourceModel})
		sink.Event(id, events.Event{Seq: 3, T: time.Now(), Kind: events.KindQuestion,
			Question: &events.Question{ID: fmt.Sprintf("q%d", i+1), Text: fmt.Sprintf("Question from %s?", name)}})
	}
	ft := &fleetTest{TestModel: tm, f: f, src: src, sink: sink}
	ft.wait(t, "Question from beta?")
	// A question of a run nobody watches still rings the bell (a BEL of
	// its own, not the one ending the window title's OSC sequence).
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(oscRE.ReplaceAll(b, nil), []byte("\a")) },
		teatest.WithDuration(consoleWait), teatest.WithCheckInterval(10*time.Millisecond))
	return ft
}

func (ft *fleetTest) wait(t *testing.T, want string) {
	t.Helper()
	waitScreen(t, ft.f.LastView, fmt.Sprintf("the fleet never showed %q", want),
		func(v string) bool { return strings.Contains(v, want) })
}

func (ft *fleetTest) waitGone(t *testing.T, gone string) {
	t.Helper()
	waitScreen(t, ft.f.LastView, fmt.Sprintf("the fleet still shows %q", gone),
		func(v string) bool { return !strings.Contains(v, gone) })
}

func (ft *fleetTest) keys(keys ...string) {
	for _, k := range keys {
		ft.Send(keyPress(k))
	}
}

// Enter watches the selected run in the live panes, which folded its
// events while it was not watched; esc goes back to the table.
func TestFleetWatchAndBack(t *testing.T) {
	t.Parallel()
	ft := newFleetTest(t)
	ft.keys("down", "enter")
	ft.wait(t, "esc back to the runs")
	ft.wait(t, "kasmrt · beta")
	ft.wait(t, "1 question(s) waiting in other runs")
	// A step of the watched run arrives live.
	ft.sink.Event("beta.yaml#0", events.Event{Seq: 4, T: time.Now(), Kind: events.KindStepStarted, Step: 2, Tool: "observe_screen", Source: events.SourceModel})
	ft.wait(t, "2 observe_screen")
	// Steering from the panes reaches the watched run, not another.
	ft.keys("p")
	ft.src.waitCalls(t, "steer beta.yaml#0 pause")
	// esc closes the panes' own detail pane first, then goes back.
	ft.keys("w")
	ft.wait(t, "no model turn yet")
	ft.keys("esc")
	ft.waitGone(t, "no model turn yet")
	ft.wait(t, "esc back to the runs")
	ft.keys("esc")
	ft.wait(t, "runs · 2 of 2")
	ft.waitGone(t, "esc back to the runs")
	ft.wait(t, "2 observe_screen …")
}

// "/" filters the table as one types; esc clears the filter.
func TestFleetFilter(t *testing.T) {
	t.Parallel()
	ft := newFleetTest(t)
	ft.keys("/")
	ft.Type("bet")
	ft.wait(t, "runs · 1 of 2 · filter bet")
	ft.keys("enter")
	// The filtered table's only row is the one enter watches.
	ft.keys("enter")
	ft.wait(t, "kasmrt · beta")
	ft.keys("esc")
	ft.wait(t, "runs · 1 of 2")
	ft.keys("/", "esc")
	ft.wait(t, "runs · 2 of 2")
}

// One inbox holds both runs' questions; the operator picks the second
// run's and the answer goes to that run.
func TestFleetAnswerSecondRun(t *testing.T) {
	t.Parallel()
	ft := newFleetTest(t)
	ft.wait(t, "inbox · 2 waiting")
	ft.keys("i", "down")
	ft.wait(t, "▸ beta #0: Question from beta?")
	ft.Type("the blue one")
	ft.keys("enter")
	ft.src.waitCalls(t, `answer beta.yaml#0 q2 "the blue one" private`)
	ft.sink.Event("beta.yaml#0", events.Event{Seq: 4, T: time.Now(), Kind: events.KindAnswer, Question: &events.Question{ID: "q2", Answer: "the blue one", By: "operator"}})
	ft.wait(t, "inbox · 1 waiting")
	ft.waitGone(t, "Question from beta?")
	ft.wait(t, "alpha #0: Question from alpha?")
	// The last answer gives the keys back to the table.
	ft.Type("green")
	ft.keys("enter")
	ft.src.waitCalls(t, `answer beta.yaml#0 q2 "the blue one" private`, `answer alpha.yaml#0 q1 "green" private`)
	ft.sink.Event("alpha.yaml#0", events.Event{Seq: 4, T: time.Now(), Kind: events.KindAnswer, Question: &events.Question{ID: "q1", Answer: "green", By: "operator"}})
	ft.wait(t, "no question is waiting")
	ft.wait(t, "enter watch run")
}

// The fleet's inbox marks answers as the run's does: private unless the
// operator cycles the mark, said above the input row, a secret drawn
// masked, and the next answer private again.
func TestFleetAnswerMarked(t *testing.T) {
	t.Parallel()
	ft := newFleetTest(t)
	ft.wait(t, "inbox · 2 waiting")
	ft.keys("i")
	ft.wait(t, "private: model can type it, not read it")
	ft.keys(markKey, markKey)
	ft.wait(t, "secret: masked; model can type it")
	ft.Type("ZqXw")
	ft.wait(t, "> ••••")
	if v := ft.f.LastView(); strings.Contains(v, "ZqXw") {
		t.Fatalf("the secret answer is on the screen:\n%s", v)
	}
	ft.keys("enter")
	ft.src.waitCalls(t, `answer alpha.yaml#0 q1 "ZqXw" secret`)
	ft.wait(t, "private: model can type it")
}

// Quitting while runs go on asks first; n keeps the console.
func TestFleetQuitAsks(t *testing.T) {
	t.Parallel()
	ft := newFleetTest(t)
	ft.keys("q")
	ft.wait(t, "stop the suite? 2 run(s) have not ended")
	ft.keys("n")
	ft.waitGone(t, "stop the suite?")
	ft.keys("q", "y")
	fm := ft.FinalModel(t, teatest.WithFinalTimeout(consoleWait)).(*Fleet)
	if !fm.Quitted() {
		t.Error("the fleet did not record that the operator quit")
	}
}

// TestFleetRoutesTerminalAnswers: a run's image waits for the terminal to
// answer a query written after its cells (Model.resendRaw). Only the
// watched run's query reaches the terminal, and its answer goes back to
// that run even once another is watched; an unwatched run's query is not
// written, so the fleet answers it at once and the run waits for nothing.
func TestFleetRoutesTerminalAnswers(t *testing.T) {
	t.Parallel()
	f := newSampleFleet(t, 120, 36)
	watched, other := f.runs[0], f.runs[1]
	f.watch(watched)
	query := func(fr *fleetRun) []tea.Msg {
		return runCmd(f.routeRun(fleetRunMsg{run: fr, msg: tea.RawMsg{Msg: graphics.DA1Query}}))
	}
	if out := query(watched); len(out) != 1 || rawString(out[0]) != graphics.DA1Query || len(f.asked) != 1 {
		t.Fatalf("the watched run's query: %v written, %d awaiting an answer; want it written and awaited", out, len(f.asked))
	}
	out := query(other)
	if len(out) != 1 || len(f.asked) != 1 {
		t.Fatalf("the unwatched run's query: %v, %d awaiting an answer; want it answered by the fleet", out, len(f.asked))
	}
	if m, ok := out[0].(fleetRunMsg); !ok || m.run != other {
		t.Fatalf("the unwatched run's query was answered with %#v, want an answer to that run", out[0])
	} else if _, ok := graphics.ReplyFromMsg(m.msg); !ok {
		t.Fatalf("the fleet's answer %#v is no device attributes reply", m.msg)
	}
	// The terminal answers after another run is watched: the answer is
	// still the run's that asked.
	f.watch(other)
	before := watched.model.da1Seen
	f.Update(uv.PrimaryDeviceAttributesEvent{62, 4})
	if watched.model.da1Seen != before+1 || len(f.asked) != 0 {
		t.Errorf("the terminal's answer reached the asking run: %v (%d awaiting)", watched.model.da1Seen == before+1, len(f.asked))
	}
}
