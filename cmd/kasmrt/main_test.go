package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// kasmrt runs the command line in-process and returns its exit code and
// output.
func kasmrt(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestValidate(t *testing.T) {
	t.Setenv("KASM_RUNTIME_VISION_ENDPOINT", "http://127.0.0.1:9/v1")
	t.Setenv("KASM_DEMO_DIR", t.TempDir())
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: x\napp: {command: [xterm]}\nsteps:\n  - click_grounded: {description: OK}\n  - teleport: {}\ncolour: red\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	unverified := filepath.Join(t.TempDir(), "unverified.yaml")
	if err := os.WriteFile(unverified, []byte("name: x\napp: {command: [xterm]}\ngoal: Print the greeting.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name      string
		args      []string
		code      int
		out, errs []string
	}{
		{"goal without success criteria", []string{"validate", unverified}, 0, []string{"is valid (goal, no plan)", "type_text              needs a value to type"},
			[]string{"warning: " + unverified + ":3:1: goal: nothing the scenario declares verifies the goal, so a pass will rest only on the app staying up (a concern); declare success:"}},
		{"schema of success", []string{"schema", "scenario"}, 0, []string{`"success"`, `"check"`}, nil},
		{"scripted example", []string{"validate", "../../scenarios/examples/xterm-greeting.yaml"}, 0,
			[]string{"is valid (scripted, 7 steps)", "greeting_says", "type_text              {ref: visitor}", "decided at launch"}, nil},
		{"goal example with env endpoint only", []string{"validate", "../../scenarios/examples/goal-text-editor.yaml"}, 0,
			[]string{"click_grounded", "wait_while"}, nil},
		{"operator file", []string{"validate", "../../scenarios/examples/goal-text-editor.yaml", "-o", "../../scenarios/examples/operator-goal.yaml"}, 0,
			[]string{"ask_human", "respond", "wait                   {seconds: number ≤10}"}, nil},
		{"bad scenario", []string{"validate", bad}, 3, nil,
			[]string{"bad.yaml:4:5: steps[0]: step 1: a scripted click_grounded needs expect", "bad.yaml:5:5: steps[1]: step 2: unknown tool \"teleport\"", "bad.yaml:6:1: colour: unknown key", "3 problems; nothing was launched"}},
		{"missing file", []string{"validate", "nope.yaml"}, 3, nil, []string{"nope.yaml: cannot read"}},
		{"unknown flag", []string{"validate", "--bogus", "x.yaml"}, 3, nil, []string{"nknown flag"}},
		{"version", []string{"version"}, 0, []string{"kasmrt "}, nil},
		{"schema", []string{"schema", "scenario"}, 0, []string{`"$schema"`}, nil},
		{"api schema", []string{"schema", "api"}, 0, []string{`"openapi": "3.1.0"`, `"/v1/sessions/{id}/events"`}, nil},
		{"bad schema kind", []string{"schema", "thing"}, 3, nil, []string{"want scenario, operator, suite or api"}},
		{"mcp without --scenarios", []string{"mcp"}, 3, nil, []string{"--scenarios is required"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := kasmrt(t, c.args...)
			if code != c.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, c.code, out, errs)
			}
			wantIn(t, "stdout", out, c.out)
			wantIn(t, "stderr", errs, c.errs)
		})
	}
}

func TestSchemaIsJSON(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"scenario", "operator"} {
		code, out, _ := kasmrt(t, "schema", kind)
		var v map[string]any
		if code != 0 || json.Unmarshal([]byte(out), &v) != nil || v["properties"] == nil {
			t.Errorf("schema %s: exit %d, output not a schema: %.200s", kind, code, out)
		}
	}
}
