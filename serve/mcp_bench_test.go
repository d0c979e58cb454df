package serve

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkObserveAndClick measures what MCP adds to a session's
// observe_screen and click: the same calls on one session, straight to
// the engine and through the SDK's client over an in-memory transport.
func BenchmarkObserveAndClick(b *testing.B) {
	need(b, "Xvfb", "xterm")
	ctx := b.Context()
	m, _ := testManager(b, ctx)
	cs := connectBench(b, m)
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "open_session", Arguments: map[string]any{"scenario": "xterm.yaml"}})
	if err != nil || r.IsError {
		b.Fatalf("open_session: %v %v", err, r)
	}
	var opened OpenedSession
	_ = json.Unmarshal([]byte(r.Content[0].(*mcp.TextContent).Text), &opened)
	s, err := m.Get(opened.Session)
	if err != nil {
		b.Fatal(err)
	}
	defer m.CloseAll(ctx)
	for _, tool := range []struct {
		name string
		args map[string]any
	}{{"observe_screen", map[string]any{}}, {"click", map[string]any{"target": "prompt"}}} {
		b.Run(tool.name+"/engine", func(b *testing.B) {
			for b.Loop() {
				if _, err := s.Call(ctx, tool.name, tool.args); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(tool.name+"/mcp", func(b *testing.B) {
			args := map[string]any{"session": opened.Session}
			for k, v := range tool.args {
				args[k] = v
			}
			for b.Loop() {
				if r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool.name, Arguments: args}); err != nil || r.IsError {
					b.Fatal(err, r)
				}
			}
		})
	}
}

func connectBench(b *testing.B, m *Manager) *mcp.ClientSession {
	srv := NewMCPServer(m, "bench")
	st, ct := mcp.NewInMemoryTransports()
	go func() { _ = srv.Run(b.Context(), st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(b.Context(), ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}
