package engine

import (
	"slices"
	"strings"

	"github.com/kasmrt/kasmrt/scenarios"
)

// Offers is what the session can support, which decides the tool list.
// Most offers follow from the files; ATSPIControls and CDPTab are only
// known once the application is running.
type Offers struct {
	ATSPIControls bool // the app published named controls over AT-SPI
	CDPTab        bool // a browser tab is attached over CDP
	Inbox         bool // the run has an inbox (a session or messaging token)
	// Values is set when there is a value to type: the scenario provides
	// one, or an operator's answer has come.
	Values bool
}

// OffersFromFiles returns the offers the files alone determine.
func OffersFromFiles(f *scenarios.Files) Offers {
	return Offers{Inbox: f.Operator.HasInbox(), Values: len(f.Scenario.Provides) > 0}
}

// ToolList returns the tools present for a run, sorted by name: the
// presence rules (docs/architecture.md) applied to the catalogue, minus the operator's
// tools.disabled (built-ins only).
func ToolList(f *scenarios.Files, offers Offers) []scenarios.ToolSpec {
	s, o := f.Scenario, f.Operator
	disabled := map[string]bool{}
	for _, n := range o.Tools.Disabled {
		disabled[n] = true
	}
	var out []scenarios.ToolSpec
	for _, t := range scenarios.Catalog(s, o) {
		if !t.Declared && disabled[t.Name] {
			continue
		}
		if present(t.Presence, f, offers) {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b scenarios.ToolSpec) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func present(p scenarios.Presence, f *scenarios.Files, offers Offers) bool {
	s, o := f.Scenario, f.Operator
	switch p {
	case scenarios.Always, scenarios.Declared:
		return true
	case scenarios.ATSPIControls:
		return offers.ATSPIControls
	case scenarios.ModelEndpoint:
		return o.HasModel()
	case scenarios.ModelOrText:
		return o.HasModel() || s.ChecksReadable()
	case scenarios.CDPTab:
		return offers.CDPTab
	case scenarios.CDPWaits:
		return len(s.CDPWaits) > 0
	case scenarios.CDPTargets:
		return len(s.CDPTargets) > 0
	case scenarios.CDPURLs:
		return len(s.CDPURLs) > 0
	case scenarios.Scripted:
		return s.Goal == ""
	case scenarios.WaitConditions:
		return len(s.WaitConditions) > 0
	case scenarios.Windows:
		return len(s.Windows) > 0
	case scenarios.Respond:
		return o.Runner.Respond
	case scenarios.Inbox:
		return offers.Inbox
	case scenarios.Values:
		return offers.Values
	}
	return false
}

// PendingTools returns the tools that would join the list if the launch
// offers them (AT-SPI controls, a CDP tab), for `kasmrt validate`.
func PendingTools(f *scenarios.Files) []scenarios.ToolSpec {
	base := map[string]bool{}
	for _, t := range ToolList(f, OffersFromFiles(f)) {
		base[t.Name] = true
	}
	all := OffersFromFiles(f)
	all.ATSPIControls, all.CDPTab = f.Scenario.App != nil, f.Scenario.Browser != nil
	// An operator's answer to ask_human is a value to type.
	all.Values = all.Values || all.Inbox
	var out []scenarios.ToolSpec
	for _, t := range ToolList(f, all) {
		if !base[t.Name] {
			out = append(out, t)
		}
	}
	return out
}
