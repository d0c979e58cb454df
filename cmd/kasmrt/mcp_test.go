package main

import (
	"bytes"
	"encoding/json"
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
