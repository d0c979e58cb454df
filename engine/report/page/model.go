// Package page writes report.html: a report directory made readable in a
// browser, offline. The page is one file rendered with html/template from
// the event stream (the same stream report.json is folded from); screens
// are referenced relatively, never copied in, and the only script it runs
// is its own, pinned by a hash in its Content-Security-Policy.
package page

import (
	"encoding/json"
	"fmt"
	"image"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/report"
)

// view is what the template renders; every string in it has been redacted
// and made visible (see clean) while it was built.
type view struct {
	Title      string
	Scenario   string
	File       string
	Mode       string
	Goal       string
	Plan       []string
	Verdict    string
	Outcome    string
	Reasons    []string
	Model      *report.ModelVerdict
	Checks     []checkView
	Concerns   []string
	Steps      []stepView
	Timeline   []rowView
	Budgets    []budgetView
	Questions  []events.Question
	Exchanges  []exchangeView
	AppLog     string
	AppLogNote string
	Final      *finalView
	Startup    *startupView
	Hung       *hungView
	Baselines  []baselineView
	Console    *consoleView
	Started    string
	Duration   string
	Warning    string

	// FirstFailed is the first step that did not succeed (0: none); the
	// page opens at it.
	FirstFailed int
}

// checkView is one check's row; ID is its anchor (#check-NAME).
type checkView struct{ ID, Name, State, Evidence string }

// anchorID is "prefix-name" with every character of name outside
// [A-Za-z0-9_-] replaced by "-", so a deep link never needs escaping.
func anchorID(prefix, name string) string {
	return prefix + "-" + strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			return r
		}
		return '-'
	}, name)
}

// shot is a screen as the page shows it: a relative path, its size, and
// the clicked point to mark on it, if any.
type shot struct {
	Src  string
	W, H int
	Mark *events.Point
	// Crop is the part a zoomed locate pass looked at.
	Crop *events.Rect
}

type stepView struct {
	N         int
	Tool      string
	Args      string
	Source    string
	Status    string
	Message   string
	Duration  string
	OffsetMS  int64
	Screen    *shot
	Grounding []groundingView
}

type groundingView struct {
	Attempt     int
	Description string
	Expect      string
	Outcome     string
	Reason      string
	Point       *events.Point
	Before      *shot
	After       *shot
	Pass        int
	Crop        *events.Rect
}

type rowView struct {
	At    string
	Class string
	Step  int
	Text  string
}

type budgetView struct {
	Name   string
	Used   string
	Limit  string
	Points string // an SVG polyline over a 100×20 box: use over the run's time
}

type exchangeView struct {
	Iteration int
	Request   string
	Reply     string
	Usage     string
	Duration  string
	Status    string
}

// startupView is what the display showed when the app's window did not
// appear in time.
type startupView struct {
	Reason, Match, Suggestion string
	Windows                   []windowView
	Screen                    *shot
}

// baselineView is one screenshot check's comparison; ID is its anchor
// (#baseline-NAME). Expected, Actual and Diff are set when the window did
// not match.
type baselineView struct {
	ID, Name, Result, Summary string
	Step                      int
	Failed                    bool
	Expected, Actual, Diff    *shot
}

// baselineImage is the only form of screenshot-check image the page links
// to: a file the run wrote in its baselines directory.
var baselineImage = regexp.MustCompile(`^baselines/[A-Za-z0-9][A-Za-z0-9._-]*\.(expected|actual|diff)\.png$`)

// baselines builds the screenshot checks' views.
func (b *builder) baselines(bs []report.Baseline) []baselineView {
	var out []baselineView
	for _, c := range bs {
		img := func(path string) *shot {
			if !baselineImage.MatchString(path) {
				return nil
			}
			return &shot{Src: path, W: c.Width, H: c.Height}
		}
		summary := fmt.Sprintf("%d of %d pixels differ (%.2f%%; at most %.2f%% allowed, colour threshold %g)",
			c.DiffPixels, c.Pixels, c.DiffRatio*100, c.MaxDiffRatio*100, c.Threshold)
		switch c.Result {
		case events.BaselineMissing:
			summary = "no baseline yet: approve the window below with --update-baselines"
		case events.BaselineWritten:
			summary = "written as the baseline (--update-baselines)"
		case events.BaselineUnsteady:
			summary = "the window never held still for two captures in a row"
		}
		if c.SizeDiffers {
			summary = "the window and the baseline have different sizes"
		}
		out = append(out, baselineView{ID: anchorID("baseline", c.Name), Name: b.clean(c.Name), Result: b.clean(c.Result),
			Summary: b.clean(summary), Step: c.Step, Failed: c.Result != events.BaselineMatched && c.Result != events.BaselineWritten,
			Expected: img(c.Expected), Actual: img(c.Actual), Diff: img(c.Diff)})
	}
	return out
}

// hungView is what the display and the app's threads showed when the app
// stopped answering.
type hungView struct {
	Reason  string
	Windows []windowView
	Threads []threadView
	Screen  *shot
}

type threadView struct {
	PID, TID          int
	Name, State, Wait string
}

type windowView struct {
	ID, Title, Class, Instance, Geometry string
	PID                                  int
	Viewable, Application                bool
}

// consoleView is what the browser's console said.
type consoleView struct {
	Summary string
	Entries []consoleEntryView
}

type consoleEntryView struct{ At, Level, Text, Where string }

type finalView struct {
	Screen *shot
	Ending string
	Note   string
}

// screenPath is the only form of screen path the page links to: a file
// of the report's own screens/ directory.
var screenPath = regexp.MustCompile(`^screens/[0-9]{4,9}\.png$`)

// builder turns a run's events into the view.
type builder struct {
	redact func(string) string
	sizes  map[string][2]int
	start  time.Time
}

// clean redacts s and makes every control character visible, so text
// from the app, the model, the scenario or the operator reads as written
// and cannot reorder or hide what follows it.
func (b *builder) clean(s string) string {
	s = b.redact(s)
	if !needsCleaning(s) {
		return s
	}
	var out strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&out, `\x%02x`, s[i])
		case r == '\n' || r == '\t':
			out.WriteRune(r)
		case r < 0x20:
			fmt.Fprintf(&out, `\x%02x`, r)
		case invisible(r):
			fmt.Fprintf(&out, `\u%04x`, r)
		default:
			out.WriteString(s[i : i+size])
		}
		i += size
	}
	return out.String()
}

func needsCleaning(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || r != '\n' && r != '\t' && (r < 0x20 || invisible(r)) {
			return true
		}
	}
	return false
}

// invisible reports whether r would act on the text around it rather
// than show: DEL, C1 controls, direction marks, embeddings, overrides and
// isolates.
func invisible(r rune) bool {
	return r == 0x7f || r >= 0x80 && r <= 0x9f || r == 0x061c || r == 0x200e || r == 0x200f ||
		r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}

func (b *builder) cleanAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = b.clean(s)
	}
	return out
}

// shot returns the view of a screen path, or nil when it is not one of
// the report's screens.
func (b *builder) shot(path string, mark *events.Point) *shot {
	if !screenPath.MatchString(path) {
		return nil
	}
	size := b.sizes[path]
	s := &shot{Src: path, W: size[0], H: size[1]}
	if mark != nil && image.Pt(mark.X, mark.Y).In(image.Rect(0, 0, s.W, s.H)) {
		p := *mark
		s.Mark = &p
	}
	return s
}

// cropShot is a shot with the crop a zoomed pass looked at drawn on it,
// when the crop lies on the screen.
func (b *builder) cropShot(path string, mark *events.Point, crop *events.Rect) *shot {
	s := b.shot(path, mark)
	// An empty rectangle is in any other, so the crop's size is checked
	// first.
	if s != nil && crop != nil && crop.W > 0 && crop.H > 0 &&
		image.Rect(crop.X, crop.Y, crop.X+crop.W, crop.Y+crop.H).In(image.Rect(0, 0, s.W, s.H)) {
		c := *crop
		s.Crop = &c
	}
	return s
}

func (b *builder) at(t time.Time) string {
	if b.start.IsZero() || t.IsZero() {
		return ""
	}
	return formatDuration(t.Sub(b.start))
}

func formatDuration(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%dms", d.Milliseconds())
	}
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// build makes the view of a run from its events and app.log's tail.
func build(evs []events.Event, appLogTail, appLogNote, warning string, redact func(string) string) view {
	if redact == nil {
		redact = func(s string) string { return s }
	}
	rep := report.Fold(evs)
	b := &builder{redact: redact, sizes: map[string][2]int{}, start: rep.Timing.Started}
	for _, e := range evs {
		if d, ok := events.DataOf[events.ScreenCaptured](e); ok && e.Screen != "" {
			b.sizes[e.Screen] = [2]int{d.Width, d.Height}
		}
		if d, ok := events.DataOf[events.FinalCapture](e); ok && e.Screen != "" {
			b.sizes[e.Screen] = [2]int{d.Width, d.Height}
		}
	}
	v := view{
		Scenario: b.clean(rep.Scenario.Name), File: b.clean(rep.Scenario.File),
		Mode: b.clean(rep.Mode), Goal: b.clean(rep.Goal), Plan: b.cleanAll(rep.Plan),
		Verdict: b.clean(string(rep.Verdict)), Outcome: b.clean(string(rep.Outcome)), Reasons: b.cleanAll(rep.Reasons),
		Concerns: b.cleanAll(rep.Concerns), AppLog: b.clean(appLogTail), AppLogNote: b.clean(appLogNote),
		Warning: b.clean(warning),
	}
	if v.Verdict == "" {
		v.Verdict = "unfinished"
	}
	v.Title = v.Scenario + " — " + v.Verdict
	if rep.ModelVerdict != nil {
		v.Model = &report.ModelVerdict{Verdict: b.clean(rep.ModelVerdict.Verdict), Reason: b.clean(rep.ModelVerdict.Reason)}
	}
	if !rep.Timing.Started.IsZero() {
		v.Started = rep.Timing.Started.Format(time.RFC3339)
		if rep.Timing.Ended != nil {
			v.Duration = formatDuration(rep.Timing.Ended.Sub(rep.Timing.Started))
		}
	}
	v.Checks = b.checks(rep.Checks)
	v.Steps = b.steps(rep, evs)
	for _, st := range v.Steps {
		if st.Status != string(events.StatusOK) {
			v.FirstFailed = st.N
			break
		}
	}
	v.Timeline = b.timeline(evs)
	v.Budgets = b.budgets(evs, rep.Timing)
	for _, q := range rep.Questions {
		v.Questions = append(v.Questions, events.Question{ID: b.clean(q.ID), Text: b.clean(q.Text),
			Answer: b.clean(q.Answer), By: b.clean(q.By), Unanswered: b.clean(q.Unanswered)})
	}
	v.Exchanges = b.exchanges(evs)
	if st := rep.Startup; st != nil {
		v.Startup = &startupView{Reason: b.clean(st.Reason), Match: b.clean(st.Match), Suggestion: b.clean(st.Suggestion),
			Screen: b.shot(st.Screen, nil), Windows: b.windows(st.Windows)}
	}
	if h := rep.Hung; h != nil {
		hv := &hungView{Reason: b.clean(h.Reason), Screen: b.shot(h.Screen, nil), Windows: b.windows(h.Windows)}
		for _, t := range h.Threads {
			hv.Threads = append(hv.Threads, threadView{PID: t.PID, TID: t.TID, Name: b.clean(t.Name), State: b.clean(t.State), Wait: b.clean(t.WChan)})
		}
		v.Hung = hv
	}
	v.Baselines = b.baselines(rep.Baselines)
	if br := rep.Browser; br != nil {
		cv := &consoleView{Summary: fmt.Sprintf("%d messages, %d recorded", br.Total, br.Recorded)}
		for _, c := range br.Console {
			where := c.URL
			if c.Line > 0 {
				where += fmt.Sprintf(":%d", c.Line)
			}
			cv.Entries = append(cv.Entries, consoleEntryView{At: b.at(c.T), Level: b.clean(c.Level), Text: b.clean(c.Text), Where: b.clean(where)})
		}
		v.Console = cv
	}
	if f := rep.Final; f != nil {
		v.Final = &finalView{Screen: b.shot(f.Screen, nil), Ending: b.clean(string(f.Ending)), Note: b.clean(f.Note)}
	}
	return v
}

// windows is the rows of a table of the display's windows.
func (b *builder) windows(ws []events.WindowSeen) []windowView {
	var out []windowView
	for _, w := range ws {
		out = append(out, windowView{ID: b.clean(w.ID), Title: b.clean(w.Title), Class: b.clean(w.Class),
			Instance: b.clean(w.Instance), Geometry: fmt.Sprintf("%dx%d+%d+%d", w.Width, w.Height, w.X, w.Y),
			PID: w.PID, Viewable: w.Viewable, Application: w.Application})
	}
	return out
}

func (b *builder) checks(c report.Checks) []checkView {
	state := func(ok *bool) string {
		switch {
		case ok == nil:
			return "not run"
		case *ok:
			return "ok"
		}
		return "failed"
	}
	fatal := "ok"
	if c.FatalPattern != nil {
		fatal = "failed"
	}
	if c.ProcessAlive == nil && c.WindowPresent == nil && c.FatalPattern == nil && len(c.Evidence) == 0 {
		fatal = "not run"
	}
	out := []checkView{
		{Name: "process_alive", State: state(c.ProcessAlive), Evidence: b.clean(c.Evidence["process_alive"])},
		{Name: "window_present", State: state(c.WindowPresent), Evidence: b.clean(c.Evidence["window_present"])},
		{Name: "fatal_pattern", State: fatal, Evidence: b.clean(c.Evidence["fatal_pattern"])},
	}
	if c.AppResponsive != nil {
		out = append(out, checkView{Name: "app_responsive", State: state(c.AppResponsive), Evidence: b.clean(c.Evidence["app_responsive"])})
	}
	// The checks the scenario declared: a goal's success criteria and the
	// declared tools marked check: true.
	for _, name := range slices.Sorted(maps.Keys(c.Declared)) {
		ok := c.Declared[name]
		out = append(out, checkView{Name: name, State: state(&ok), Evidence: b.clean(c.Evidence[name])})
	}
	for i := range out {
		out[i].ID = anchorID("check", out[i].Name)
	}
	return out
}

func (b *builder) steps(rep report.Report, evs []events.Event) []stepView {
	points := map[int]*events.Point{}
	for _, e := range evs {
		if e.Kind == events.KindStepEnded && e.Point != nil {
			points[e.Step] = e.Point
		}
	}
	grounding := map[int][]groundingView{}
	for _, e := range evs {
		g := e.Grounding
		if e.Kind != events.KindGrounding || g == nil {
			continue
		}
		grounding[g.Step] = append(grounding[g.Step], groundingView{
			Attempt: g.Attempt, Description: b.clean(g.Description), Expect: b.clean(g.Expect),
			Outcome: b.clean(g.Outcome), Reason: b.clean(g.Reason), Point: g.Point,
			Before: b.cropShot(g.Before, g.Point, g.Crop), After: b.shot(g.After, g.Point),
			Pass: g.Pass, Crop: g.Crop,
		})
	}
	out := make([]stepView, 0, len(rep.Steps))
	for _, s := range rep.Steps {
		args, _ := json.Marshal(events.RedactValue(s.Args, b.redact))
		sv := stepView{
			N: s.N, Tool: b.clean(s.Tool), Args: b.clean(string(args)), Source: b.clean(string(s.Source)),
			Status: b.clean(string(s.Status)), Message: b.clean(s.Message), Duration: formatDuration(time.Duration(s.DurationMS) * time.Millisecond),
			Screen: b.shot(s.Screen, points[s.N]), Grounding: grounding[s.N],
		}
		if !b.start.IsZero() {
			sv.OffsetMS = s.Started.Sub(b.start).Milliseconds()
		}
		out = append(out, sv)
	}
	return out
}

// timeline lists what happened, in order; captures, budgets and model
// request sizes have sections of their own.
func (b *builder) timeline(evs []events.Event) []rowView {
	var rows []rowView
	for _, e := range evs {
		row := rowView{At: b.at(e.T), Class: "info"}
		switch e.Kind {
		case events.KindScreen, events.KindBudget, events.KindModelRequest, events.KindStepStarted, events.KindProposal:
			continue
		case events.KindStepEnded:
			row.Class, row.Step = string(e.Status), e.Step
			argText, _ := json.Marshal(events.RedactValue(e.Args, b.redact))
			row.Text = fmt.Sprintf("step %d %s %s → %s: %s", e.Step, e.Tool, argText, strings.ToUpper(string(e.Status)), e.Message)
		case events.KindGrounding:
			row.Class, row.Step = "grounding", e.Step
			if g := e.Grounding; g != nil {
				row.Text = fmt.Sprintf("grounding step %d attempt %d %q: %s %s", g.Step, g.Attempt, g.Description, g.Outcome, g.Reason)
			}
		case events.KindConcern:
			row.Class, row.Text = "concern", "concern: "+e.Message
		case events.KindCheck:
			if c := e.Check; c != nil {
				row.Class, row.Text = "ok", "check "+c.Name+" ok"
				if !c.OK {
					row.Class, row.Text = "error", "check "+c.Name+" FAILED: "+c.Evidence
				}
			}
		case events.KindQuestion, events.KindAnswer:
			row.Class = "question"
			if q := e.Question; q != nil {
				row.Text = fmt.Sprintf("%s %s: %s", e.Kind, q.ID, q.Text)
				if q.Answer != "" {
					row.Text += " → " + q.Answer
				} else if q.Unanswered != "" {
					row.Text += " (unanswered: " + q.Unanswered + ")"
				}
			}
		case events.KindVerdict:
			if v := e.Verdict; v != nil {
				row.Class = verdictClass(v.Verdict)
				row.Text = fmt.Sprintf("verdict %s (%s) %s", v.Verdict, v.Outcome, strings.Join(v.Reasons, "; "))
			}
		case events.KindSteer:
			if s := e.Steer; s != nil {
				row.Text = strings.TrimSpace("operator " + s.Action + " " + s.Value + " " + s.Reason)
			}
		case events.KindModelFailed, events.KindModelRetry, events.KindModelDisabled:
			row.Class, row.Text = "concern", string(e.Kind)+": "+e.Message
		case events.KindFinal:
			row.Text = "final capture " + e.Screen + e.Message
			if d, ok := events.DataOf[events.FinalCapture](e); ok {
				row.Text = fmt.Sprintf("final capture (%s) %s%s", d.Ending, e.Screen, e.Message)
			}
		case events.KindAppWindow:
			row.Text = "app window"
			if d, ok := events.DataOf[events.AppWindow](e); ok {
				row.Text = fmt.Sprintf("app window %s %q (%s)", d.ID, d.Title, d.Class)
			}
		case events.KindAppLaunched:
			row.Text = "app launched"
			if d, ok := events.DataOf[events.AppLaunched](e); ok {
				row.Text = fmt.Sprintf("app launched: %s (pid %d)", strings.Join(d.Command, " "), d.PID)
			}
		case events.KindModelReply:
			row.Text = "model reply: " + e.Message
		case events.KindLoopEnded:
			row.Text = "loop ended: " + e.Message
		case events.KindRunStarted, events.KindDisplayStarted, events.KindTools, events.KindAppExited,
			events.KindAppWindows, events.KindAppHung, events.KindConsole, events.KindConsoleSummary,
			events.KindCapacityWait, events.KindCapacityAcquired, events.KindRespond, events.KindLog, events.KindRunEnded,
			events.KindBaseline, events.KindTakeoverStarted, events.KindTakeoverEnded:
			// A row of the kind and its message; the page's sections show
			// the detail (the run's header, startup, hung, the console,
			// the screenshot checks).
			row.Text = kindLine(e)
		case events.KindCache:
			// The account names the mode, the hits and misses, where the
			// model took over and the model calls saved.
			row.Text = e.Message
		default:
			// A kind from a newer version of kasmrt.
			row.Text = kindLine(e)
		}
		row.Text = b.clean(row.Text)
		rows = append(rows, row)
	}
	return rows
}

// kindLine is a timeline row that names the event's kind and says its
// message.
func kindLine(e events.Event) string {
	if e.Message != "" {
		return string(e.Kind) + ": " + e.Message
	}
	return string(e.Kind)
}

func verdictClass(v events.Verdict) string {
	switch v {
	case events.VerdictPass:
		return "ok"
	case events.VerdictPassConcerns:
		return "concern"
	}
	return "error"
}

// budgets draws every bound's use over the run's time.
func (b *builder) budgets(evs []events.Event, timing report.Timing) []budgetView {
	type sample struct {
		t    time.Duration
		used float64
	}
	series := map[string][]sample{}
	last := map[string]events.Budget{}
	var order []string
	var end time.Duration
	for _, e := range evs {
		if e.Kind != events.KindBudget {
			continue
		}
		at := e.T.Sub(timing.Started)
		end = max(end, at)
		for _, bd := range e.Budgets {
			if _, seen := last[bd.Name]; !seen {
				order = append(order, bd.Name)
			}
			last[bd.Name] = bd
			series[bd.Name] = append(series[bd.Name], sample{at, bd.Used})
		}
	}
	if timing.Ended != nil {
		end = max(end, timing.Ended.Sub(timing.Started))
	}
	var out []budgetView
	for _, name := range order {
		bd := last[name]
		top := bd.Limit
		for _, s := range series[name] {
			top = max(top, s.used)
		}
		var pts []string
		for _, s := range series[name] {
			x, y := 0.0, 20.0
			if end > 0 {
				x = 100 * float64(s.t) / float64(end)
			}
			if top > 0 {
				y = 20 - 20*s.used/top
			}
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, y))
		}
		limit := "unbounded"
		if bd.Limit > 0 {
			limit = fmt.Sprintf("%g", bd.Limit)
		}
		out = append(out, budgetView{Name: b.clean(bd.Name), Used: fmt.Sprintf("%g %s", bd.Used, b.clean(bd.Unit)),
			Limit: limit, Points: strings.Join(pts, " ")})
	}
	return out
}

// exchanges pairs each model request with its reply or failure.
func (b *builder) exchanges(evs []events.Event) []exchangeView {
	var out []exchangeView
	var cur *exchangeView
	for _, e := range evs {
		switch e.Kind {
		case events.KindModelRequest:
			// A request without its payload still opens an exchange, so
			// its reply has one to join.
			x := exchangeView{}
			if d, ok := events.DataOf[events.ModelRequest](e); ok {
				x.Iteration = d.Iteration
				x.Request = fmt.Sprintf("%d messages, %d images (%d bytes)", d.Messages, d.Images, d.ImageBytes)
			}
			out = append(out, x)
			cur = &out[len(out)-1]
		case events.KindModelReply, events.KindModelFailed:
			if cur == nil {
				out = append(out, exchangeView{})
				cur = &out[len(out)-1]
			}
			cur.Reply = b.clean(e.Message)
			cur.Duration = formatDuration(time.Duration(e.DurationMS) * time.Millisecond)
			cur.Status = "ok"
			if e.Kind == events.KindModelFailed {
				cur.Status = "error"
			}
			keys := make([]string, 0, len(e.Usage))
			for k := range e.Usage {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			var parts []string
			for _, k := range keys {
				parts = append(parts, fmt.Sprintf("%s %g", b.clean(k), e.Usage[k]))
			}
			cur.Usage = strings.Join(parts, ", ")
			cur = nil
		}
	}
	return out
}
