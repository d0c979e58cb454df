package serve

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kasmrt/kasmrt/scenarios"
)

// hints are a tool's MCP annotations. destructive and idempotent mean
// something only when the tool is not read-only; a read-only tool states
// destructive false anyway, since a client reads a missing destructiveHint
// as true.
type hints struct {
	readOnly, destructive, idempotent, openWorld bool
}

var (
	// looks only looks, or waits: it changes nothing in the application.
	looks = hints{readOnly: true, idempotent: true}
	// acts changes the application in a way calling again repeats.
	acts = hints{destructive: true}
	// records changes the session's record but not the application.
	records = hints{}
	// page variants talk to a browser tab, whose pages come from outside.
	looksAtPage = hints{readOnly: true, idempotent: true, openWorld: true}
	actsOnPage  = hints{destructive: true, openWorld: true}
)

// toolHints is the one table of every tool's annotations: the server's
// own and the runtime's built-ins. A declared tool takes looks when the
// scenario marks it as a check, acts otherwise. TestToolHintsCoverEveryTool
// fails when a tool has no entry.
var toolHints = map[string]hints{
	"open_session":   {},
	"close_session":  {destructive: true},
	"list_scenarios": looks,

	"observe_screen":       looks,
	"check_expectation":    looks,
	"wait":                 looks,
	"wait_while":           looks,
	scenarios.ExpectTool:   looks,
	"press_key":            acts,
	"click":                acts,
	"type_text":            acts,
	"click_element":        acts,
	"click_grounded":       acts,
	"switch_window":        {idempotent: true},
	"escalate":             {destructive: true},
	"record_verdict":       records,
	"respond":              records,
	"ask_human":            records,
	"cdp_url":              looksAtPage,
	"cdp_list_interactive": looksAtPage,
	"cdp_query":            looksAtPage,
	"cdp_wait":             looksAtPage,
	"cdp_click":            actsOnPage,
	"cdp_click_described":  actsOnPage,
	"cdp_fill":             {destructive: true, idempotent: true, openWorld: true},
	"cdp_navigate":         {destructive: true, idempotent: true, openWorld: true},
}

// hintsOf returns a runtime tool's hints. A built-in missing from the
// table gets the most cautious ones, so a client asks before calling it.
func hintsOf(t scenarios.ToolSpec) hints {
	if t.Declared {
		if t.Check {
			return looks
		}
		return acts
	}
	if h, found := toolHints[t.Name]; found {
		return h
	}
	return hints{destructive: true, openWorld: true}
}

// annotations returns the MCP form of a tool's hints.
func (h hints) annotations(title string) *mcp.ToolAnnotations {
	destructive, idempotent, openWorld := h.destructive, h.idempotent, h.openWorld
	return &mcp.ToolAnnotations{
		Title:           title,
		ReadOnlyHint:    h.readOnly,
		DestructiveHint: &destructive,
		IdempotentHint:  idempotent,
		OpenWorldHint:   &openWorld,
	}
}
