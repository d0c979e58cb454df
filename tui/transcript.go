package tui

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kasmrt/kasmrt/engine/events"
)

// Transcript writes a run's events as plain text: every event the console
// shows, one line each in order, then the end state (budgets, concerns,
// questions and answers, verdict). It is replay --print and the headless
// console's output, so CI logs carry what an operator would have seen.
func Transcript(w io.Writer, evs []events.Event) error {
	bw := bufio.NewWriter(w)
	st := NewState()
	var start time.Time
	for i, e := range evs {
		st.Apply(i, e)
		if start.IsZero() && !e.T.IsZero() {
			start = e.T
		}
		line := transcriptLine(e)
		if line == "" {
			continue
		}
		at := "        "
		if !e.T.IsZero() && !start.IsZero() {
			at = fmt.Sprintf("%7.3fs", e.T.Sub(start).Seconds())
		}
		fmt.Fprintf(bw, "%s %s\n", at, line)
	}
	writeSummary(bw, st)
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write transcript: %w", err)
	}
	return nil
}

func transcriptLine(e events.Event) string {
	switch e.Kind {
	case events.KindRunStarted:
		d, _ := e.Data.(events.RunStarted)
		s := fmt.Sprintf("run started: %s (%s)", d.Scenario, d.Mode)
		if d.Goal != "" {
			s += fmt.Sprintf(" goal %q", d.Goal)
		}
		if d.DeadlineS > 0 {
			s += fmt.Sprintf(" deadline %gs (last %s reserved)", d.DeadlineS, reserveOf(d))
		}
		return s
	case events.KindSessionStarted:
		d, _ := e.Data.(events.SessionStarted)
		return fmt.Sprintf("session %s %dx%d owned=%v", d.Display, d.Width, d.Height, d.Owned)
	case events.KindAppLaunched:
		return formatAppLaunched(e)
	case events.KindAppWindow:
		d, _ := e.Data.(events.AppWindow)
		return fmt.Sprintf("app window %s %q at %s", d.ID, d.Title, formatRect(e.Box))
	case events.KindAppExited:
		return "app exited: " + e.Message
	case events.KindAppWindows:
		return "startup: " + e.Message
	case events.KindConsoleSummary:
		d, _ := e.Data.(events.ConsoleSummary)
		return fmt.Sprintf("browser console: %d messages (%d recorded)", d.Total, d.Recorded)
	case events.KindConsole:
		d, _ := e.Data.(events.ConsoleMessage)
		s := fmt.Sprintf("browser %s: %s", d.Level, d.Text)
		if d.URL != "" {
			u := d.URL
			if d.Line > 0 {
				u += fmt.Sprintf(":%d", d.Line)
			}
			s += " (" + u + ")"
		}
		return s
	case events.KindScreen:
		d, _ := e.Data.(events.ScreenCaptured)
		return fmt.Sprintf("screen %s %dx%d", e.Screen, d.Width, d.Height)
	case events.KindStepStarted:
		s := fmt.Sprintf("step %d started: %s %s", e.Step, e.Tool, formatArgs(e.Args))
		if e.Source != "" {
			s += " [" + e.Source + "]"
		}
		return s
	case events.KindStepEnded:
		s := fmt.Sprintf("step %d %s %s → %s in %s", e.Step, e.Tool, formatArgs(e.Args), strings.ToUpper(e.Status), formatDuration(e.DurationMS))
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
		d, _ := e.Data.(events.ModelRequest)
		return fmt.Sprintf("model request: turn %d, %d messages, %d images (%d bytes)", d.Iteration, d.Messages, d.Images, d.ImageBytes)
	case events.KindModelReply:
		s := fmt.Sprintf("model reply in %s", formatDuration(e.DurationMS))
		if e.Message != "" {
			s += fmt.Sprintf(": %q", e.Message)
		}
		return s
	case events.KindModelRetry:
		d, _ := e.Data.(events.ModelRetry)
		return fmt.Sprintf("model retry %d (status %d, after %dms): %s", d.Attempt, d.Status, d.DelayMS, e.Message)
	case events.KindModelFailed:
		d, _ := e.Data.(events.ModelFailed)
		return fmt.Sprintf("model failed (%d in a row): %s", d.Consecutive, e.Message)
	case events.KindModelDisabled:
		return "model disabled: " + e.Message
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
	case events.KindVerdict:
		if e.Verdict == nil {
			return "verdict"
		}
		return fmt.Sprintf("verdict %s (%s)", e.Verdict.Verdict, e.Verdict.Outcome)
	case events.KindRunEnded:
		return "run ended"
	case events.KindLog:
		return "log: " + e.Message
	}
	return string(e.Kind)
}

func writeSummary(w io.Writer, st *State) {
	fmt.Fprintln(w)
	fmt.Fprintln(w, "== summary ==")
	steps, refused := 0, 0
	for _, r := range st.Rows {
		if r.Kind == RowStep {
			steps++
			if r.Refusal() {
				refused++
			}
		}
	}
	fmt.Fprintf(w, "steps: %d (%d refused or malformed)\n", steps, refused)
	if len(st.Budgets) > 0 {
		fmt.Fprintln(w, "budgets at end:")
		for _, b := range st.Budgets {
			fmt.Fprintf(w, "  %-20s %s\n", b.Name, formatBudget(b))
		}
	}
	if st.Deadline > 0 {
		fmt.Fprintf(w, "deadline: %s, %s left at the last event (last %s reserved)\n", formatClock(st.Deadline), formatClock(st.Remaining()), formatClock(st.Reserve))
	}
	if len(st.Concerns) > 0 {
		fmt.Fprintln(w, "concerns:")
		for _, c := range st.Concerns {
			fmt.Fprintf(w, "  - %s\n", c)
		}
	}
	if len(st.Questions) > 0 {
		fmt.Fprintln(w, "questions:")
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
			fmt.Fprintf(w, "  %s: %s → %s\n", q.ID, q.Text, ans)
		}
	}
	if st.Verdict != nil {
		fmt.Fprintf(w, "verdict: %s (%s)\n", st.Verdict.Verdict, st.Verdict.Outcome)
		for _, r := range st.Verdict.Reasons {
			fmt.Fprintf(w, "  - %s\n", r)
		}
	} else {
		fmt.Fprintln(w, "verdict: none recorded (the run did not finish)")
	}
}
