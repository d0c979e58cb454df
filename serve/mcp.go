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

// readOnlyTools change nothing in the application: they look, or wait.
var readOnlyTools = map[string]bool{
	"observe_screen": true, "check_expectation": true, "cdp_url": true, "cdp_list_interactive": true,
	"cdp_query": true, "wait": true, "wait_while": true, "cdp_wait": true,
}

// additiveTools change the session's record but not the application.
var additiveTools = map[string]bool{"record_verdict": true, "respond": true, "ask_human": true}

// NewMCPServer returns an MCP server of the manager's sessions: open_session
// and close_session, and every tool a session opened on it offers, with the
// schema the model of a run gets plus `session`. A tool joins the list when
// the first session offering it opens.
func NewMCPServer(m *Manager, version string) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "kasmrt", Version: version}, &mcp.ServerOptions{
		Instructions: "Open a session on a scenario (open_session), drive its application with the session's tools, " +
			"then close it (close_session) to get the runtime's verdict and the report's path.",
		HasTools: true,
	})
	ms := &mcpServer{m: m, srv: srv, added: map[string]bool{}}
	no, yes := false, true
	srv.AddTool(&mcp.Tool{
		Name:        "open_session",
		Description: "Launch a scenario's application in a session of its own. Returns the session id, the goal and the session's tools.",
		InputSchema: closedSchema(map[string]any{"scenario": map[string]any{"type": "string",
			"description": "the scenario file, relative to the server's scenarios folder"}}, "scenario"),
		Annotations: &mcp.ToolAnnotations{Title: "Open a session", DestructiveHint: &no, OpenWorldHint: &no},
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
		Annotations: &mcp.ToolAnnotations{Title: "Close a session", DestructiveHint: &yes, OpenWorldHint: &no},
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

func toolAnnotations(t scenarios.ToolSpec) *mcp.ToolAnnotations {
	a := &mcp.ToolAnnotations{ReadOnlyHint: readOnlyTools[t.Name]}
	destructive := !additiveTools[t.Name]
	openWorld := len(t.Name) > 4 && t.Name[:4] == "cdp_"
	a.DestructiveHint, a.OpenWorldHint = &destructive, &openWorld
	return a
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
			Name: t.Name, Description: t.Description, InputSchema: toolSchema(t), Annotations: toolAnnotations(t),
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

// ClosedSession is close_session's answer.
type ClosedSession struct {
	Verdict string   `json:"verdict"`
	Outcome string   `json:"outcome"`
	Reasons []string `json:"reasons"`
	Report  string   `json:"report"`
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
		case errors.Is(err, engine.ErrSessionOver):
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
