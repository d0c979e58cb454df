package serve

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kasmrt/kasmrt/scenarios"
)

// TestToolHintsCoverEveryTool holds the hints table to the tools: every
// tool the server or a session can offer has an entry, every entry names
// such a tool, and no tool is both read-only and destructive.
func TestToolHintsCoverEveryTool(t *testing.T) {
	t.Parallel()
	offered := map[string]bool{}
	for _, name := range scenarios.BuiltinNames() {
		offered[name] = true
	}
	for _, tool := range serverTools(t) {
		offered[tool.Name] = true
		if a := tool.Annotations; a == nil || a.DestructiveHint == nil || a.OpenWorldHint == nil {
			t.Errorf("%s: annotations %+v do not state destructiveHint and openWorldHint", tool.Name, a)
		}
	}
	for name := range offered {
		h, found := toolHints[name]
		switch {
		case !found:
			t.Errorf("%s has no entry in toolHints", name)
		case h.readOnly && h.destructive:
			t.Errorf("%s is marked both read-only and destructive", name)
		}
	}
	for name := range toolHints {
		if !offered[name] {
			t.Errorf("toolHints has an entry for %s, which no server or session offers", name)
		}
	}
}

// TestToolHints checks the annotations a client sees, declared tools
// included.
func TestToolHints(t *testing.T) {
	t.Parallel()
	catalog := scenarios.Catalog(&scenarios.Scenario{Tools: map[string]scenarios.DeclaredTool{
		"typed_length": {Description: "a check", Check: true},
		"reset_app":    {Description: "an action"},
	}}, &scenarios.Operator{})
	for _, tc := range []struct {
		tool                        string
		readOnly, destructive, open bool
	}{
		{"observe_screen", true, false, false},
		{"wait", true, false, false},
		{"check_expectation", true, false, false},
		{"press_key", false, true, false},
		{"record_verdict", false, false, false},
		{"cdp_query", true, false, true},
		{"cdp_click", false, true, true},
		{"typed_length", true, false, false},
		{"reset_app", false, true, false},
	} {
		spec, found := catalog[tc.tool]
		if !found {
			t.Fatalf("no %s in the catalogue", tc.tool)
		}
		a := hintsOf(spec).annotations("")
		if a.ReadOnlyHint != tc.readOnly || *a.DestructiveHint != tc.destructive || *a.OpenWorldHint != tc.open {
			t.Errorf("%s: readOnly %v destructive %v openWorld %v, want %v %v %v", tc.tool,
				a.ReadOnlyHint, *a.DestructiveHint, *a.OpenWorldHint, tc.readOnly, tc.destructive, tc.open)
		}
	}
}

// serverTools lists the tools a fresh server offers over MCP.
func serverTools(t *testing.T) []*mcp.Tool {
	t.Helper()
	m := NewManager(t.Context(), Options{ScenariosDir: t.TempDir()})
	cs := connect(t, t.Context(), m, &syncBuffer{})
	list, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return list.Tools
}
