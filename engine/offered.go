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
// On Wayland it also names each declared tool whose command runs an X
// client (xclip…): the session has no X display, so such a check fails
// at run time with "Can't open display", which validate can say first.
func DesktopLacks(f *scenarios.Files) []string {
	lacks := stage.Lacks(f.Operator.Desktop.Desktop)
	if f.Operator.Desktop.Desktop != scenarios.DesktopWayland {
		return lacks
	}
	names := make([]string, 0, len(f.Scenario.Tools))
	for name := range f.Scenario.Tools {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if x := xClient(f.Scenario.Tools[name]); x != "" {
			lacks = append(lacks, "an X display for the declared tool "+name+": its command runs "+x+", which cannot open a display in a Wayland session (use the X11 desktop, or a Wayland tool such as wl-paste)")
		}
	}
	return lacks
}

// xClients are programs that talk to an X server only, which a declared
// tool's command may run to read the app's state (the clipboard, windows).
var xClients = []string{"xclip", "xsel", "xdotool", "xprop", "xwininfo", "xdpyinfo", "xwd", "xev"}

// xClient returns the first X-only program a declared tool's commands run,
// or "" when none does. A word counts when it stands alone in the command,
// so a file named xclip.txt is not taken for the program.
func xClient(t scenarios.DeclaredTool) string {
	cmds := []string{t.Command}
	for _, p := range t.Parameters {
		for _, c := range p.Values {
			cmds = append(cmds, c)
		}
	}
	for _, c := range cmds {
		words := strings.FieldsFunc(c, func(r rune) bool {
			return !(r == '-' || r == '_' || r == '.' || r == '/' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
		})
		for _, w := range words {
			if i := strings.LastIndexByte(w, '/'); i >= 0 {
				w = w[i+1:]
			}
			if slices.Contains(xClients, w) {
				return w
			}
		}
	}
	return ""
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
