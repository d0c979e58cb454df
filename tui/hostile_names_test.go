package tui

import (
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/tui/graphics"
)

// hostileName is what a hostile scenario, suite, report or attach server
// names things: a clipboard write (OSC 52), a window title, a screen
// clear and a cursor jump, a C1 CSI, reversed text, a bell and a
// backspace.
const hostileName = "x\x1b]52;c;cHduZWQ=\a\x1b]0;pwned\a\x1b[2J\x1b[H\u009b31m\u202eevil\a\b"

// sgrRE matches the renderer's own styling, the only escape sequence a
// frame may hold when no screen is drawn.
var sgrRE = regexp.MustCompile("\x1b\\[[0-9;:]*m")

// requireNoControls fails the test if text, with the renderer's styling
// taken out, holds an ESC, another C0 control but a newline, DEL, a C1
// control or a bidirectional override.
func requireNoControls(t *testing.T, where, text string) {
	t.Helper()
	for _, r := range sgrRE.ReplaceAllString(text, "") {
		if r != '\n' && (r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069) {
			t.Errorf("%s: %U reached the terminal raw:\n%q", where, r, text)
			return
		}
	}
	if !strings.Contains(text, `\x1b]52;c;`) {
		t.Errorf("%s does not show the hostile name neutralised:\n%q", where, text)
	}
}

// hostileRun is a run whose every name and text is hostile: the
// scenario's name and goal, a tool's name, a step's message, a question
// and the verdict's reason.
func hostileRun() []events.Event {
	at := func(s float64) time.Time { return fleetAt(s) }
	return []events.Event{
		{Seq: 1, T: at(0), Kind: events.KindRunStarted, Data: events.RunStarted{Scenario: hostileName, Goal: hostileName, Mode: "goal", DeadlineS: 600}},
		{Seq: 2, T: at(1), Kind: events.KindStepStarted, Step: 1, Tool: "click" + hostileName, Source: events.SourceModel, Args: map[string]any{"target": hostileName}},
		{Seq: 3, T: at(1.5), Kind: events.KindStepEnded, Step: 1, Tool: "click" + hostileName, Source: events.SourceModel, Status: events.StatusError, Message: hostileName},
		{Seq: 4, T: at(2), Kind: events.KindQuestion, Question: &events.Question{ID: "q1" + hostileName, Text: hostileName}},
		{Seq: 5, T: at(3), Kind: events.KindVerdict, Verdict: &events.Decision{Verdict: "fail", Outcome: "goal-not-met", Reasons: []string{hostileName}}},
	}
}

// TestConsolesNeutraliseHostileNames renders the run, replay, suite and
// attach consoles with hostile names everywhere — in the frame, the window
// title and the status line — and checks that no control character of
// them reaches the terminal.
func TestConsolesNeutraliseHostileNames(t *testing.T) {
	t.Parallel()
	opts := func(t *testing.T) Options {
		return Options{Theme: testTheme(t, false), Graphics: graphics.None, Env: func(string) string { return "" },
			Now: func() time.Time { return fleetAt(2.5) }}
	}
	fleet := func(t *testing.T, detached bool) *Fleet {
		f := NewFleet(t.Context(), FleetOptions{Source: newFakeFleet(), Title: hostileName, Detached: detached, Run: opts(t)})
		f.intake.Run(FleetRun{ID: "run" + hostileName, Scenario: hostileName, State: RunRunning, Verdict: hostileName})
		f.Update(f.intake.listen()())
		for _, fr := range f.runs {
			f.Update(fleetRunMsg{run: fr, msg: eventsMsg(hostileRun()[:4])})
		}
		f.Update(fleetRefreshMsg{})
		f.Update(tea.WindowSizeMsg{Width: 160, Height: 40})
		f.status = "answer failed: " + hostileName
		return f
	}
	cases := []struct {
		name string
		view func(t *testing.T) []tea.View
	}{
		{"run", func(t *testing.T) []tea.View {
			m, _ := NewLive(opts(t))
			m.applyEvents(hostileRun()[:4])
			m.width, m.height = 160, 40
			m.status = "answer failed: " + hostileName
			return []tea.View{m.View()}
		}},
		{"replay", func(t *testing.T) []tea.View {
			dir := t.TempDir()
			writeReport(t, dir, hostileRun(), false)
			r, err := LoadReport(dir)
			if err != nil {
				t.Fatal(err)
			}
			o := opts(t)
			m := NewReplay(r, o)
			m.width, m.height = 160, 40
			views := []tea.View{m.View()}
			m.seek(2)
			return append(views, m.View())
		}},
		{"suite", func(t *testing.T) []tea.View {
			f := fleet(t, false)
			views := []tea.View{f.View()}
			f.watched = f.runs[0]
			return append(views, f.View())
		}},
		{"attach", func(t *testing.T) []tea.View {
			f := fleet(t, true)
			return []tea.View{f.View()}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for i, v := range tc.view(t) {
				requireNoControls(t, tc.name+" frame", v.Content)
				if v.WindowTitle != "" {
					for _, r := range v.WindowTitle {
						if r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f {
							t.Errorf("%s view %d: %U in the window title %q", tc.name, i, r, v.WindowTitle)
							break
						}
					}
				}
			}
		})
	}
}
