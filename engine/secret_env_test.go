package engine

import (
	"encoding/base64"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/redact"
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

// TestRulesWebhookCredentialsStayFromTheApp: the token inside a webhook's
// "Authorization: Bearer ${TOKEN}" and a token in its URL's path are
// secrets of their own. Every variable that holds one — alone, wrapped in
// other text, cut to a prefix, base64-encoded — or that is a part of the
// URL is removed from the application's environment, and what the
// application prints of them (the token, a prefix typing would leave) is
// in no file of the report.
func TestRulesWebhookCredentialsStayFromTheApp(t *testing.T) {
	const token, pathTok = "hook-Tok3n-91f2c7", "pathTok-55e1ab"
	env := map[string]string{"KASM_HOOK_TOKEN": token, "KASM_HOOK_PATH": pathTok}
	for k, v := range env {
		t.Setenv(k, v)
	}
	held := map[string]string{
		"KASM_HOOK_WRAPPED": "Bearer " + token,
		"KASM_HOOK_PREFIX":  token[:9],
		"KASM_HOOK_B64":     base64.StdEncoding.EncodeToString([]byte(token)),
		"KASM_HOOK_CURL":    "curl -H 'Authorization: Bearer " + token + "' https://hooks.example/",
		"KASM_HOOK_URLPART": "hooks.example/services/" + pathTok,
	}
	for k, v := range held {
		t.Setenv(k, v)
	}
	t.Setenv("KASM_HOOK_PLAIN", "plain-value-1234")
	f := &fakeMachine{on: func(f *fakeMachine, in string) {
		f.say("token=" + token + " typed=" + token[:11] + " path=" + pathTok)
	}}
	r := loopRun(t, loopCase{
		scenario: rulesApp + "steps:\n  - press_key: Return\n",
		operator: "inbox:\n  session_token: s3cret-console-token\n  notify:\n    webhook:\n      url: https://hooks.example/services/${KASM_HOOK_PATH}\n" +
			"      headers:\n        Authorization: Bearer ${KASM_HOOK_TOKEN}\n",
		machine: f, env: env,
	})
	loopWant(t, r, events.VerdictPass, OutcomeCompleted, 0, 0)
	f.mu.Lock()
	unset := slices.Clone(f.specs[0].Unset)
	f.mu.Unlock()
	for _, name := range append(slices.Sorted(maps.Keys(held)), "KASM_HOOK_TOKEN", "KASM_HOOK_PATH") {
		if !slices.Contains(unset, name) {
			t.Errorf("the application inherits %s (it unsets %q)", name, unset)
		}
	}
	if slices.Contains(unset, "KASM_HOOK_PLAIN") {
		t.Errorf("the application loses a variable that holds no secret (it unsets %q)", unset)
	}
	for _, name := range []string{"app.log", "events.jsonl", "report.json"} {
		raw, err := os.ReadFile(filepath.Join(r.dir, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{token, token[:8], pathTok} {
			if strings.Contains(string(raw), s) {
				t.Errorf("%s holds %q", name, s)
			}
		}
		if name == "app.log" && !strings.Contains(string(raw), "token="+redact.Mask) {
			t.Errorf("app.log lacks the application's line: %s", raw)
		}
	}
}
