package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/internal/testkit"
)

// bearer adds the token to every request of the MCP client.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// apiPost posts body to the HTTP API of kasmrt serve or run --listen at
// root+path with token and returns the status code and the response.
func apiPost(t *testing.T, root, token, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, root+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// startServe starts the built binary's serve on a free loopback port and
// returns the command and the MCP endpoint.
func startServe(t *testing.T, scen, reports, token string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(kasmrtBinary(t), append([]string{"serve", "--scenarios", scen, "--reports", reports, "--listen", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), "DISPLAY=", envToken+"="+token)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	logged := make(chan struct{})
	// The server is gone, and its last line logged, before the test ends:
	// a line logged after it would panic the whole test binary.
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		<-logged
	})
	go func() {
		defer close(logged)
		sc := bufio.NewScanner(stderr)
		re := regexp.MustCompile(`MCP at (http://\S+/mcp)`)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
			t.Log(sc.Text())
		}
	}()
	select {
	case a := <-addr:
		return cmd, a
	case <-time.After(testkit.ScreenWait):
		t.Fatal("kasmrt serve did not say where it listens")
	}
	return nil, ""
}

// TestServeRefusesAPublicAddressWithoutAToken: a public address needs a
// token of at least 128 bits, and a token file only its owner can read;
// anything less is bad input.
func TestServeRefusesAPublicAddressWithoutAToken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	shared := filepath.Join(dir, "token")
	if err := os.WriteFile(shared, []byte(strings.Repeat("9c2e", 8)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o640); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, token string
		args        []string
		want        string
	}{
		{"no token", "", []string{"--listen", "0.0.0.0:0"}, "not a loopback address"},
		{"a 1-character token", "x", []string{"--listen", "0.0.0.0:0"}, "too short to guard an address other machines can reach"},
		{"a short token on an address by name", "abc123", []string{"--listen", "localhost.localdomain:0"}, "too short"},
		{"a token file its group can read", "", []string{"--listen", "127.0.0.1:0", "--token-file", shared}, "is open to other users (mode 0640)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(kasmrtBinary(t), append([]string{"serve", "--scenarios", dir}, c.args...)...)
			cmd.Env = append(os.Environ(), envToken+"="+c.token)
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var out strings.Builder
			sc := bufio.NewScanner(stderr)
			for sc.Scan() {
				out.WriteString(sc.Text() + "\n")
				if strings.Contains(sc.Text(), "kasmrt serve: MCP at") {
					t.Errorf("serve started: %s", out.String())
					_ = cmd.Process.Kill()
				}
			}
			_ = cmd.Wait()
			if cmd.ProcessState.ExitCode() != exitBadInput || !strings.Contains(out.String(), c.want) {
				t.Errorf("exit %d: %s; want %d with %q", cmd.ProcessState.ExitCode(), out.String(), exitBadInput, c.want)
			}
		})
	}
}

// TestServeDrivesSessionsOverHTTP is an agent on the streamable HTTP
// transport: auth is refused without the token, with a wrong one and in
// the query; two sessions run at once, each on its own display; a second
// concurrent call on one session is busy; the bound on sessions holds;
// idle sessions close with their reports; SIGTERM closes the last one with
// a complete report and leaves nothing running.
func TestServeDrivesSessionsOverHTTP(t *testing.T) {
	t.Parallel()
	need(t, "Xvfb", "xterm")
	dir := t.TempDir()
	scen := filepath.Join(dir, "scenarios")
	testkit.WriteFile(t, scen, "xterm.yaml", mcpScenario)
	const token = "serve-test-token-7f3a"
	cmd, endpoint := startServe(t, scen, filepath.Join(dir, "reports"), token, "--max-sessions", "2", "--idle-timeout", "4s")

	for _, c := range []struct {
		name, url, auth string
		status          int
	}{
		{"no token", endpoint, "", http.StatusUnauthorized},
		{"wrong token", endpoint, "Bearer nope", http.StatusUnauthorized},
		{"token in the query", endpoint + "?token=" + token, "", http.StatusBadRequest},
	} {
		req, _ := http.NewRequest(http.MethodPost, c.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s: status %d, want %d", c.name, resp.StatusCode, c.status)
		}
	}

	client := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: bearer{token}}}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()

	var opened [2]struct{ Session, Report string }
	for i := range opened {
		text, isErr := mcpCallText(t, cs, "open_session", map[string]any{"scenario": "xterm.yaml"})
		if isErr || json.Unmarshal([]byte(text), &opened[i]) != nil {
			t.Fatalf("open_session: %s", text)
		}
	}
	// Past --max-sessions the open is a 503 with Retry-After, which the
	// SDK's client takes as transient: its MCP session lives on.
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "open_session", Arguments: map[string]any{"scenario": "xterm.yaml"}}); err == nil || !strings.Contains(err.Error(), "Service Unavailable") {
		t.Errorf("a third session past --max-sessions 2: %v", err)
	}
	req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"open_session","arguments":{"scenario":"xterm.yaml"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Mcp-Session-Id", cs.ID())
	if resp, err := http.DefaultClient.Do(req); err != nil {
		t.Error(err)
	} else {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(b), "too many sessions") || !strings.Contains(string(b), `"id":7`) {
			t.Errorf("a raw open past --max-sessions: %d (Retry-After %q) %s", resp.StatusCode, resp.Header.Get("Retry-After"), b)
		}
	}

	var wg sync.WaitGroup
	var waitText string
	wg.Go(func() {
		waitText, _ = mcpCallText(t, cs, "wait", map[string]any{"session": opened[0].Session, "seconds": 1.5})
	})
	// The second call goes in while the first is under way, whenever it
	// started on a loaded machine.
	waitForWaitStep(t, opened[0].Report, func() string { return "" })
	text, isErr := mcpCallText(t, cs, "press_key", map[string]any{"session": opened[0].Session, "key": "a"})
	if !isErr || !strings.Contains(text, "busy") {
		t.Errorf("a concurrent call: %s", text)
	}
	if text, isErr := mcpCallText(t, cs, "observe_screen", map[string]any{"session": opened[1].Session}); isErr {
		t.Errorf("the other session is not held up: %s", text)
	}
	wg.Wait()
	if !strings.Contains(waitText, "waited") {
		t.Errorf("the first call: %s", waitText)
	}

	displays := map[string]bool{}
	var pids []int
	for _, o := range opened {
		wantEnded(t, o.Report, 30*time.Second)
		for _, e := range readEvents(t, o.Report) {
			switch d := e.Data.(type) {
			case events.DisplayStarted:
				displays[d.Display] = true
			case events.AppLaunched:
				pids = append(pids, d.PID)
			}
		}
	}
	if len(displays) != 2 {
		t.Errorf("displays %v, want one per session", displays)
	}
	if text, isErr := mcpCallText(t, cs, "observe_screen", map[string]any{"session": opened[0].Session}); !isErr {
		t.Errorf("an idle-closed session still took a call: %s", text)
	}

	// The idle sessions freed their slots.
	var last struct{ Session, Report string }
	text, isErr = mcpCallText(t, cs, "open_session", map[string]any{"scenario": "xterm.yaml"})
	if isErr || json.Unmarshal([]byte(text), &last) != nil {
		t.Fatalf("open_session after the idle ones closed: %s", text)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("kasmrt serve after SIGTERM: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("kasmrt serve did not end after SIGTERM")
	}
	wantEnded(t, last.Report, time.Second)
	for _, e := range readEvents(t, last.Report) {
		if d, ok := e.Data.(events.AppLaunched); ok {
			pids = append(pids, d.PID)
		}
	}
	wantNoneLeft(t, pids)
}

// wantEnded waits for a report to be complete.
func wantEnded(t *testing.T, dir string, within time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), within)
	defer cancel()
	for {
		if _, err := os.Stat(filepath.Join(dir, "report.json")); err == nil {
			rep, _ := readReport(t, dir)
			if rep.Verdict == "" || rep.Mode != "session" {
				t.Errorf("%s: verdict %q mode %q", dir, rep.Verdict, rep.Mode)
			}
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s has no report.json after %s", dir, within)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func readEvents(t *testing.T, dir string) []events.Event {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []events.Event
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var e events.Event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		out = append(out, e)
	}
	return out
}
