package tui

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/tui/sanitize"
)

// Printer renders a run's events as plain text: every event the console
// shows, one line each as it comes, then, when asked, the end state
// (budgets, concerns, questions and answers, verdict). It is the one
// renderer of `run --headless` (live, as a bus sink) and `replay --print`
// (from a report), so CI logs carry what an operator would have seen.
// Every untrusted value passes through the sanitizer first, so nothing
// the model, the application or a tool wrote can act on the terminal.
type Printer struct {
	mu    sync.Mutex
	w     io.Writer
	st    *State
	n     int
	start time.Time
	err   error
}

// NewPrinter returns a printer writing to w.
func NewPrinter(w io.Writer) *Printer { return &Printer{w: w, st: NewState()} }

// Event prints e's line. It is safe for concurrent use, as a bus sink.
func (p *Printer) Event(e events.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.st.Apply(p.n, e)
	p.n++
	if p.start.IsZero() && !e.T.IsZero() {
		p.start = e.T
	}
	line := transcriptLine(e)
	if line == "" {
		return
	}
	at := "        "
	if !e.T.IsZero() && !p.start.IsZero() {
		at = fmt.Sprintf("%7.3fs", e.T.Sub(p.start).Seconds())
	}
	p.printf("%s %s\n", at, sanitize.Line(line))
}

// Printed is how many events the printer has been given.
func (p *Printer) Printed() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n
}

// Summary prints the end state. fallback is the verdict to show when the
// stream has none (report.json's, for a stream that lost its verdict
// line); nil says the run did not finish. It returns the first write
// error of the printer's life.
func (p *Printer) Summary(fallback *events.Decision) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	writeSummary(printfFunc(p.printf), p.st, fallback)
	if p.err != nil {
		return fmt.Errorf("write transcript: %w", p.err)
	}
	return nil
}

func (p *Printer) printf(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

type printfFunc func(format string, args ...any)

// PrintReport writes a report's transcript: its events and end state,
// with report.json's verdict when the stream lost its own.
func PrintReport(w io.Writer, r *Report) error {
	bw := bufio.NewWriter(w)
	p := NewPrinter(bw)
	for _, e := range r.Events {
		p.Event(e)
	}
	err := p.Summary(r.Verdict())
	if ferr := bw.Flush(); err == nil && ferr != nil {
		err = fmt.Errorf("write transcript: %w", ferr)
	}
	return err
}

func transcriptLine(e events.Event) string {
	switch e.Kind {
	case events.KindRunStarted:
		d, ok := events.DataOf[events.RunStarted](e)
		if !ok {
			return "run started"
		}
		s := fmt.Sprintf("run started: %s (%s)", d.Scenario, d.Mode)
		if d.Goal != "" {
			s += fmt.Sprintf(" goal %q", d.Goal)
		}
		if d.DeadlineS > 0 {
			s += fmt.Sprintf(" deadline %gs (last %s reserved)", d.DeadlineS, reserveOf(d))
		}
		return s
	case events.KindDisplayStarted:
		d, ok := events.DataOf[events.DisplayStarted](e)
		if !ok {
			return "session started"
		}
		return fmt.Sprintf("session %s %dx%d owned=%v", d.Display, d.Width, d.Height, d.Owned)
	case events.KindAppLaunched:
		return formatAppLaunched(e)
	case events.KindAppWindow:
		d, ok := events.DataOf[events.AppWindow](e)
		if !ok {
			return "app window at " + formatRect(e.Box)
		}
		return fmt.Sprintf("app window %s %q at %s", d.ID, d.Title, formatRect(e.Box))
	case events.KindAppExited:
		return "app exited: " + e.Message
	case events.KindAppWindows:
		return "startup: " + e.Message
	case events.KindTakeoverStarted, events.KindTakeoverEnded:
		return formatTakeover(e)
	case events.KindAppHung:
		d, ok := events.DataOf[events.AppHung](e)
		if !ok {
			return "app hung: " + e.Message
		}
		return fmt.Sprintf("app hung: %s; %s", e.Message, formatThreads(d.Threads))
	case events.KindConsoleSummary:
		d, ok := events.DataOf[events.ConsoleSummary](e)
		if !ok {
			return "browser console closed"
		}
		return fmt.Sprintf("browser console: %d messages (%d recorded)", d.Total, d.Recorded)
	case events.KindConsole:
		d, ok := events.DataOf[events.ConsoleMessage](e)
		if !ok {
			return "browser console"
		}
		s := fmt.Sprintf("browser %s: %s", d.Level, d.Text)
		if d.URL != "" {
			u := d.URL
			if d.Line > 0 {
				u += fmt.Sprintf(":%d", d.Line)
			}
			s += " (" + u + ")"
		}
		return s
	case events.KindFinal:
		return formatFinal(e)
	case events.KindScreen:
		d, ok := events.DataOf[events.ScreenCaptured](e)
		if !ok {
			return "screen " + e.Screen
		}
		return fmt.Sprintf("screen %s %dx%d", e.Screen, d.Width, d.Height)
	case events.KindStepStarted:
		s := fmt.Sprintf("step %d started: %s %s", e.Step, e.Tool, formatArgs(e.Args))
		if e.Source != "" {
			s += " [" + string(e.Source) + "]"
		}
		return s
	case events.KindStepEnded:
		s := fmt.Sprintf("step %d %s %s → %s in %s", e.Step, e.Tool, formatArgs(e.Args), strings.ToUpper(string(e.Status)), formatDuration(e.DurationMS))
		if e.Message != "" {
			s += ": " + e.Message
		}
		if e.Point != nil {
			s += " at " + formatPoint(e.Point)
		}
		if e.Screen != "" {
			s += " [" + e.Screen + "]"
		}
		return s
	case events.KindProposal:
		return fmt.Sprintf("proposal step %d: %s %s (waiting for approval)", e.Step, e.Tool, formatArgs(e.Args))
	case events.KindModelRequest:
		d, ok := events.DataOf[events.ModelRequest](e)
		if !ok {
			return "model request"
		}
		return fmt.Sprintf("model request: turn %d, %d messages, %d images (%d bytes)", d.Iteration, d.Messages, d.Images, d.ImageBytes)
	case events.KindModelReply:
		s := fmt.Sprintf("model reply in %s", formatDuration(e.DurationMS))
		if e.Message != "" {
			s += fmt.Sprintf(": %q", e.Message)
		}
		return s
	case events.KindModelRetry:
		d, ok := events.DataOf[events.ModelRetry](e)
		if !ok {
			return "model retry: " + e.Message
		}
		return fmt.Sprintf("model retry %d (status %d, after %dms): %s", d.Attempt, d.Status, d.DelayMS, e.Message)
	case events.KindModelFailed:
		d, ok := events.DataOf[events.ModelFailed](e)
		if !ok {
			return "model failed: " + e.Message
		}
		return fmt.Sprintf("model failed (%d in a row): %s", d.Consecutive, e.Message)
	case events.KindModelDisabled:
		return "model disabled: " + e.Message
	case events.KindCapacityWait, events.KindCapacityAcquired:
		return e.Message
	case events.KindGrounding:
		s := formatGrounding(e.Grounding)
		if e.Box != nil {
			s += " box " + formatRect(e.Box)
		}
		if g := e.Grounding; g != nil && (g.Before != "" || g.After != "") {
			s += fmt.Sprintf(" [before %s, after %s]", g.Before, g.After)
		}
		return s
	case events.KindBudget:
		var parts []string
		for _, b := range e.Budgets {
			parts = append(parts, b.Name+" "+formatBudget(b))
		}
		return "budgets: " + strings.Join(parts, ", ")
	case events.KindConcern:
		return "CONCERN: " + e.Message
	case events.KindCheck:
		if e.Check == nil {
			return "check"
		}
		s := fmt.Sprintf("check %s ok=%v", e.Check.Name, e.Check.OK)
		if e.Check.Evidence != "" {
			s += ": " + e.Check.Evidence
		}
		return s
	case events.KindQuestion:
		if e.Question == nil {
			return "question"
		}
		return fmt.Sprintf("QUESTION %s: %s", e.Question.ID, e.Question.Text)
	case events.KindAnswer:
		if e.Question == nil {
			return "answer"
		}
		if e.Question.Answer == "" {
			return fmt.Sprintf("answer %s: none (%s)", e.Question.ID, e.Question.Unanswered)
		}
		return fmt.Sprintf("answer %s by %s: %s", e.Question.ID, e.Question.By, e.Question.Answer)
	case events.KindRespond:
		return "model says: " + e.Message
	case events.KindSteer:
		return formatSteer(e.Steer)
	case events.KindLoopEnded:
		return "loop ended: " + e.Message
	case events.KindCache:
		return e.Message
	case events.KindVerdict:
		if e.Verdict == nil {
			return "verdict"
		}
		return fmt.Sprintf("verdict %s (%s)", e.Verdict.Verdict, e.Verdict.Outcome)
	case events.KindRunEnded:
		if d, ok := events.DataOf[events.RunEnded](e); ok && d.Report != "" {
			return "run ended; report: " + d.Report
		}
		return "run ended"
	case events.KindTools:
		return "tools: " + e.Message
	case events.KindLog:
		return "log: " + e.Message
	case events.KindBaseline:
		// The message says the check, its result and how many pixels
		// differ; the images it kept are the report's to show.
		s := e.Message
		if d, ok := events.DataOf[events.Baseline](e); ok && d.Diff != "" {
			s += " [diff " + d.Diff + "]"
		}
		return s
	}
	return string(e.Kind)
}

// writeSummary prints the end state; every value from the run is
// sanitized on the way.
func writeSummary(printf printfFunc, st *State, fallback *events.Decision) {
	line := sanitize.Line
	printf("\n== summary ==\n")
	steps, refused := 0, 0
	for _, r := range st.Rows {
		if r.Kind == RowStep {
			steps++
			if r.Refusal() {
				refused++
			}
		}
	}
	printf("steps: %d (%d refused or malformed)\n", steps, refused)
	if len(st.Budgets) > 0 {
		printf("budgets at end:\n")
		for _, b := range st.Budgets {
			printf("  %-20s %s\n", line(b.Name), line(formatBudget(b)))
		}
	}
	if st.Deadline > 0 {
		printf("deadline: %s, %s left at the last event (last %s reserved)\n", formatClock(st.Deadline), formatClock(st.Remaining()), formatClock(st.Reserve))
	}
	if len(st.Concerns) > 0 {
		printf("concerns:\n")
		for _, c := range st.Concerns {
			printf("  - %s\n", line(c))
		}
	}
	if len(st.Questions) > 0 {
		printf("questions:\n")
		for _, q := range st.Questions {
			ans := q.Answer
			switch {
			case ans != "":
				ans = fmt.Sprintf("%q by %s", ans, q.By)
			case q.Unanswered != "":
				ans = "unanswered: " + q.Unanswered
			default:
				ans = "still waiting"
			}
			printf("  %s: %s → %s\n", line(q.ID), line(q.Text), line(ans))
		}
	}
	v, from := st.Verdict, ""
	if v == nil && fallback != nil {
		v, from = fallback, " (from report.json; the event stream has no verdict)"
	}
	if v == nil {
		printf("verdict: none recorded (the run did not finish)\n")
		return
	}
	printf("verdict: %s (%s)%s\n", line(string(v.Verdict)), line(string(v.Outcome)), from)
	for _, r := range v.Reasons {
		printf("  - %s\n", line(r))
	}
}

// formatThreads says where each of the application's threads waits, as
// "python3 12231 S hrtimer_nanosleep".
func formatThreads(ts []events.ThreadSeen) string {
	if len(ts) == 0 {
		return "no threads were read"
	}
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = fmt.Sprintf("%s %d %s", t.Name, t.TID, t.State)
		if t.WChan != "" {
			parts[i] += " " + t.WChan
		}
	}
	return "threads: " + strings.Join(parts, ", ")
}
