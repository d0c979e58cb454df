package engine

import (
	"slices"
	"strings"

	"github.com/kasmrt/kasmrt/engine/stage"
	"github.com/kasmrt/kasmrt/scenarios"
)

// Unoffered is a built-in tool a run will not have, and why, for
// `kasmrt validate`.
type Unoffered struct {
	Tool scenarios.ToolSpec
	Why  string
}

// NotOffered returns the built-in tools that neither the files nor the
// launch can put on this run's list, sorted by name, each with the reason
// in the author's terms: what to add to have it.
func NotOffered(f *scenarios.Files) []Unoffered {
	listed := map[string]bool{}
	for _, t := range ToolList(f, OffersFromFiles(f)) {
		listed[t.Name] = true
	}
	for _, t := range PendingTools(f) {
		listed[t.Name] = true
	}
	disabled := map[string]bool{}
	for _, n := range f.Operator.Tools.Disabled {
		disabled[n] = true
	}
	var out []Unoffered
	for name, t := range scenarios.Catalog(f.Scenario, f.Operator) {
		if t.Declared || listed[name] {
			continue
		}
		why := notOfferedWhy(t.Presence, f.Scenario.Mode())
		if isBrowserPresence(t.Presence) && f.Operator.Desktop.Desktop == scenarios.DesktopWayland {
			why = "needs a browser: section, which needs the X11 desktop (the runtime starts Chromium on an X display)"
		}
		if disabled[name] {
			why = "disabled by the operator file (tools.disabled)"
		}
		out = append(out, Unoffered{Tool: t, Why: why})
	}
	slices.SortFunc(out, func(a, b Unoffered) int { return strings.Compare(a.Tool.Name, b.Tool.Name) })
	return out
}

// isBrowserPresence reports whether a tool comes with the browser.
func isBrowserPresence(p scenarios.Presence) bool {
	switch p {
	case scenarios.CDPTab, scenarios.CDPTargets, scenarios.CDPWaits, scenarios.CDPURLs:
		return true
	}
	return false
}

// DesktopLacks says what the run's session will lack that the X11 session
// offers (hang detection, popup windows), for validate; nothing on X11.
func DesktopLacks(f *scenarios.Files) []string {
	return stage.Lacks(f.Operator.Desktop.Desktop)
}

func notOfferedWhy(p scenarios.Presence, mode string) string {
	switch p {
	case scenarios.ModelEndpoint:
		return "needs a model: set " + scenarios.EnvVisionEndpoint + " or model.endpoint in the operator file"
	case scenarios.ModelOrText:
		return "needs a model: set " + scenarios.EnvVisionEndpoint + " or model.endpoint in the operator file (a script whose checks all quote text needs none)"
	case scenarios.ATSPIControls:
		return "needs an app: section whose application publishes named controls over AT-SPI"
	case scenarios.CDPTab:
		return "needs a browser: section"
	case scenarios.CDPTargets:
		return "needs cdp_targets"
	case scenarios.CDPWaits:
		return "needs cdp_waits"
	case scenarios.CDPURLs:
		return "needs cdp_urls"
	case scenarios.WaitConditions:
		return "needs wait_conditions"
	case scenarios.Respond:
		return "needs runner.respond: true in the operator file"
	case scenarios.Inbox:
		return "needs an inbox: inbox.session_token or inbox.messaging_token in the operator file (a console run always has one)"
	case scenarios.Values:
		return "needs a value to type: provides in the scenario, or an inbox for ask_human (an answer becomes answer_<question id>)"
	case scenarios.Scripted:
		return "for scripted steps only; a " + mode + " run has none"
	}
	return "not available to this run"
}
