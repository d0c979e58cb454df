package serve

import (
	"context"
	"encoding/json"
	"maps"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/engine"
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
	opened, s := openBenchSession(b, m, cs)
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

// openBenchSession opens a session of xterm.yaml through cs and returns
// what the server said of it and the engine's session; it closes with
// the benchmark.
func openBenchSession(b *testing.B, m *Manager, cs *mcp.ClientSession) (OpenedSession, *engine.AgentRun) {
	b.Helper()
	r, err := cs.CallTool(b.Context(), &mcp.CallToolParams{Name: "open_session", Arguments: map[string]any{"scenario": "xterm.yaml"}})
	if err != nil || r.IsError {
		b.Fatalf("open_session: %v %v", err, r)
	}
	var opened OpenedSession
	_ = json.Unmarshal([]byte(r.Content[0].(*mcp.TextContent).Text), &opened)
	s, err := m.Get(opened.Session)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { m.CloseAll(context.Background()) })
	return opened, s
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

// BenchmarkMCPOverheadPaired makes each call three times in a row on one
// session — straight to the engine, through MCP in memory, and through MCP
// over streamable HTTP on loopback as `kasmrt serve` is used — so the
// machine's load weighs on the three alike, and reports the medians of the
// paired differences: what MCP itself adds.
func BenchmarkMCPOverheadPaired(b *testing.B) {
	need(b, "Xvfb", "xterm")
	ctx := b.Context()
	m, _ := testManager(b, ctx)
	mem := connectBench(b, m)
	srv := httptest.NewServer(NewHandler(m, HTTPOptions{Version: "bench"}))
	defer srv.Close()
	overHTTP, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp"}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer overHTTP.Close()
	opened, s := openBenchSession(b, m, mem)
	// A server lists a session's tools once a session opens on it: open
	// and close one over HTTP, then call the first session's tools there.
	r, err := overHTTP.CallTool(ctx, &mcp.CallToolParams{Name: "open_session", Arguments: map[string]any{"scenario": "xterm.yaml"}})
	if err != nil || r.IsError {
		b.Fatalf("open_session over HTTP: %v %v", err, r)
	}
	var other OpenedSession
	_ = json.Unmarshal([]byte(r.Content[0].(*mcp.TextContent).Text), &other)
	if _, err := m.Close(ctx, other.Session, "", ""); err != nil {
		b.Fatal(err)
	}
	median := func(ds []time.Duration) float64 {
		slices.Sort(ds)
		return float64(ds[len(ds)/2].Microseconds()) / 1000
	}
	for _, tool := range []struct {
		name string
		args map[string]any
	}{{"observe_screen", map[string]any{}}, {"click", map[string]any{"target": "prompt"}}} {
		b.Run(tool.name, func(b *testing.B) {
			args := map[string]any{"session": opened.Session}
			maps.Copy(args, tool.args)
			var direct, memAdded, httpAdded []time.Duration
			for b.Loop() {
				start := time.Now()
				if _, err := s.Call(ctx, tool.name, tool.args); err != nil {
					b.Fatal(err)
				}
				d := time.Since(start)
				start = time.Now()
				if r, err := mem.CallTool(ctx, &mcp.CallToolParams{Name: tool.name, Arguments: args}); err != nil || r.IsError {
					b.Fatal(err, r)
				}
				dm := time.Since(start)
				start = time.Now()
				if r, err := overHTTP.CallTool(ctx, &mcp.CallToolParams{Name: tool.name, Arguments: args}); err != nil || r.IsError {
					b.Fatal(err, r)
				}
				dh := time.Since(start)
				direct, memAdded, httpAdded = append(direct, d), append(memAdded, dm-d), append(httpAdded, dh-d)
			}
			b.ReportMetric(median(direct), "ms/engine")
			b.ReportMetric(median(memAdded), "ms/added-in-memory")
			b.ReportMetric(median(httpAdded), "ms/added-http")
		})
	}
}
