package tui

import (
	"fmt"
	"strings"

	"github.com/kasmrt/kasmrt/themes"
)

// budgetLines is how many lines budgetsView writes for s at width w, so
// the layout can size the budgets pane.
func budgetLines(s *State, w int) int {
	n := len(s.Budgets) + len(noClickElementLines(s, w))
	if s.Deadline > 0 {
		n++
	}
	if tokens(s.Usage) > 0 {
		n++
	}
	return max(1, n)
}

// summaryView is the compact layout's budgets and verdict in h lines of
// width w: the verdict (or how the run stands), the deadline and tokens,
// then the bounds that have a limit, the exhausted ones first.
func summaryView(st themes.Styles, s *State, w, h int) string {
	var lines []string
	switch {
	case s.Verdict != nil:
		line := verdictLine(st, s.Verdict)
		if len(s.Verdict.Reasons) > 0 {
			line += st.Muted.Render(" · " + s.Verdict.Reasons[0])
		}
		lines = append(lines, line)
	case s.Aborted:
		lines = append(lines, st.VerdictFail.Render("aborting…"))
	case s.LoopEnded != "":
		lines = append(lines, st.Muted.Render("loop ended: "+s.LoopEnded))
	default:
		lines = append(lines, st.Muted.Render("undecided"))
	}
	var clock []string
	if s.Deadline > 0 {
		left := s.Remaining()
		c := fmt.Sprintf("deadline %s/%s", formatClock(left), formatClock(s.Deadline))
		if left <= s.Reserve {
			c = st.BudgetWarn.Render(c + " IN RESERVE")
		}
		clock = append(clock, c)
	}
	if t := tokens(s.Usage); t > 0 {
		clock = append(clock, fmt.Sprintf("tokens %s", formatAmount(t, "")))
	}
	if n := len(s.Concerns); n > 0 {
		clock = append(clock, st.StepMalformed.Render(fmt.Sprintf("%d concern(s)", n)))
	}
	if len(clock) > 0 {
		lines = append(lines, strings.Join(clock, st.Muted.Render(" · ")))
	}
	var spent, rest []string
	for _, b := range s.Budgets {
		if b.Limit <= 0 {
			continue
		}
		item := b.Name + " " + formatBudget(b)
		if b.Used >= b.Limit {
			spent = append(spent, st.BudgetWarn.Render(item))
		} else {
			rest = append(rest, item)
		}
	}
	if bounds := append(spent, rest...); len(bounds) > 0 {
		for _, l := range wrap(strings.Join(bounds, " · "), w) {
			lines = append(lines, l)
		}
	}
	if len(lines) > h {
		lines = lines[:h]
	}
	return strings.Join(lines, "\n")
}
