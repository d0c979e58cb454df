package serve

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kasmrt/kasmrt/engine/model/modeltest"
)

// TestMCPListsScenarios: an agent learns what it may open before opening
// anything, and a wrong name is answered with the names that are there.
func TestMCPListsScenarios(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	m, base := testManager(t, ctx)
	dir := filepath.Join(base, "scenarios")
	for name, text := range map[string]string{
		"nested/secretive.yaml": "name: secretive\ngoal: Log in as ${MCP_PW}.\napp: {command: [true]}\n",
		"steps.yaml":            "name: scripted\nsteps:\n  - observe_screen: {}\n",
		"operator.yaml":         "runner: {max_steps: 3}\n",
		"notes.txt":             "goal: not a scenario\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cs := connect(t, ctx, m, &syncBuffer{})

	r := call(t, ctx, cs, "list_scenarios", map[string]any{})
	var list ScenarioList
	if err := json.Unmarshal([]byte(text(r)), &list); err != nil || r.IsError {
		t.Fatalf("list_scenarios answered %s (%v)", text(r), err)
	}
	want := []ScenarioInfo{
		{Scenario: "nested/secretive.yaml", Name: "secretive", Goal: "Log in as ${MCP_PW}."},
		{Scenario: "xterm.yaml", Name: "xterm mcp", Goal: "Type the password at the prompt and check the program read all of it."},
	}
	if !slices.Equal(list.Scenarios, want) {
		t.Errorf("list_scenarios:\n got %+v\nwant %+v", list.Scenarios, want)
	}
	if strings.Contains(text(r), testSecret) {
		t.Error("list_scenarios shows a secret value")
	}

	r = call(t, ctx, cs, "open_session", map[string]any{"scenario": "xtrem.yaml"})
	if msg := text(r); !r.IsError || !strings.Contains(msg, "available: nested/secretive.yaml, xterm.yaml") {
		t.Errorf("open_session of a wrong name: %s", msg)
	}
}

// TestMCPSaysWhyModelToolsAreMissing: without a model the tool list tells
// the agent why check_expectation and click_grounded will not come, and
// with one it does not.
func TestMCPSaysWhyModelToolsAreMissing(t *testing.T) {
	t.Parallel()
	withModel := filepath.Join(t.TempDir(), "operator.yaml")
	if err := os.WriteFile(withModel, []byte("model:\n  endpoint: http://127.0.0.1:9\n  name: judge\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		operator string
		notice   bool
	}{{"", true}, {withModel, false}} {
		m := NewManager(t.Context(), Options{ScenariosDir: t.TempDir(), Operator: tc.operator,
			Lookup: func(string) (string, bool) { return "", false }})
		cs := connect(t, t.Context(), m, &syncBuffer{})
		list, err := cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(list.Tools, func(tool *mcp.Tool) bool { return tool.Name == "open_session" })
		desc := list.Tools[i].Description
		said := strings.Contains(desc, "no model") && strings.Contains(desc, "check_expectation") && strings.Contains(desc, "--operator")
		if said != tc.notice {
			t.Errorf("operator %q: open_session says %q", tc.operator, desc)
		}
	}
}

// TestMCPSessionWithModel: a server given a model by its operator file
// offers check_expectation and click_grounded to outside agents, and
// answers report paths that hold from any working directory.
func TestMCPSessionWithModel(t *testing.T) {
	need(t, "Xvfb", "xterm")
	// Not parallel: the server's working directory is the point.
	t.Chdir(t.TempDir())
	ctx := t.Context()
	model := modeltest.New(t)
	if err := os.WriteFile("operator.yaml", []byte("model:\n  endpoint: "+model.URL()+"\n  name: judge\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll("scenarios", 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("scenarios", "xterm.yaml"), []byte(testScenario), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"MCP_PW": testSecret}
	m := NewManager(ctx, Options{
		ScenariosDir: "scenarios",
		Operator:     "operator.yaml",
		// A relative report directory, as --reports names one.
		NewReportDir: func(string) (string, error) { return "reports/xterm", os.MkdirAll("reports/xterm", 0o700) },
		Lookup:       func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		Getenv:       func(k string) string { return env[k] },
	})
	cs := connect(t, ctx, m, &syncBuffer{})
	r := call(t, ctx, cs, "open_session", map[string]any{"scenario": "xterm.yaml"})
	var opened OpenedSession
	if err := json.Unmarshal([]byte(text(r)), &opened); err != nil || r.IsError {
		t.Fatalf("open_session answered %s (%v)", text(r), err)
	}
	for _, tool := range []string{"check_expectation", "click_grounded"} {
		if !slices.Contains(opened.Tools, tool) {
			t.Errorf("a session with a model lacks %s: %v", tool, opened.Tools)
		}
	}
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(list.Tools, func(tool *mcp.Tool) bool { return tool.Name == "click_grounded" }) {
		t.Error("click_grounded is not on the server's tool list")
	}
	r = call(t, ctx, cs, "close_session", map[string]any{"session": opened.Session})
	var closed ClosedSession
	if err := json.Unmarshal([]byte(text(r)), &closed); err != nil || r.IsError {
		t.Fatalf("close_session answered %s (%v)", text(r), err)
	}
	for what, p := range map[string]string{"open_session": opened.Report, "close_session": closed.Report} {
		if !filepath.IsAbs(p) {
			t.Errorf("%s's report path %q is relative to the server's working directory", what, p)
		}
	}
	if _, err := os.Stat(filepath.Join(closed.Report, "events.jsonl")); err != nil {
		t.Errorf("the report path does not lead to the report: %v", err)
	}
}
