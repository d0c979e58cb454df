package tui

import (
	"encoding/json"
	"fmt"
	"math"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/themes"
	"github.com/kasmrt/kasmrt/tui/sanitize"
)

// formatArgs writes a call's arguments as the runtime saw them: compact
// JSON with sorted keys, "{}" for none.
func formatArgs(args map[string]any) string {
	if len(args) == 0 {
		return "{}"
	}
	b, err := json.Marshal(args)
	if err != nil {
		return fmt.Sprintf("%v", args)
	}
	return string(b)
}

// formatDuration writes a step duration in milliseconds compactly.
func formatDuration(ms int64) string {
	switch {
	case ms < 1000:
		return fmt.Sprintf("%dms", ms)
	case ms < 60_000:
		return fmt.Sprintf("%.1fs", float64(ms)/1000)
	}
	return (time.Duration(ms) * time.Millisecond).Round(time.Second).String()
}

// formatClock writes a countdown as m:ss.
func formatClock(d time.Duration) string {
	d = d.Round(time.Second)
	return fmt.Sprintf("%d:%02d", int(d.Minutes()), int(d.Seconds())%60)
}

// formatAmount writes a budget amount with its unit.
func formatAmount(v float64, unit string) string {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if v != math.Trunc(v) {
		s = strconv.FormatFloat(v, 'f', 1, 64)
	}
	if unit != "" {
		s += unit
	}
	return s
}

// formatBudget writes "used/limit unit" (limit "∞" when unbounded).
func formatBudget(b events.Budget) string {
	limit := "∞"
	if b.Limit > 0 {
		limit = formatAmount(b.Limit, "")
	}
	s := formatAmount(b.Used, "") + "/" + limit
	if b.Unit != "" {
		s += " " + b.Unit
	}
	return s
}

// formatPoint writes a pixel position.
func formatPoint(p *events.Point) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("(%d,%d)", p.X, p.Y)
}

// formatRect writes a pixel rectangle.
func formatRect(r *events.Rect) string {
	if r == nil {
		return "-"
	}
	return fmt.Sprintf("%dx%d+%d+%d", r.W, r.H, r.X, r.Y)
}

// screenNumber reads the capture number from "screens/0012.png" (0 when
// the name has none).
func screenNumber(p string) int {
	n, _ := strconv.Atoi(strings.TrimSuffix(path.Base(p), path.Ext(p)))
	return n
}

// formatGrounding writes one grounding attempt on one line.
func formatGrounding(g *events.Grounding) string {
	if g == nil {
		return "grounding"
	}
	s := fmt.Sprintf("grounding step %d attempt %d: %q expect %q → %s at %s",
		g.Step, g.Attempt, g.Description, g.Expect, g.Outcome, formatPoint(g.Point))
	if g.Pass > 0 {
		on := "the whole screen"
		if c := g.Crop; c != nil {
			on = fmt.Sprintf("the %dx%d crop at %d,%d", c.W, c.H, c.X, c.Y)
		}
		s += fmt.Sprintf(" (pass %d, on %s)", g.Pass, on)
	}
	if g.Reason != "" {
		s += ": " + g.Reason
	}
	return s
}

// formatSteer writes an operator action.
func formatSteer(s *events.Steer) string {
	if s == nil {
		return "steer"
	}
	out := "operator " + s.Action
	if s.Value != "" {
		out += " " + strconv.Quote(s.Value)
	}
	if s.Reason != "" {
		out += " because " + strconv.Quote(s.Reason)
	}
	return out
}

// rowText is a timeline row as plain text, without the status (which the
// timeline styles separately).
func rowText(r Row) (text, status string) {
	e := r.Event
	switch r.Kind {
	case RowStep:
		text = fmt.Sprintf("%3d %s %s", e.Step, e.Tool, formatArgs(e.Args))
		if e.Source != "" && e.Source != events.SourceModel {
			text += " [" + string(e.Source) + "]"
		}
		status = r.Status()
		if r.Ended != nil {
			status += " " + formatDuration(r.Ended.DurationMS)
			if r.Ended.Message != "" {
				status += ": " + r.Ended.Message
			}
		}
		return text, status
	case RowGrounding:
		return "    " + formatGrounding(e.Grounding), ""
	case RowSteer:
		// ▶, not ⏵: DejaVu Sans Mono, a common terminal font, has no ⏵
		// (TestConsoleGlyphsInDejaVuSansMono).
		return "  ▶ " + formatSteer(e.Steer), ""
	case RowModel:
		return fmt.Sprintf("  ! %s: %s", e.Kind, e.Message), ""
	case RowCheck:
		// The mark says how the check went: a failed check or a window
		// that did not match its baseline is not drawn with a tick.
		if d, ok := events.DataOf[events.Baseline](e); ok {
			mark := "✓"
			if d.Result != events.BaselineMatched && d.Result != events.BaselineWritten {
				mark = "✗"
			}
			return "  " + mark + " " + e.Message, ""
		}
		c := e.Check
		res, mark := "ok", "✓"
		if !c.OK {
			res, mark = "FAILED", "✗"
		}
		text = fmt.Sprintf("  %s check %s %s", mark, c.Name, res)
		if c.Evidence != "" {
			text += ": " + c.Evidence
		}
		return text, ""
	case RowApp:
		switch e.Kind {
		case events.KindAppLaunched:
			return "  " + formatAppLaunched(e), ""
		case events.KindAppWindows:
			return "  startup: " + e.Message, ""
		case events.KindAppHung:
			return "  app hung: " + e.Message, ""
		case events.KindConsole:
			d, ok := events.DataOf[events.ConsoleMessage](e)
			if !ok {
				return "  browser console", ""
			}
			return fmt.Sprintf("  browser %s: %s", d.Level, d.Text), ""
		case events.KindFinal:
			return "  " + formatFinal(e), ""
		case events.KindTakeoverStarted, events.KindTakeoverEnded:
			return "  " + formatTakeover(e), ""
		}
		return "  app exited: " + e.Message, ""
	case RowLoop:
		if e.Kind == events.KindCache {
			return "  " + e.Message, ""
		}
		return "  loop ended: " + e.Message, ""
	}
	return string(e.Kind), ""
}

// formatFinal says what the run's last capture is, or why there is none.
func formatFinal(e events.Event) string {
	what := "final capture"
	if d, ok := events.DataOf[events.FinalCapture](e); ok {
		what += " (" + string(d.Ending) + ")"
	}
	if e.Screen == "" {
		return what + ": " + e.Message
	}
	return what + ": " + e.Screen
}

func formatAppLaunched(e events.Event) string {
	d, ok := events.DataOf[events.AppLaunched](e)
	if !ok {
		return "app launched"
	}
	return fmt.Sprintf("app launched: %s (pid %d)", strings.Join(d.Command, " "), d.PID)
}

// pendingLine is the timeline's last line while a call waits for the
// operator's approval in step mode; what it waits for comes first, so a
// narrow timeline still says it.
func pendingLine(st themes.Styles, p *events.Event) string {
	return st.Question.Render(fmt.Sprintf("▷ %2d awaits approval (a/r): ", p.Step)) +
		st.Base.Render(sanitize.Line(p.Tool)+" "+formatArgs(p.Args))
}
