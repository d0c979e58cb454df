package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/tui/graphics"
)

// whyRun is a report directory recorded from a real goal run (xterm in
// Xvfb) whose model requests carry what the model was sent, with a
// refused, a malformed and a failed step and an operator's note. engine's
// TestRecordWhyFixture records it again.
const whyRun = "testdata/why-run"

func whyEvents(tb testing.TB) []events.Event {
	tb.Helper()
	evs, err := events.ReadFile(filepath.Join(whyRun, "events.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	return evs
}

// writeWhyReport copies the why run's report directory to dir.
func writeWhyReport(tb testing.TB, dir string) {
	tb.Helper()
	if err := os.CopyFS(dir, os.DirFS(whyRun)); err != nil {
		tb.Fatal(err)
	}
}

// newWhyLive is a live console under teatest at size, its report
// directory holding the why run's screens, and the sink to feed it.
func newWhyLive(t *testing.T, size [2]int) (*liveTest, func(events.Event)) {
	t.Helper()
	dir := t.TempDir()
	writeWhyReport(t, dir)
	m, sink := NewLive(Options{Dir: dir, Controls: &fakeControls{}, Theme: testTheme(t, false), Graphics: graphics.None,
		Env: func(string) string { return "" }})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(size[0], size[1]),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	t.Cleanup(func() { _ = tm.Quit() })
	return &liveTest{TestModel: tm, m: m}, sink
}

// feed publishes evs to the live console in order.
func feed(sink func(events.Event), evs []events.Event) {
	for _, e := range evs {
		sink(e)
	}
}

// TestLiveInspectPastStep selects an earlier step while the run goes on:
// the screen pane shows that step's capture and the detail pane its
// arguments and result, new rows keep arriving without moving the
// selection, and G returns to the newest screen.
func TestLiveInspectPastStep(t *testing.T) {
	t.Parallel()
	evs := whyEvents(t)
	tm, sink := newWhyLive(t, [2]int{120, 40})
	// Up to step 5's end: the newest screen is 0005.
	feed(sink, evs[:36])
	waitView(t, tm.m, "timeline · all · following")
	waitView(t, tm.m, "[screen 0005 · 640×400]")
	press(tm, "k", "k") // from the newest row (step 5): the note, step 4
	waitView(t, tm.m, "row 5/7 · G: latest")
	waitView(t, tm.m, "INSPECTING")
	waitView(t, tm.m, "step 4 · screen 0004")
	waitView(t, tm.m, "[screen 0004 · 640×400]")
	// b puts the screens before and after the inspected step side by side.
	press(tm, "b")
	waitView(t, tm.m, "before | after · step 4 type_text")
	press(tm, "b")
	waitView(t, tm.m, "step 4 · screen 0004")
	press(tm, "enter")
	waitView(t, tm.m, "typed the value \"greeting\" (10 characters)")
	waitView(t, tm.m, "ref: greeting")
	waitView(t, tm.m, "before 0003 · after 0004")
	// The run goes on: step 6 fails, the run ends; the selection stays.
	feed(sink, evs[36:])
	waitView(t, tm.m, "· pass-with-concerns (completed) ·")
	waitView(t, tm.m, "row 5/14 · G: latest")
	// A frame rendered before the selection moved may show for a moment;
	// the inspected step's is what stays.
	waitView(t, tm.m, "[screen 0004 · 640×400]")
	if v := tm.m.LastView(); !strings.Contains(v, "step 4 · screen 0004") || !strings.Contains(v, "ref: greeting") {
		t.Fatalf("new events moved the inspected step:\n%s", v)
	}
	press(tm, "G")
	waitView(t, tm.m, "timeline · all · following")
	waitView(t, tm.m, "[screen 0007 · 640×400]")
	press(tm, "esc")
	waitView(t, tm.m, "verdict")
}

// TestFailedStepJump visits every step that did not succeed (refused,
// malformed, error) with e, backwards with E, wrapping around the run, in
// the live view and in the replay.
func TestFailedStepJump(t *testing.T) {
	t.Parallel()
	evs := whyEvents(t)
	// A selected refusal is marked ✘, any other selected row ›.
	failed := []string{"✘  1 click", "✘  2 observe", "✘  5 press_key", "›  6 greeting_printed"}
	selected := func(row string) string { return row }
	t.Run("live", func(t *testing.T) {
		t.Parallel()
		tm, sink := newWhyLive(t, [2]int{120, 40})
		feed(sink, evs)
		waitView(t, tm.m, "pass-with-concerns")
		// Following, e wraps to the first failure; E from there wraps to
		// the newest.
		for _, step := range failed {
			press(tm, "e")
			waitView(t, tm.m, selected(step))
		}
		press(tm, "e")
		waitView(t, tm.m, selected(failed[0]))
		waitView(t, tm.m, "wrapped around the run")
		press(tm, "E")
		waitView(t, tm.m, selected(failed[3]))
		press(tm, "E")
		waitView(t, tm.m, selected(failed[2]))
	})
	t.Run("replay", func(t *testing.T) {
		t.Parallel()
		m := whyReplay(t, false)
		tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40),
			teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
		t.Cleanup(func() { _ = tm.Quit() })
		for _, step := range failed {
			press(tm, "e")
			waitView(t, m, selected(step))
		}
		waitView(t, m, "event 42/56")
		press(tm, "E", "E")
		waitView(t, m, selected(failed[1]))
		waitView(t, m, "event 16/56")
	})
}

// TestWhyView shows, for the turn behind the selected step, what the model
// said, the call it made, what it was sent (an operator's note), the
// Environment Update and the tools it had; a report written before
// requests recorded that says so instead.
func TestWhyView(t *testing.T) {
	t.Parallel()
	evs := whyEvents(t)
	tm, sink := newWhyLive(t, [2]int{200, 60})
	feed(sink, evs)
	waitView(t, tm.m, "pass-with-concerns")
	press(tm, "e", "e", "e") // step 5, press_key: the turn after the note
	waitView(t, tm.m, "✘  5 press_key")
	press(tm, "w")
	for _, want := range []string{"why · turn 5", "it called", "5 press_key {\"key\":\"Return\"} → refused",
		"user: Operator note: the prompt is at the top left", "tool: typed the value \"greeting\"",
		"Environment Update", "tool_generated_image_1: screen screens/0003.png", "tools offered (10)", "escalate · greeting_printed"} {
		waitView(t, tm.m, want)
	}
	press(tm, "k") // the note's row: the turn asked before it
	waitView(t, tm.m, "why · turn 4")
	waitView(t, tm.m, "The prompt is there; typing the greeting.")

	old := liveAt(t, sampleEvents())
	old.width, old.height = 200, 60
	old.detail = detailWhy
	if v := ansi.Strip(old.render()); !strings.Contains(v, "written before requests recorded what they sent the model") ||
		!strings.Contains(v, "the model said") {
		t.Errorf("an older report's why view:\n%s", v)
	}
}

// TestMouse clicks a timeline row to select it and again to open its
// detail, scrolls the detail and the timeline with the wheel, and clicks
// the inbox to type an answer and the timeline to leave it.
func TestMouse(t *testing.T) {
	t.Parallel()
	evs := whyEvents(t)
	size := [2]int{120, 40}
	tm, sink := newWhyLive(t, size)
	feed(sink, evs[:36])
	waitView(t, tm.m, "press_key")
	timeline := inner(computeLayout(layoutInput{Width: size[0], Height: size[1]}).Timeline)
	click := func(x, y int) { tm.Send(tea.MouseClickMsg{X: x, Y: y, Button: tea.MouseLeft}) }
	wheel := func(x, y int, b tea.MouseButton) { tm.Send(tea.MouseWheelMsg{X: x, Y: y, Button: b}) }
	// Row 3 of the list is step 3.
	click(timeline.Min.X+5, timeline.Min.Y+3)
	waitView(t, tm.m, "›  3 observe_screen")
	waitView(t, tm.m, "step 3 · screen 0003")
	click(timeline.Min.X+5, timeline.Min.Y+3)
	waitView(t, tm.m, "─step 3──")
	waitView(t, tm.m, "observed the screen (640x400)")
	wheel(timeline.Min.X+5, timeline.Min.Y+3, tea.MouseWheelDown)
	waitView(t, tm.m, "✘  5 press_key")
	wheel(timeline.Min.X+5, timeline.Min.Y+3, tea.MouseWheelUp)
	waitView(t, tm.m, "›  3 observe_screen")
	click(timeline.Min.X+5, timeline.Min.Y+6)
	waitView(t, tm.m, "✘  5 press_key")
	press(tm, "w")
	waitView(t, tm.m, "why · turn 5")
	l := computeLayout(layoutInput{Width: size[0], Height: size[1], Detail: true})
	wheel(l.Detail.Min.X+3, l.Detail.Max.Y-3, tea.MouseWheelDown) // the detail pane ends at the body's bottom
	waitView(t, tm.m, "why · turn 5 · line 4")
	// A question arrives; a click on the inbox gives it the keys.
	sink(events.Event{Seq: 100, T: evs[35].T, Kind: events.KindQuestion, Question: &events.Question{ID: "q1", Text: "Which greeting?"}})
	waitView(t, tm.m, "inbox · 1 waiting")
	l = computeLayout(layoutInput{Width: size[0], Height: size[1], Detail: true, Inbox: true})
	click(l.Inbox.Min.X+3, l.Inbox.Max.Y-2)
	waitView(t, tm.m, "send answer")
	click(timeline.Min.X+5, timeline.Min.Y+1)
	waitView(t, tm.m, "✘  1 click")
	waitView(t, tm.m, "i/tab inbox")
}

// TestDetailGolden renders the step detail and the why view at each size:
// in the replay on the failed declared check, and live while a past step
// is inspected.
func TestDetailGolden(t *testing.T) {
	t.Parallel()
	evs := whyEvents(t)
	cases := []struct {
		name  string
		model func(t *testing.T) *Model
	}{
		{"replay_step", func(t *testing.T) *Model { return whyReplayAt(t, detailStep) }},
		{"replay_why", func(t *testing.T) *Model { return whyReplayAt(t, detailWhy) }},
		{"live_inspect_why", func(t *testing.T) *Model {
			m := liveAt(t, evs[:36])
			m.timeline.selected = 4 // step 4, type_text
			m.detail = detailWhy
			return m
		}},
	}
	for _, c := range cases {
		for _, size := range consoleSizes {
			t.Run(fmt.Sprintf("%s_%dx%d", c.name, size[0], size[1]), func(t *testing.T) {
				t.Parallel()
				requireConsole(t, c.model(t), size)
			})
		}
	}
}

// whyReplayAt is the why run's replay on its last failed step with the
// detail pane showing kind.
func whyReplayAt(t *testing.T, kind detailKind) *Model {
	t.Helper()
	m := whyReplay(t, true)
	m.jumpFailed(-1)
	m.detail = kind
	return m
}

// whyReplay is the replay of a copy of the why run, at its end.
func whyReplay(t *testing.T, noColor bool) *Model {
	t.Helper()
	dir := t.TempDir()
	writeWhyReport(t, dir)
	r, err := LoadReport(dir)
	if err != nil {
		t.Fatal(err)
	}
	return NewReplay(r, Options{Theme: testTheme(t, noColor), Graphics: graphics.None, Env: func(string) string { return "" }})
}

// TestWhyViewOfAProposal shows, in step mode, why the model proposes the
// call that waits for the operator's approval.
func TestWhyViewOfAProposal(t *testing.T) {
	t.Parallel()
	evs := whyEvents(t)
	// Turn 4's request and reply, its call proposed instead of run.
	upTo := 0
	for i, e := range evs {
		if e.Kind == events.KindStepStarted && e.Step == 4 {
			upTo = i
			break
		}
	}
	proposal := events.Event{Seq: evs[upTo].Seq, T: evs[upTo].T, Kind: events.KindProposal, Step: 4, Tool: "type_text",
		Args: map[string]any{"ref": "greeting"}, Source: events.SourceModel}
	m := liveAt(t, append(slices.Clone(evs[:upTo]), proposal))
	m.width, m.height = 120, 40
	m.detail = detailWhy
	v := ansi.Strip(m.render())
	for _, want := range []string{"why · turn 4", "The prompt is there; typing the greeting.",
		`4 type_text {"ref":"greeting"} → waiting for`, "proposed: step 4 type_text"} {
		if !strings.Contains(v, want) {
			t.Errorf("the why view of a proposal lacks %q:\n%s", want, v)
		}
	}
}

// TestProposalInTimeline: in step mode the call waiting for approval ends
// the timeline, with the keys that decide on it, not only the status line.
func TestProposalInTimeline(t *testing.T) {
	t.Parallel()
	evs := whyEvents(t)
	upTo := slices.IndexFunc(evs, func(e events.Event) bool { return e.Kind == events.KindStepStarted && e.Step == 4 })
	proposal := events.Event{Seq: evs[upTo].Seq, T: evs[upTo].T, Kind: events.KindProposal, Step: 4, Tool: "type_text",
		Args: map[string]any{"ref": "greeting"}, Source: events.SourceModel}
	m := liveAt(t, append(slices.Clone(evs[:upTo]), proposal))
	for _, size := range consoleSizes {
		m.width, m.height = size[0], size[1]
		lines := strings.Split(ansi.Strip(m.render()), "\n")
		found := false
		for _, l := range lines[:len(lines)-2] { // above the status and help lines
			if strings.Contains(l, "4 awaits approval (a/r): type_text") {
				found = true
			}
		}
		if !found {
			t.Errorf("%dx%d: the timeline does not show the call waiting for approval:\n%s", size[0], size[1], strings.Join(lines, "\n"))
		}
	}
}

// TestDetailNeutralisesHostileText: control sequences in what the model
// said, in a tool's result and in a call's arguments reach the detail and
// why views as visible characters, never as commands to the terminal.
func TestDetailNeutralisesHostileText(t *testing.T) {
	t.Parallel()
	const title, clear = "\x1b]0;pwned\a", "\x1b[2J"
	evs := slices.Clone(whyEvents(t))
	for i, e := range evs {
		switch {
		case e.Kind == events.KindModelReply:
			e.Message = "look" + title + clear
		case e.Kind == events.KindStepEnded && e.Step == 4:
			e.Message = "typed" + clear
			e.Args = map[string]any{"ref": "greeting" + title}
		case e.Kind == events.KindStepStarted && e.Step == 4:
			e.Args = map[string]any{"ref": "greeting" + title}
		case e.Step == 2 && e.Tool == "observe":
			// A tool name is the model's word too.
			e.Tool = "observe" + title
		}
		evs[i] = e
	}
	m := liveAt(t, evs[:36])
	m.width, m.height = 200, 60
	m.timeline.selected = 4
	proposal := events.Event{T: evs[35].T, Kind: events.KindProposal, Step: 6, Tool: "exit" + clear, Source: events.SourceModel}
	m.applyEvents([]events.Event{proposal})
	for _, kind := range []detailKind{detailStep, detailWhy} {
		m.detail = kind
		v := m.render()
		if strings.Contains(v, title) || strings.Contains(v, clear) || strings.Contains(v, "\a") {
			t.Errorf("view %d passes a control sequence to the terminal:\n%q", kind, v)
		}
		if !strings.Contains(v, `\x1b]0;pwned\x07`) && !strings.Contains(v, `\x1b[2J`) {
			t.Errorf("view %d does not show the neutralised sequence:\n%s", kind, ansi.Strip(v))
		}
	}
}

// TestInboxWheel scrolls the inbox's history back with the wheel and
// forward again to the newest message.
func TestInboxWheel(t *testing.T) {
	t.Parallel()
	evs := slices.Clone(whyEvents(t)[:36])
	at := evs[len(evs)-1].T
	for i := range 12 {
		evs = append(evs, events.Event{T: at, Kind: events.KindRespond, Message: fmt.Sprintf("message %d", i+1)})
	}
	m := liveAt(t, evs)
	m.width, m.height = 120, 40
	inbox := computeLayout(layoutInput{Width: 120, Height: 40}).Inbox
	view := func() string { return ansi.Strip(m.render()) }
	if v := view(); !strings.Contains(v, "model: message 12") || strings.Contains(v, "lines back") {
		t.Fatalf("the inbox does not end on the newest message:\n%s", v)
	}
	for range 10 {
		m.Update(tea.MouseWheelMsg{X: inbox.Min.X + 2, Y: inbox.Max.Y - 2, Button: tea.MouseWheelUp})
	}
	if v := view(); !strings.Contains(v, "note to model: the prompt is at the top left") || strings.Contains(v, "model: message 12") ||
		!strings.Contains(v, "lines back") {
		t.Fatalf("the wheel did not scroll the inbox back to its oldest line:\n%s", v)
	}
	for range 10 {
		m.Update(tea.MouseWheelMsg{X: inbox.Min.X + 2, Y: inbox.Max.Y - 2, Button: tea.MouseWheelDown})
	}
	if v := view(); !strings.Contains(v, "model: message 12") || strings.Contains(v, "lines back") {
		t.Fatalf("the wheel did not come back to the newest message:\n%s", v)
	}
}

// TestEveryViewAtEveryEvent renders the step detail, the why view and the
// before/after of every row at every point of both recorded runs and of a
// stream with odd events (a reply without a request, a grounding without
// its attempt, a step that ends twice), at the smallest and a large size:
// whatever the stream holds, the console draws a whole frame.
func TestEveryViewAtEveryEvent(t *testing.T) {
	t.Parallel()
	at := whyEvents(t)[0].T
	odd := []events.Event{
		{T: at, Kind: events.KindModelReply, Message: "a reply no request asked for"},
		{T: at, Kind: events.KindGrounding},
		{T: at, Kind: events.KindStepEnded, Step: 9, Tool: "click", Status: events.StatusError, Source: events.SourceModel},
		{T: at, Kind: events.KindStepEnded, Step: 9, Tool: "click", Status: events.StatusOK, Source: events.SourceModel},
		{T: at, Kind: events.KindModelRequest},
		{T: at, Kind: events.KindStepStarted, Step: 10, Tool: "wait", Source: events.SourceModel},
	}
	for name, evs := range map[string][]events.Event{"why-run": whyEvents(t), "recorded-run": sampleEvents(), "odd": odd} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// Following the run after each event; then, at its end, each row.
			m := liveAt(t, evs[:1])
			for n := 1; n <= len(evs); n++ {
				if n > 1 {
					m.applyEvents(evs[n-1 : n])
				}
				rows := []int{-1}
				if n == len(evs) {
					for sel := range m.st.Rows {
						rows = append(rows, sel)
					}
				}
				for _, size := range [][2]int{{minWidth, minHeight}, {120, 40}} {
					m.width, m.height = size[0], size[1]
					for _, sel := range rows {
						m.timeline.selected = sel
						for _, kind := range []detailKind{detailNone, detailStep, detailWhy} {
							m.detail, m.compare = kind, kind == detailStep
							if got := len(strings.Split(m.render(), "\n")); got != size[1] {
								t.Fatalf("after %d events, row %d, view %d: %d lines, want %d", n, sel, kind, got, size[1])
							}
						}
					}
				}
			}
		})
	}
}
