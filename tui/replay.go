package tui

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/report"
	"github.com/kasmrt/kasmrt/tui/sanitize"
)

// Report is what a report directory holds for the replay: the event stream
// and, when the run finished, report.json.
type Report struct {
	Dir    string
	Events []events.Event
	// Summary is report.json (nil for a killed run, or when it could not
	// be read).
	Summary *report.Report
	// Warning says what was tolerated, e.g. a damaged events.jsonl line.
	Warning string
}

// Verdict is the run's verdict: the stream's, or report.json's when the
// stream has none (its verdict line was lost), or nil.
func (r *Report) Verdict() *events.Decision {
	for i := len(r.Events) - 1; i >= 0; i-- {
		if v := r.Events[i].Verdict; r.Events[i].Kind == events.KindVerdict && v != nil {
			return v
		}
	}
	if r.Summary != nil && r.Summary.Verdict != "" {
		return &events.Decision{Verdict: r.Summary.Verdict, Outcome: r.Summary.Outcome, Reasons: r.Summary.Reasons}
	}
	return nil
}

// LoadReport reads a report directory: events.jsonl (required; damaged
// lines are skipped with a warning) and report.json (optional).
func LoadReport(dir string) (*Report, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("open report: %w", err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("open report %s: not a directory", dir)
	}
	r := &Report{Dir: dir}
	var warnings []string
	evs, err := events.ReadFile(filepath.Join(dir, "events.jsonl"))
	var skipped *events.SkippedLines
	switch {
	case errors.As(err, &skipped):
		warnings = append(warnings, err.Error())
	case err != nil:
		if len(evs) == 0 {
			return nil, fmt.Errorf("open report: %w", err)
		}
		warnings = append(warnings, err.Error())
	}
	r.Events = evs
	data, err := os.ReadFile(filepath.Join(dir, "report.json"))
	switch {
	case err == nil:
		var sum report.Report
		if err := json.Unmarshal(data, &sum); err != nil {
			warnings = append(warnings, fmt.Sprintf("report.json: %v", err))
		} else {
			r.Summary = &sum
		}
	case errors.Is(err, fs.ErrNotExist):
		// A killed run: events.jsonl is all there is.
	default:
		return nil, fmt.Errorf("open report: %w", err)
	}
	r.Warning = strings.Join(warnings, "; ")
	return r, nil
}

// NewReplay returns the console stepping through a saved report. It opens
// at the last event, so the run's end is what shows first.
func NewReplay(r *Report, opts Options) *Model {
	opts.Dir = r.Dir
	opts.Controls = nil
	// A report may come from anywhere: its every string is neutralised
	// once, here, before the console draws any of it.
	clean := sanitize.Value(*r)
	r = &clean
	m := newModel(opts)
	m.evs = r.Events
	m.allRows = FoldState(r.Events).Rows
	m.fallbackVerdict = r.Verdict()
	m.status = r.Warning
	if len(m.evs) == 0 {
		m.status = "the report has no events"
	}
	m.seek(len(m.evs) - 1)
	return m
}

// Cursor returns the index of the event the replay shows.
func (m *Model) Cursor() int { return m.cursor }

// seek shows the state as it was right after event i.
func (m *Model) seek(i int) {
	if len(m.evs) == 0 {
		m.cursor = 0
		return
	}
	m.cursor = min(max(0, i), len(m.evs)-1)
	m.st = FoldState(m.evs[:m.cursor+1])
	if m.st.Verdict == nil && m.cursor == len(m.evs)-1 {
		// The stream lost its verdict line; report.json still has it.
		m.st.Verdict = m.fallbackVerdict
	}
	m.timeline.selected = -1
}

// jump moves to the next (dir 1) or previous (dir -1) event matching
// match, wrapping around the run as the failed-step jump and the live
// view do, or says there is none.
func (m *Model) jump(dir int, what string, match func(events.Event) bool) tea.Cmd {
	var at []int
	for i, e := range m.evs {
		if match(e) {
			at = append(at, i)
		}
	}
	if len(at) == 0 {
		m.status = "no " + what + " in the run"
		return nil
	}
	return m.wrapJump(dir, at, m.cursor, m.seek)
}

// jumpRow moves to the next or previous timeline row that passes the
// filter, landing on its result.
func (m *Model) jumpRow(dir int) tea.Cmd {
	vis := m.timeline.visible(m.allRows)
	land := func(ri int) tea.Cmd {
		m.seek(m.allRows[ri].Last())
		m.timeline.selectRow(m.st.Rows, ri)
		return m.refreshScreen()
	}
	if dir > 0 {
		for _, ri := range vis {
			if r := m.allRows[ri]; r.Last() > m.cursor {
				return land(ri)
			}
		}
	} else {
		for k := len(vis) - 1; k >= 0; k-- {
			if r := m.allRows[vis[k]]; r.Last() < m.cursor {
				return land(vis[k])
			}
		}
	}
	m.status = "no more rows"
	return nil
}

func isRefusal(e events.Event) bool {
	return e.Kind == events.KindStepEnded && (e.Status == events.StatusRefused || e.Status == events.StatusMalformed)
}

func isKind(k events.Kind) func(events.Event) bool {
	return func(e events.Event) bool { return e.Kind == k }
}

func (m *Model) replayKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.rpKeys
	m.status = ""
	move := func(i int) tea.Cmd {
		m.seek(i)
		return m.refreshScreen()
	}
	switch {
	case keyIs(msg, k.Close) && m.detail != detailNone:
		return m.toggleDetail(m.detail)
	case keyIs(msg, k.Quit):
		return m.quit()
	case keyIs(msg, k.Detail):
		return m.toggleDetail(detailStep)
	case keyIs(msg, k.Why):
		return m.toggleDetail(detailWhy)
	case keyIs(msg, k.ScrollDown):
		m.detailOffset += wheelStep
	case keyIs(msg, k.ScrollUp):
		m.detailOffset = max(0, m.detailOffset-wheelStep)
	case keyIs(msg, k.NextFailed):
		return m.jumpFailed(1)
	case keyIs(msg, k.PrevFailed):
		return m.jumpFailed(-1)
	case keyIs(msg, k.Help):
		m.showHelp = true
	case keyIs(msg, k.Next):
		return move(m.cursor + 1)
	case keyIs(msg, k.Prev):
		return move(m.cursor - 1)
	case keyIs(msg, k.First):
		return move(0)
	case keyIs(msg, k.Last):
		return move(len(m.evs) - 1)
	case keyIs(msg, k.NextStep):
		return m.jumpRow(1)
	case keyIs(msg, k.PrevStep):
		return m.jumpRow(-1)
	case keyIs(msg, k.NextRefusal):
		return m.jump(1, "refusal", isRefusal)
	case keyIs(msg, k.PrevRefusal):
		return m.jump(-1, "refusal", isRefusal)
	case keyIs(msg, k.NextGrounding):
		return m.jump(1, "grounding", isKind(events.KindGrounding))
	case keyIs(msg, k.PrevGrounding):
		return m.jump(-1, "grounding", isKind(events.KindGrounding))
	case keyIs(msg, k.NextConcern):
		return m.jump(1, "concern", isKind(events.KindConcern))
	case keyIs(msg, k.PrevConcern):
		return m.jump(-1, "concern", isKind(events.KindConcern))
	case keyIs(msg, k.NextQuestion):
		return m.jump(1, "question", isKind(events.KindQuestion))
	case keyIs(msg, k.PrevQuestion):
		return m.jump(-1, "question", isKind(events.KindQuestion))
	case keyIs(msg, k.Filter):
		m.cycleFilter()
	case keyIs(msg, k.Compare):
		m.compare = !m.compare
		if _, _, _, _, ok := m.comparePair(); m.compare && !ok {
			m.status = "no before/after captures here (g jumps to a grounded click)"
		}
		return m.refreshScreen()
	}
	return nil
}
