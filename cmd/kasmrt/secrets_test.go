package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/report"
)

// TestSecretsStayOutOfChildrenAndCutStreams runs a real app and declared
// tools that print their environment and flood their output so that a
// secret straddles the 64 KiB read and cut boundaries. The secret's
// source variable and a variable holding the inbox token never reach the
// app or the tools (unless app.env passes the secret on), and no part of
// the secret lands in app.log, events.jsonl, report.json or the output.
func TestSecretsStayOutOfChildrenAndCutStreams(t *testing.T) {
	t.Parallel()
	need(t, "Xvfb", "xterm")
	const secret = "Zq7x-Secret-Value-9"
	env := []string{"KASM_ENV_TEST_SECRET=" + secret, "KASM_ENV_TEST_TOKEN=Tk4-inbox-token-Zz", "KASM_RUNTIME_DEADLINE_S=60"}
	// 65530 filler bytes put the secret across the 64 KiB boundary.
	const flood = `head -c 65530 /dev/zero | tr "\000" `
	path, dir := runScenarioFile(t, `name: secrets in children
app:
  command: [sh, -c, 'env; printf "%s" "$KASM_PASSED_ON" > secret.txt; `+flood+`x; printf "%s\n" "$KASM_PASSED_ON"; exec xterm -class KasmEnv -e sleep 3600']
  env: {KASM_PASSED_ON: '${KASM_ENV_TEST_SECRET}'}
  window: {class: KasmEnv}
  startup_timeout_s: 10
provides:
  pw: {secret: {env: KASM_ENV_TEST_SECRET}}
steps:
  - observe_screen: {}
  - tool_env: {}
  - flood_stdout: {}
  - flood_stderr: {}
tools:
  tool_env:
    run: shell
    env: {KASM_TOOL_PW: '${KASM_ENV_TEST_SECRET}'}
    command: 'env | grep ^KASM_ | sort | tr "\n" " "; test -z "$KASM_ENV_TEST_SECRET$KASM_ENV_TEST_TOKEN" && test -n "$KASM_TOOL_PW"'
  flood_stdout:
    run: shell
    command: '`+flood+`y; cat secret.txt'
  flood_stderr:
    run: shell
    command: '(`+flood+`z; cat secret.txt) >&2; exit 1'
`)
	operator := filepath.Join(dir, "operator.yaml")
	if err := os.WriteFile(operator, []byte("inbox:\n  session_token: ${KASM_ENV_TEST_TOKEN}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	reportDir := filepath.Join(dir, "report")
	code, out, errs := kasmrtProcess(t, env, "run", path, "-o", operator, "--headless", "--display", "-", "--report", reportDir)
	if code != exitAppFailed {
		t.Errorf("exit %d, want %d (the last tool fails)\nstdout:\n%s\nstderr:\n%s", code, exitAppFailed, out, errs)
	}
	appLog, err := os.ReadFile(filepath.Join(reportDir, "app.log"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(appLog), "KASM_ENV_TEST_SECRET=") || strings.Contains(string(appLog), "KASM_ENV_TEST_TOKEN=") {
		t.Errorf("the app saw a secret-source variable")
	}
	if !strings.Contains(string(appLog), "KASM_PASSED_ON=[REDACTED]") {
		t.Errorf("the secret app.env passes on explicitly did not reach the app (redacted)")
	}
	rep, raw := readReport(t, reportDir)
	steps := map[string]report.Step{}
	for _, s := range rep.Steps {
		steps[s.Tool] = s
	}
	if s := steps["tool_env"]; s.Status != "ok" || strings.Contains(s.Message, "KASM_ENV_TEST_") || !strings.Contains(s.Message, "KASM_TOOL_PW=[REDACTED]") {
		t.Errorf("a declared tool saw a secret-source variable, or not the one its env: passes on: %s %s", s.Status, s.Message)
	}
	if s := steps["flood_stdout"]; s.Status != "ok" || !strings.Contains(s.Message, "yyyy") {
		t.Errorf("the successful tool's output preview is not in the report: %s %.200s", s.Status, s.Message)
	}
	part := secret[:6]
	files := map[string]string{"stdout": out, "stderr": errs, "app.log": string(appLog), "report.json": raw}
	if ev, err := os.ReadFile(filepath.Join(reportDir, "events.jsonl")); err == nil {
		files["events.jsonl"] = string(ev)
	}
	for name, text := range files {
		if strings.Contains(text, part) {
			i := strings.Index(text, part)
			t.Errorf("%s holds part of the secret: …%s…", name, text[max(0, i-20):min(len(text), i+30)])
		}
	}
}
