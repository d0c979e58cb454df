package serve

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
)

// verdictScenario is a session whose declared check fails: the clipboard
// never holds 5535. SUCCESS and CHECK are replaced per case.
const verdictScenario = `name: failed check
goal: Put 5535 on the clipboard.
app:
  command: [xterm, -class, KasmVerdict, -geometry, 60x10+20+20, -e, sh, -c, 'sleep 3600']
  window: {class: KasmVerdict}
  startup_timeout_s: 10
tools:
  clipboard_is_5535:
    description: Check that the clipboard holds 5535.
    run: shell
    command: echo "the clipboard is empty" >&2; exit 1
CHECKSUCCESS`

// TestMCPFailedCheckThenGoalMet closes a session with goal-met after the
// scenario's declared check failed: once a clean pass, it is now a concern
// naming the check, app-failed when the check is marked check: true, and
// the success criteria are run by close_session itself.
func TestMCPFailedCheckThenGoalMet(t *testing.T) {
	t.Parallel()
	need(t, "Xvfb", "xterm")
	cases := []struct {
		name, extra    string
		verdict        events.Verdict
		outcome        events.Outcome
		reason         string
		callCheckFirst bool
	}{
		{"a failed check, then goal-met: a concern", "", events.VerdictPassConcerns, "completed",
			"the agent recorded goal-met, but the last call of clipboard_is_5535 did not succeed: clipboard_is_5535 exited with status 1: the clipboard is empty", true},
		{"a failed check: true tool, then goal-met: app-failed", "    check: true\n", events.VerdictAppFailed, "check-failed",
			"tool_check.clipboard_is_5535 failed: its last call: clipboard_is_5535 exited with status 1", true},
		{"success criteria close_session runs: app-failed", "success:\n  tools: [clipboard_is_5535]\n", events.VerdictAppFailed, "success-failed",
			"success.tools.clipboard_is_5535 failed: clipboard_is_5535 exited with status 1: the clipboard is empty", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			m, base := testManager(t, ctx)
			sc := strings.Replace(verdictScenario, "CHECKSUCCESS", c.extra, 1)
			if err := os.WriteFile(filepath.Join(base, "scenarios", "verdict.yaml"), []byte(sc), 0o600); err != nil {
				t.Fatal(err)
			}
			var log syncBuffer
			cs := connect(t, ctx, m, &log)
			r := call(t, ctx, cs, "open_session", map[string]any{"scenario": "verdict.yaml"})
			var opened OpenedSession
			if err := json.Unmarshal([]byte(text(r)), &opened); r.IsError || err != nil {
				t.Fatalf("open_session: %s (%v)", text(r), err)
			}
			call(t, ctx, cs, "observe_screen", map[string]any{"session": opened.Session})
			if c.callCheckFirst {
				if r := call(t, ctx, cs, "clipboard_is_5535", map[string]any{"session": opened.Session}); !r.IsError {
					t.Errorf("the failed check is not an error: %s", text(r))
				}
			}
			r = call(t, ctx, cs, "close_session", map[string]any{"session": opened.Session, "verdict": events.ModelGoalMet, "reason": "done"})
			var closed ClosedSession
			if err := json.Unmarshal([]byte(text(r)), &closed); r.IsError || err != nil {
				t.Fatalf("close_session: %s (%v)", text(r), err)
			}
			if closed.Verdict != c.verdict || closed.Outcome != c.outcome {
				t.Errorf("closed %s/%s, want %s/%s; reasons %q", closed.Verdict, closed.Outcome, c.verdict, c.outcome, closed.Reasons)
			}
			if !strings.Contains(strings.Join(closed.Reasons, "\n"), c.reason) {
				t.Errorf("reasons %q lack %q", closed.Reasons, c.reason)
			}
		})
	}
}
