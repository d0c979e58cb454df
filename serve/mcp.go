package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kasmrt/kasmrt/engine"
	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/scenarios"
)

// NewMCPServer returns an MCP server of the manager's sessions: open_session
// and close_session, and every tool a session opened on it offers, with the
// schema the model of a run gets plus `session`. A tool joins the list when
// the first session offering it opens.
func NewMCPServer(m *Manager, version string) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "kasmrt", Version: version}, &mcp.ServerOptions{
		Instructions: "List the scenarios (list_scenarios), open a session on one (open_session), drive its application with the session's tools, " +
			"then close it (close_session) to get the runtime's verdict and the report's path.",
		HasTools: true,
	})
	ms := &mcpServer{m: m, srv: srv, added: map[string]bool{}}
	srv.AddTool(&mcp.Tool{
		Name:        "list_scenarios",
		Description: "List the scenarios open_session can open: each file's name (what open_session takes), the scenario's name and its goal.",
		InputSchema: closedSchema(map[string]any{}),
		Annotations: toolHints["list_scenarios"].annotations("List the scenarios"),
	}, ms.listScenarios)
	srv.AddTool(&mcp.Tool{
		Name:        "open_session",
		Description: "Launch a scenario's application in a session of its own. Returns the session id, the goal and the session's tools." + modelNotice(m),
		InputSchema: closedSchema(map[string]any{"scenario": map[string]any{"type": "string",
			"description": "the scenario file, relative to the server's scenarios folder (list_scenarios names them)"}}, "scenario"),
		Annotations: toolHints["open_session"].annotations("Open a session"),
	}, ms.openSession)
	srv.AddTool(&mcp.Tool{
		Name: "close_session",
		Description: "End a session: the runtime decides the verdict from its checks (your verdict weighs as a model's " +
			"does and never upgrades a failure) and stops the application. Returns the verdict and the report's path.",
		InputSchema: closedSchema(map[string]any{
			"session": map[string]any{"type": "string", "description": "the id open_session returned"},
			"verdict": map[string]any{"type": "string", "enum": []string{events.ModelGoalMet, events.ModelGoalNotMet},
				"description": "your verdict on the scenario's goal"},
			"reason": map[string]any{"type": "string", "description": "why, in a sentence"},
		}, "session"),
		Annotations: toolHints["close_session"].annotations("Close a session"),
	}, ms.closeSession)
	return srv
}

type mcpServer struct {
	m   *Manager
	srv *mcp.Server

	mu    sync.Mutex
	added map[string]bool
}

// closedSchema is a JSON Schema object with exactly these properties.
func closedSchema(props map[string]any, required ...string) map[string]any {
	if required == nil {
		required = []string{}
	}
	return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
}

// toolSchema is a runtime tool's schema with the session it acts on.
func toolSchema(t scenarios.ToolSpec) map[string]any {
	s := t.JSONSchema()
	props := maps.Clone(s["properties"].(map[string]any))
	props["session"] = map[string]any{"type": "string", "description": "the id open_session returned"}
	s["properties"] = props
	s["required"] = append([]string{"session"}, s["required"].([]string)...)
	return s
}

// addTools puts a session's tools on the server's list.
func (ms *mcpServer) addTools(tools []scenarios.ToolSpec) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	for _, t := range tools {
		if ms.added[t.Name] {
			continue
		}
		ms.added[t.Name] = true
		ms.srv.AddTool(&mcp.Tool{
			Name: t.Name, Description: t.Description, InputSchema: toolSchema(t), Annotations: hintsOf(t).annotations(""),
		}, ms.callTool(t.Name))
	}
}

func textResult(isError bool, format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: isError, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

func jsonResult(v any) *mcp.CallToolResult {
	b, _ := json.Marshal(v)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: v}
}

// decodeArgs reads a call's arguments as the engine's guards take them.
func decodeArgs(raw json.RawMessage) (map[string]any, error) {
	args := map[string]any{}
	if len(bytes.TrimSpace(raw)) == 0 {
		return args, nil
	}
	if err := json.Unmarshal(raw, &args); err != nil {
		return nil, fmt.Errorf("the arguments are not a JSON object: %w", err)
	}
	return args, nil
}

// OpenedSession is open_session's answer.
type OpenedSession struct {
	Session string   `json:"session"`
	Goal    string   `json:"goal"`
	Tools   []string `json:"tools"`
	Report  string   `json:"report"`
}

func (ms *mcpServer) openSession(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	args, err := decodeArgs(req.Params.Arguments)
	if err != nil {
		return textResult(true, "%v", err), nil
	}
	name, _ := args["scenario"].(string)
	if len(args) != 1 || name == "" {
		return textResult(true, "open_session takes exactly {\"scenario\": NAME}"), nil
	}
	id, s, err := ms.m.Open(name)
	if err != nil {
		return textResult(true, "%v", err), nil
	}
	tools := s.Tools()
	ms.addTools(tools)
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	return jsonResult(OpenedSession{Session: id, Goal: ms.m.Goal(id), Tools: names, Report: s.ReportDir()}), nil
}

// ScenarioList is list_scenarios' answer.
type ScenarioList struct {
	Scenarios []ScenarioInfo `json:"scenarios"`
}

func (ms *mcpServer) listScenarios(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if args, err := decodeArgs(req.Params.Arguments); err != nil || len(args) > 0 {
		return textResult(true, "list_scenarios takes no arguments"), nil
	}
	list, err := ms.m.Scenarios()
	if err != nil {
		return textResult(true, "%v", err), nil
	}
	return jsonResult(ScenarioList{Scenarios: list}), nil
}

// modelNotice tells an agent, in open_session's description, which tools
// its sessions will lack because the server has no model, and how the
// server's operator gives it one.
func modelNotice(m *Manager) string {
	has, err := m.HasModel()
	if err != nil || has {
		return ""
	}
	return " This server has no model, so its sessions do not offer check_expectation or click_grounded: " +
		"start it with --operator FILE whose model.endpoint names a vision model (or with " + scenarios.EnvVisionEndpoint + " set)."
}

// ClosedSession is close_session's answer.
type ClosedSession struct {
	Verdict events.Verdict `json:"verdict"`
	Outcome events.Outcome `json:"outcome"`
	Reasons []string       `json:"reasons"`
	Report  string         `json:"report"`
}

func (ms *mcpServer) closeSession(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	args, err := decodeArgs(req.Params.Arguments)
	if err != nil {
		return textResult(true, "%v", err), nil
	}
	id, _ := args["session"].(string)
	verdict, _ := args["verdict"].(string)
	reason, _ := args["reason"].(string)
	for k := range args {
		if k != "session" && k != "verdict" && k != "reason" {
			return textResult(true, "close_session has no argument %q", k), nil
		}
	}
	if verdict != "" && verdict != events.ModelGoalMet && verdict != events.ModelGoalNotMet {
		return textResult(true, "verdict must be %s or %s", events.ModelGoalMet, events.ModelGoalNotMet), nil
	}
	res, err := ms.m.Close(ctx, id, verdict, reason)
	if err != nil {
		return textResult(true, "%v", err), nil
	}
	return jsonResult(ClosedSession{Verdict: res.Verdict, Outcome: res.Outcome, Reasons: res.Reasons, Report: res.ReportDir}), nil
}

// callTool runs a runtime tool on the session its arguments name. The
// engine checks the rest of the arguments against the session's own
// schema, and records the call as a step either way.
func (ms *mcpServer) callTool(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args, err := decodeArgs(req.Params.Arguments)
		if err != nil {
			return textResult(true, "%v", err), nil
		}
		id, _ := args["session"].(string)
		delete(args, "session")
		s, err := ms.m.Get(id)
		if err != nil {
			return textResult(true, "%v", err), nil
		}
		res, err := s.Call(ctx, name, args)
		ms.m.Touch(id)
		switch {
		case errors.Is(err, engine.ErrAgentRunOver):
			return textResult(true, "%v; close_session returns its verdict and report", err), nil
		case err != nil:
			return textResult(true, "%v", err), nil
		}
		out := textResult(res.Status != events.StatusOK, "step %d %s: %s: %s", res.Step, name, res.Status, res.Message)
		if res.Screen != "" {
			out.Content[0].(*mcp.TextContent).Text += " (screen " + res.Screen + ")"
		}
		if res.Ended {
			out.Content[0].(*mcp.TextContent).Text += "; the session has ended: close_session returns its verdict and report"
		}
		if res.PNG != nil {
			out.Content = append(out.Content, &mcp.ImageContent{Data: res.PNG, MIMEType: "image/png"})
		}
		return out, nil
	}
}
