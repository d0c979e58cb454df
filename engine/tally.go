package engine

import (
	"fmt"
	"strings"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/scenarios"
)

// callTally is what became of the calls a model or an outside agent
// chose, for the verdict: a goal-met recorded after failed checks or
// failed input must not read as a clean pass.
type callTally struct {
	// notDone lists the tools of the calls that did not succeed, in
	// order, by status (refused, malformed, error).
	notDone map[events.Status][]string
	// lastDeclared is each declared tool's last call that ran.
	lastDeclared map[string]declaredCall
	// declaredOrder lists the declared tools in the order they first ran,
	// so the verdict names them in a stable order.
	declaredOrder []string
	// failedInputs counts the input actions since the last one that
	// succeeded: all of them did not succeed. failedInput lists the most
	// recent of them (at most maxListed), each as "tool (status)".
	failedInputs int
	failedInput  []string
}

// maxListed bounds the input actions, and the tools of each status, the
// verdict names: a reply of hundreds of calls is summarised, not listed.
const maxListed = 5

// maxTalliedName bounds a tool name the verdict's reasons quote.
const maxTalliedName = 64

// declaredCall is a declared tool's last call that ran.
type declaredCall struct {
	ok bool
	// failed is set when the command ran and exited non-zero or timed out
	// (not when it could not run at all, or was interrupted).
	failed bool
	// check is set when the scenario marks the tool check: true.
	check   bool
	message string
}

// tally records the end of a call the model or an agent chose; scripted
// steps fail the run on their own. spec is the call's tool (zero for an
// unknown one); ran says the call got past the guards.
func (s *runState) tally(c call, spec scenarios.ToolSpec, res result, ran bool) {
	if !c.Source.Planned() && c.Source != events.SourceAgent {
		return
	}
	s.outcome.calls.record(c.Tool, spec, res, ran, s.files.Scenario.Tools[c.Tool].Check)
}

// record counts a call's end: a call that did not succeed by status, a
// declared tool's call that ran as its last, an input action by whether
// it succeeded. check is set when the scenario marks the tool check: true.
func (t *callTally) record(tool string, spec scenarios.ToolSpec, res result, ran, check bool) {
	if res.status != events.StatusOK {
		if t.notDone == nil {
			t.notDone = map[events.Status][]string{}
		}
		// A malformed call's name is whatever the model wrote: kept short.
		t.notDone[res.status] = append(t.notDone[res.status], truncate(tool, maxTalliedName))
	}
	if spec.Declared && ran {
		t.noteDeclared(tool, res, check)
	}
	if spec.ChangesScreen && !spec.Holds && !spec.Declared {
		if res.status == events.StatusOK {
			t.failedInputs, t.failedInput = 0, nil
		} else {
			t.failedInputs++
			t.failedInput = append(t.failedInput, fmt.Sprintf("%s (%s)", truncate(tool, maxTalliedName), res.status))
			if len(t.failedInput) > maxListed {
				t.failedInput = t.failedInput[1:]
			}
		}
	}
}

// noteDeclared records a declared tool's call that ran, whoever made it:
// the success criteria's own run of a tool is its latest call too. check
// is set when the scenario marks the tool check: true.
func (t *callTally) noteDeclared(tool string, res result, check bool) {
	if t.lastDeclared == nil {
		t.lastDeclared = map[string]declaredCall{}
	}
	if _, seen := t.lastDeclared[tool]; !seen {
		t.declaredOrder = append(t.declaredOrder, tool)
	}
	t.lastDeclared[tool] = declaredCall{
		ok:      res.status == events.StatusOK,
		failed:  res.fail == failAssertion,
		check:   check,
		message: res.message,
	}
}

// toolChecks are the deterministic checks of the declared tools marked
// check: true whose last call ran: each holds unless that call failed.
func (t callTally) toolChecks() []events.Check {
	var out []events.Check
	for _, name := range t.declaredOrder {
		last := t.lastDeclared[name]
		if !last.check {
			continue
		}
		c := events.Check{Name: toolCheckName(name), OK: !last.failed, Evidence: "its last call: " + last.message}
		out = append(out, c)
	}
	return out
}

// toolCheckPrefix names the checks of declared tools marked check: true.
const toolCheckPrefix = "tool_check."

func toolCheckName(tool string) string { return toolCheckPrefix + tool }

// summary says how many calls did not succeed and which tools they
// called, e.g. "calls that did not succeed: 3 refused (type_text ×3), 1
// error (clipboard_is_5535)"; "" when every call succeeded.
func (t callTally) summary() string {
	var parts []string
	for _, status := range []events.Status{events.StatusRefused, events.StatusMalformed, events.StatusError} {
		tools := t.notDone[status]
		if len(tools) == 0 {
			continue
		}
		parts = append(parts, fmt.Sprintf("%d %s (%s)", len(tools), status, countedNames(tools)))
	}
	if len(parts) == 0 {
		return ""
	}
	return "calls that did not succeed: " + strings.Join(parts, ", ")
}

// countedNames lists names in the order they first appear, each with
// how many times it appears when more than once: "type_text ×2, click";
// past maxListed names, the rest are counted.
func countedNames(names []string) string {
	counts := map[string]int{}
	var order []string
	for _, n := range names {
		if counts[n] == 0 {
			order = append(order, n)
		}
		counts[n]++
	}
	var out []string
	for i, n := range order {
		if i == maxListed {
			out = append(out, fmt.Sprintf("%d other tools", len(order)-i))
			break
		}
		if counts[n] > 1 {
			n = fmt.Sprintf("%s ×%d", n, counts[n])
		}
		out = append(out, n)
	}
	return strings.Join(out, ", ")
}
