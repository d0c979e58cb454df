package engine

import (
	"slices"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
)

// TestRulesSecretVariablesStayFromTheApp checks which of the runtime's
// variables the application starts without (docs/security.md, "Not
// inherited"): a secret's source, and any variable holding a secret's
// value or an inbox token, whatever its name; the others it keeps.
func TestRulesSecretVariablesStayFromTheApp(t *testing.T) {
	env := map[string]string{"KASM_RULE_PW": "pw-Value-1234", "KASM_RULE_TOKEN": "tok-Value-5678"}
	for k, v := range env {
		t.Setenv(k, v)
	}
	t.Setenv("KASM_RULE_PW_AGAIN", env["KASM_RULE_PW"])
	t.Setenv("KASM_RULE_TOKEN_AGAIN", env["KASM_RULE_TOKEN"])
	t.Setenv("KASM_RULE_PLAIN", "plain")
	f := &fakeMachine{}
	r := loopRun(t, loopCase{
		scenario: rulesApp + "  pw: {secret: {env: KASM_RULE_PW}}\nsteps:\n  - observe_screen: {}\n",
		operator: "inbox:\n  session_token: ${KASM_RULE_TOKEN}\n", machine: f, env: env,
	})
	loopWant(t, r, events.VerdictPass, OutcomeCompleted, 0, 0)
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.specs) != 1 {
		t.Fatalf("%d applications started, want 1", len(f.specs))
	}
	unset := f.specs[0].Unset
	for _, name := range []string{"KASM_RULE_PW", "KASM_RULE_PW_AGAIN", "KASM_RULE_TOKEN", "KASM_RULE_TOKEN_AGAIN"} {
		if !slices.Contains(unset, name) {
			t.Errorf("the application inherits %s (it unsets %q)", name, unset)
		}
	}
	if slices.Contains(unset, "KASM_RULE_PLAIN") {
		t.Errorf("the application loses a variable that holds no secret (it unsets %q)", unset)
	}
}
