package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kasmrt/kasmrt/engine/events"
)

const mcpScenario = `name: mcp xterm
goal: Look at the terminal.
app:
  command: [xterm, -class, KasmMCPCmd, -e, sleep, '3600']
  window: {class: KasmMCPCmd}
  startup_timeout_s: 10
`

func mcpCallText(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	r, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var parts []string
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n"), r.IsError
}

// TestMCPOverStdioClosesSessionsWhenTheClientLeaves drives the built
// binary as an MCP client spawns it: one session is closed by the agent,
// another is left open when the client disconnects, and still ends with a
// complete report and nothing left running.
func TestMCPOverStdioClosesSessionsWhenTheClientLeaves(t *testing.T) {
	t.Parallel()
	need(t, "Xvfb", "xterm")
	dir := t.TempDir()
	scen := filepath.Join(dir, "scenarios")
	if err := os.MkdirAll(scen, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(scen, "xterm.yaml"), []byte(mcpScenario), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(kasmrtBinary(t), "mcp", "--scenarios", scen, "--reports", filepath.Join(dir, "reports"))
	cmd.Env = append(os.Environ(), "DISPLAY=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}

	var opened [2]struct{ Session, Report string }
	for i := range opened {
		text, isErr := mcpCallText(t, cs, "open_session", map[string]any{"scenario": "xterm.yaml"})
		if isErr || json.Unmarshal([]byte(text), &opened[i]) != nil {
			t.Fatalf("open_session: %s", text)
		}
	}
	if text, isErr := mcpCallText(t, cs, "observe_screen", map[string]any{"session": opened[0].Session}); isErr {
		t.Errorf("observe_screen: %s", text)
	}
	text, isErr := mcpCallText(t, cs, "close_session", map[string]any{"session": opened[0].Session, "verdict": events.ModelGoalNotMet, "reason": "looked only"})
	if isErr || !strings.Contains(text, `"verdict":"pass-with-concerns"`) {
		t.Errorf("close_session with goal-not-met: %s", text)
	}

	start := time.Now()
	if err := cs.Close(); err != nil {
		t.Logf("close the client: %v", err)
	}
	if cmd.ProcessState == nil {
		if err := cmd.Wait(); err != nil {
			t.Logf("kasmrt mcp: %v", err)
		}
	}
	t.Logf("kasmrt mcp ended %s after the client left; stderr: %s", time.Since(start).Round(time.Millisecond), stderr.String())
	for _, o := range opened {
		rep, _ := readReport(t, o.Report)
		if rep.Mode != "session" || rep.Verdict == "" {
			t.Errorf("%s: mode %q verdict %q", o.Report, rep.Mode, rep.Verdict)
		}
		ev, _ := os.ReadFile(filepath.Join(o.Report, "events.jsonl"))
		if !strings.Contains(string(ev), `"kind":"run.ended"`) {
			t.Errorf("%s: events.jsonl does not end with run.ended", o.Report)
		}
		var pids []int
		for _, line := range strings.Split(string(ev), "\n") {
			var e events.Event
			if json.Unmarshal([]byte(line), &e) == nil && e.Kind == events.KindAppLaunched {
				if d, ok := e.Data.(events.AppLaunched); ok {
					pids = append(pids, d.PID)
				}
			}
		}
		if len(pids) != 1 {
			t.Errorf("%s: %d app launches", o.Report, len(pids))
		}
		wantNoneLeft(t, pids)
	}
}

// TestMCPOverStdioAnswersBadLinesAndKeepsServing: a line that is not
// JSON, one of 20 MB, a batch and a message JSON-RPC does not know each
// get a JSON-RPC error on stdout, and the server goes on serving the same
// client (and every session it has open) instead of exiting.
func TestMCPOverStdioAnswersBadLinesAndKeepsServing(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(kasmrtBinary(t), "mcp", "--scenarios", t.TempDir(), "--reports", t.TempDir())
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := bufio.NewScanner(stdout)
	lines.Buffer(make([]byte, 0, 64<<10), 1<<20)
	type reply struct {
		ID    any `json:"id"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
		Result json.RawMessage `json:"result"`
	}
	send := func(line string) {
		t.Helper()
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			t.Fatalf("write to kasmrt mcp: %v; stderr %s", err, stderr.String())
		}
	}
	next := func(what string) reply {
		t.Helper()
		if !lines.Scan() {
			t.Fatalf("%s: kasmrt mcp ended its output (%v); stderr %s", what, lines.Err(), stderr.String())
		}
		var r reply
		if err := json.Unmarshal(lines.Bytes(), &r); err != nil {
			t.Fatalf("%s: the reply %q is not JSON: %v", what, lines.Text(), err)
		}
		return r
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`)
	if r := next("initialize"); r.Error != nil || r.ID != float64(1) {
		t.Fatalf("initialize: %+v", r)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	// A ping follows every bad line, so a line the server swallows
	// without a reply shows as the ping's reply read in its place.
	for i, c := range []struct {
		name, line string
		code       int
		id         any
	}{
		{"a line that is not JSON", `this is not JSON`, -32700, nil},
		{"a message cut short", `{"jsonrpc":"2.0","id":2,"method":`, -32700, nil},
		{"a 20 MB line", `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"pad":"` + strings.Repeat("x", 20<<20) + `"}}`, -32600, nil},
		{"a batch", `[{"jsonrpc":"2.0","id":4,"method":"ping"}]`, -32600, nil},
		{"neither request nor response", `{"jsonrpc":"2.0","id":5}`, -32600, float64(5)},
		{"another version", `{"jsonrpc":"1.0","id":"six","method":"ping"}`, -32600, "six"},
	} {
		send(c.line)
		ping := fmt.Sprintf("ping-%d", i)
		send(`{"jsonrpc":"2.0","id":"` + ping + `","method":"ping"}`)
		if r := next(c.name); r.Error == nil || r.Error.Code != c.code || r.ID != c.id {
			t.Errorf("%s: reply %+v, want error %d with id %v", c.name, r, c.code, c.id)
			if r.ID == ping {
				continue
			}
		}
		if r := next(ping); r.Error != nil || r.ID != ping {
			t.Errorf("the ping after %s: %+v", c.name, r)
		}
	}
	send(`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`)
	if r := next("tools/list after the bad lines"); r.Error != nil || r.ID != float64(7) || !strings.Contains(string(r.Result), "open_session") {
		t.Errorf("tools/list after the bad lines: %+v %s", r, r.Result)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("kasmrt mcp after its client left: %v; stderr %s", err, stderr.String())
	}
}
