package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/internal/testkit"
)

// testSecret is typed by reference; it must appear in no MCP message and
// no report file.
const testSecret = "mcp-Secr3t-value"

const testScenario = `name: xterm mcp
goal: Type the password at the prompt and check the program read all of it.
app:
  command: [xterm, -class, KasmMCP, -geometry, 60x10+20+20, -e, sh, -c, 'stty -echo; printf "Password: "; read pw; echo "got ${#pw}" > got.txt; sleep 3600']
  window: {class: KasmMCP}
  startup_timeout_s: 10
click_targets:
  prompt: {x: 40, y: 12, description: the prompt line}
provides:
  password: {secret: {env: MCP_PW}}
tools:
  typed_length:
    description: Check how many characters the program read.
    run: shell
    parameters:
      n:
        values:
          sixteen: grep -q "got 16" got.txt
`

// need skips the test when a program it starts is not installed.
func need(tb testing.TB, programs ...string) {
	tb.Helper()
	testkit.Need(tb, programs...)
}

// testManager writes the scenario into a scenarios folder (with a file
// outside it and a symlink pointing there) and returns a manager of it.
func testManager(t testing.TB, ctx context.Context) (*Manager, string) {
	t.Helper()
	base := t.TempDir()
	dir := filepath.Join(base, "scenarios")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{filepath.Join(dir, "xterm.yaml"): testScenario, filepath.Join(base, "outside.yaml"): testScenario} {
		if err := os.WriteFile(name, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(base, "outside.yaml"), filepath.Join(dir, "link.yaml")); err != nil {
		t.Fatal(err)
	}
	reports := filepath.Join(base, "reports")
	n := 0
	var mu sync.Mutex
	env := map[string]string{"MCP_PW": testSecret}
	m := NewManager(ctx, Options{
		ScenariosDir: dir,
		NewReportDir: func(name string) (string, error) {
			mu.Lock()
			defer mu.Unlock()
			n++
			d := filepath.Join(reports, strings.ReplaceAll(name, " ", "-")+"-"+string(rune('0'+n)))
			return d, os.MkdirAll(d, 0o700)
		},
		Lookup: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		Getenv: func(k string) string { return env[k] },
	})
	return m, base
}

// connect runs the MCP server over an in-memory transport, logging every
// message both ways into log.
func connect(t *testing.T, ctx context.Context, m *Manager, log *syncBuffer) *mcp.ClientSession {
	t.Helper()
	srv := NewMCPServer(m, "test")
	st, ct := mcp.NewInMemoryTransports()
	go func() { _ = srv.Run(ctx, st) }()
	client := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.LoggingTransport{Transport: ct, Writer: log}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func text(r *mcp.CallToolResult) string {
	var out []string
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			out = append(out, tc.Text)
		}
	}
	return strings.Join(out, "\n")
}

func call(t *testing.T, ctx context.Context, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

func TestMCPAgentDrivesXterm(t *testing.T) {
	t.Parallel()
	need(t, "Xvfb", "xterm")
	ctx := t.Context()
	m, base := testManager(t, ctx)
	var log syncBuffer
	cs := connect(t, ctx, m, &log)

	for _, escape := range []string{filepath.Join(base, "outside.yaml"), "../outside.yaml", "link.yaml", "missing.yaml", ""} {
		r := call(t, ctx, cs, "open_session", map[string]any{"scenario": escape})
		if !r.IsError {
			t.Errorf("open_session %q was not refused: %s", escape, text(r))
		}
	}

	r := call(t, ctx, cs, "open_session", map[string]any{"scenario": "xterm.yaml"})
	if r.IsError {
		t.Fatalf("open_session: %s", text(r))
	}
	var opened OpenedSession
	if err := json.Unmarshal([]byte(text(r)), &opened); err != nil || opened.Session == "" {
		t.Fatalf("open_session answered %s (%v)", text(r), err)
	}
	sid := opened.Session

	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]*mcp.Tool{}
	for _, tool := range list.Tools {
		tools[tool.Name] = tool
	}
	click, found := tools["click"]
	if !found {
		t.Fatalf("no click tool among %v", opened.Tools)
	}
	schema, _ := json.Marshal(click.InputSchema)
	for _, want := range []string{`"additionalProperties":false`, `"enum":["center","prompt"]`, `"required":["session","target"]`} {
		if !strings.Contains(string(schema), want) {
			t.Errorf("click's schema %s lacks %s", schema, want)
		}
	}
	if a := tools["observe_screen"].Annotations; a == nil || !a.ReadOnlyHint {
		t.Errorf("observe_screen is not marked read-only: %+v", a)
	}
	if a := tools["press_key"].Annotations; a == nil || a.ReadOnlyHint || a.DestructiveHint == nil || !*a.DestructiveHint {
		t.Errorf("press_key's annotations: %+v", a)
	}

	obs := call(t, ctx, cs, "observe_screen", map[string]any{"session": sid})
	var img *mcp.ImageContent
	for _, c := range obs.Content {
		if ic, ok := c.(*mcp.ImageContent); ok {
			img = ic
		}
	}
	if obs.IsError || img == nil || img.MIMEType != "image/png" {
		t.Fatalf("observe_screen: %s, image %v", text(obs), img != nil)
	}
	decoded, err := png.Decode(bytes.NewReader(img.Data))
	if err != nil {
		t.Fatalf("the image is not a PNG: %v", err)
	}
	if b := decoded.Bounds(); b.Dx() != 1280 || b.Dy() != 800 {
		t.Errorf("screen %v, want the session's 1280x800", b)
	}

	cases := []struct {
		tool    string
		args    map[string]any
		isError bool
	}{
		{"click", map[string]any{"session": sid, "target": "prompt"}, false},
		{"type_text", map[string]any{"session": sid, "ref": "password"}, false},
		{"press_key", map[string]any{"session": sid, "key": "Return"}, false},
		{"wait", map[string]any{"session": sid, "seconds": 0.5}, false},
		{"typed_length", map[string]any{"session": sid, "n": "sixteen"}, false},
		{"click", map[string]any{"session": sid, "target": "elsewhere"}, true},
		{"type_text", map[string]any{"session": sid}, true},
		{"click", map[string]any{"session": "s-nope", "target": "center"}, true},
	}
	for _, c := range cases {
		r := call(t, ctx, cs, c.tool, c.args)
		if r.IsError != c.isError {
			t.Errorf("%s %v: isError %v: %s", c.tool, c.args, r.IsError, text(r))
		}
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "launch_rockets", Arguments: map[string]any{"session": sid}}); err == nil {
		t.Error("an unknown tool was accepted")
	}

	r = call(t, ctx, cs, "close_session", map[string]any{"session": sid, "verdict": events.ModelGoalMet, "reason": "typed it"})
	var closed ClosedSession
	if err := json.Unmarshal([]byte(text(r)), &closed); err != nil || r.IsError {
		t.Fatalf("close_session: %s (%v)", text(r), err)
	}
	// pass-with-concerns: the last two inputs were malformed, and the
	// scenario declares no success criteria.
	if closed.Verdict != events.VerdictPassConcerns || closed.Report != opened.Report {
		t.Errorf("closed %+v, opened report %s", closed, opened.Report)
	}
	if r := call(t, ctx, cs, "observe_screen", map[string]any{"session": sid}); !r.IsError {
		t.Error("a closed session still took a call")
	}

	if strings.Contains(log.String(), testSecret) {
		t.Error("an MCP message carries the secret value")
	}
	if !strings.Contains(log.String(), "typed the secret value") {
		t.Error("the log holds no type_text reply; is it logging at all?")
	}
	steps := 0
	filepath.Walk(closed.Report, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, _ := os.ReadFile(p)
		if bytes.Contains(b, []byte(testSecret)) {
			t.Errorf("%s holds the secret", p)
		}
		if filepath.Base(p) == "events.jsonl" {
			steps = bytes.Count(b, []byte(`"source":"agent"`))
		}
		return nil
	})
	// observe, five actions, two refused, record_verdict: started and ended.
	if steps != 2*9 {
		t.Errorf("%d agent step events in events.jsonl, want %d", steps, 2*9)
	}
}

func TestMCPRefusesOpeningBeyondMaxSessions(t *testing.T) {
	t.Parallel()
	need(t, "Xvfb", "xterm")
	ctx := t.Context()
	m, _ := testManager(t, ctx)
	m.opts.MaxSessions = 1
	cs := connect(t, ctx, m, &syncBuffer{})
	first := call(t, ctx, cs, "open_session", map[string]any{"scenario": "xterm.yaml"})
	if first.IsError {
		t.Fatalf("open: %s", text(first))
	}
	second := call(t, ctx, cs, "open_session", map[string]any{"scenario": "xterm.yaml"})
	if !second.IsError || !strings.Contains(text(second), "too many sessions") {
		t.Errorf("a second session beyond the bound: %s", text(second))
	}
	m.CloseAll(ctx)
	if _, err := m.Get("x"); err == nil {
		t.Error("Get of an unknown id")
	}
}

// mcpPost posts one JSON-RPC message to /mcp, in session when it is not
// "", and returns the status and the session the reply names.
func mcpPost(t *testing.T, srv *httptest.Server, session, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id")
}

const mcpInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// TestMCPTransportSessionsAreBounded: a client that only initializes
// cannot open MCP connections without end — past the bound it gets 503
// with Retry-After — and a connection closed or expired frees its place.
// Requests that open no connection take none.
func TestMCPTransportSessionsAreBounded(t *testing.T) {
	t.Parallel()
	m, _ := testManager(t, t.Context())
	srv := httptest.NewServer(NewHandler(m, HTTPOptions{MaxMCPSessions: 3}))
	defer srv.Close()
	for range 5 {
		if status, _ := mcpPost(t, srv, "", `{"jsonrpc":"2.0","id":9,"method":"ping"}`); status != http.StatusOK {
			t.Fatalf("a ping outside a session: %d", status)
		}
	}
	var open []string
	for i := range 3 {
		status, id := mcpPost(t, srv, "", mcpInitialize)
		if status != http.StatusOK || id == "" {
			t.Fatalf("initialize %d: %d, session %q", i+1, status, id)
		}
		open = append(open, id)
	}
	if status, id := mcpPost(t, srv, "", mcpInitialize); status != http.StatusServiceUnavailable {
		t.Errorf("initialize beyond the bound: %d, session %q; want 503", status, id)
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodDelete, srv.URL+"/mcp", nil)
	req.Header.Set("Mcp-Session-Id", open[0])
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if status, id := mcpPost(t, srv, "", mcpInitialize); status != http.StatusOK || id == "" {
		t.Errorf("initialize after a connection closed: %d, session %q", status, id)
	}
	if status, _ := mcpPost(t, srv, open[1], `{"jsonrpc":"2.0","id":2,"method":"ping"}`); status != http.StatusOK {
		t.Errorf("an open connection's ping: %d", status)
	}
}

// TestMCPTransportSessionsExpireWhenIdle: a connection no request used
// for the idle timeout is closed, and its place is free again.
func TestMCPTransportSessionsExpireWhenIdle(t *testing.T) {
	t.Parallel()
	m, _ := testManager(t, t.Context())
	srv := httptest.NewServer(NewHandler(m, HTTPOptions{MaxMCPSessions: 1, MCPIdleTimeout: 50 * time.Millisecond}))
	defer srv.Close()
	status, id := mcpPost(t, srv, "", mcpInitialize)
	if status != http.StatusOK || id == "" {
		t.Fatalf("initialize: %d, session %q", status, id)
	}
	// A request in the idle connection would keep it open: the new
	// initializes are refused until it has expired.
	testkit.Eventually(t, testkit.ScreenWait, "the idle connection's place freed", func() bool {
		status, _ := mcpPost(t, srv, "", mcpInitialize)
		return status == http.StatusOK
	})
	if status, _ := mcpPost(t, srv, id, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); status != http.StatusNotFound {
		t.Errorf("the expired connection's ping: %d, want 404", status)
	}
}

// TestOpenRefusesAPublicInboxWithAShortToken: a session whose operator
// file serves inbox.listen on an address other machines reach needs a
// token of 128 bits there, as run --listen does; nothing launches.
func TestOpenRefusesAPublicInboxWithAShortToken(t *testing.T) {
	t.Parallel()
	need(t, "Xvfb", "xterm")
	m, base := testManager(t, t.Context())
	t.Cleanup(func() { m.CloseAll(context.Background()) })
	m.opts.Operator = filepath.Join(base, "operator.yaml")
	if err := os.WriteFile(m.opts.Operator, []byte("inbox:\n  listen: 0.0.0.0:0\n  session_token: abc123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err := m.Open("xterm.yaml")
	if err == nil || !strings.Contains(err.Error(), "the token of inbox.listen 0.0.0.0:0 (inbox.session_token) is too short") {
		t.Errorf("open with a 6-character token on 0.0.0.0: %v", err)
	}
	if strings.Contains(fmt.Sprint(err), "abc123") {
		t.Errorf("the refusal quotes the token: %v", err)
	}
	if open := m.List(); len(open) != 0 {
		t.Errorf("sessions opened: %+v", open)
	}
}
