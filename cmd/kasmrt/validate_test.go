package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestValidateCatches runs validate on scenarios with mistakes that would
// only show at run time, and checks each is reported at its key, exit 3,
// and that a valid scripted run lists only the tools it can use.
func TestValidateCatches(t *testing.T) {
	t.Setenv("KASM_RUNTIME_VISION_ENDPOINT", "")
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const app = "name: x\napp: {command: [xterm]}\n"
	cases := []struct {
		name      string
		file      string
		code      int
		out, errs []string
		notOut    []string
	}{
		{"unknown key name", write("keys.yaml", app+"steps:\n  - press_key: ctrl+Foo\n  - press_key: {key: ctl+a}\n  - press_key: Return\n"), 3, nil,
			[]string{`keys.yaml:4:16: steps[0].press_key.key: step 1: unknown key "Foo" in "ctrl+Foo"; a key is an X keysym name`,
				`keys.yaml:5:17: steps[1].press_key.key: step 2: unknown key "ctl" in "ctl+a"; modifiers are ctrl (or control), shift, alt and super`,
				"2 problems; nothing was launched"}, nil},
		{"click target off the screen", write("far.yaml", app+"click_targets:\n  ok: {x: 2000, y: 10}\nsteps: [click: ok]\n"), 3, nil,
			[]string{"far.yaml:4:3: click_targets.ok: click target ok at (2000, 10) is outside the 1280x800 screen"}, nil},
		{"expect at the wrong target", write("expect.yaml", app+"steps:\n  - expect:\n      cdp: {banner: {visible: true}}\n"), 3, nil,
			[]string{"expect.yaml:5:7: steps[0].expect.cdp: step 1: cdp checks need a browser: section"}, nil},
		{"scripted run without a model", write("ok.yaml", app+"steps:\n  - press_key: ctrl+shift+Tab\n    expect: {window_title: {contains: x}}\n"), 0,
			[]string{"is valid (scripted, 1 steps)", "expect                 {}", "not offered (",
				"check_expectation      needs a model: set KASM_RUNTIME_VISION_ENDPOINT or model.endpoint",
				"click_grounded         needs a model"},
			nil, []string{"  check_expectation      {"}},
		// OCR judges a check that quotes text, so a script of such checks
		// needs no model; one unquoted check among them does.
		{"checks that quote text without a model", write("quoted.yaml", app+"steps:\n  - check_expectation: the dialog says \"Saved\"\n  - check_expectation: {expectation: \"the title reads \u201cDone\u201d\"}\n"), 0,
			[]string{"is valid (scripted, 2 steps)", "  check_expectation      {"}, nil, []string{"check_expectation      needs a model"}},
		{"a check that quotes nothing among them", write("unquoted.yaml", app+"steps:\n  - check_expectation: the dialog says \"Saved\"\n  - check_expectation: the dialog is gone\n"), 3, nil,
			[]string{`unquoted.yaml:5:5: steps[1]: step 2: check_expectation needs a model, or an expectation that quotes the text to read`}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := kasmrt(t, "validate", c.file)
			errs = strings.ReplaceAll(errs, dir+"/", "")
			if code != c.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, c.code, out, errs)
			}
			wantIn(t, "stdout", out, c.out)
			for _, w := range c.notOut {
				if strings.Contains(out, w) {
					t.Errorf("stdout has %q:\n%s", w, out)
				}
			}
			wantIn(t, "stderr", errs, c.errs)
		})
	}
}

// A file with problems of different kinds, the loader's and the key names
// only the X driver knows, has them all listed at once, by run as by
// validate; a check does not restate a step the loader refused.
func TestValidateListsEveryKindOfProblem(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "two.yaml")
	body := "name: x\napp: {command: [xterm]}\nclick_targets:\n  ok: {x: 2000, y: 10}\nsteps:\n  - press_key: ctrl+Foo\n  - click: ok\n  - press_key: {kee: Foo}\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"two.yaml:4:3: click_targets.ok: click target ok at (2000, 10) is outside the 1280x800 screen",
		`two.yaml:6:16: steps[0].press_key.key: step 1: unknown key "Foo" in "ctrl+Foo"`,
		"two.yaml:8:5: steps[2].press_key.key: step 3: press_key needs key",
		"two.yaml:8:17: steps[2].press_key.kee: step 3: press_key takes no argument",
		"4 problems; nothing was launched",
	}
	for _, command := range []string{"validate", "run"} {
		code, _, stderr := kasmrtProcess(t, []string{"KASM_RUNTIME_VISION_ENDPOINT="}, command, path, "--headless")
		if command == "validate" {
			code, _, stderr = kasmrtProcess(t, []string{"KASM_RUNTIME_VISION_ENDPOINT="}, command, path)
		}
		stderr = strings.ReplaceAll(stderr, dir+"/", "")
		if code != exitBadInput {
			t.Errorf("%s: exit %d, want 3\n%s", command, code, stderr)
		}
		wantIn(t, command+"'s stderr", stderr, want)
		if strings.Contains(stderr, "steps[2].press_key.key: step 3: unknown key") {
			t.Errorf("%s restates the refused step as an unknown key:\n%s", command, stderr)
		}
	}
}

// validate --json prints the problems (file, line, column, key, message),
// the warnings and the tool list as one JSON object, and still exits 3 on
// bad input.
func TestValidateJSON(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	type problem struct {
		File         string
		Line, Column int
		Key, Message string
	}
	type tool struct {
		Name       string
		Parameters map[string]any
		Why        string
	}
	type output struct {
		Valid              bool
		File               string
		Problems, Warnings []problem
		Scenario, Mode     string
		Tools              []tool
		DecidedAtLaunch    []tool `json:"decided_at_launch"`
		NotOffered         []tool `json:"not_offered"`
	}
	decode := func(t *testing.T, stdout string) output {
		t.Helper()
		var out output
		dec := json.NewDecoder(strings.NewReader(stdout))
		if err := dec.Decode(&out); err != nil {
			t.Fatalf("stdout is not one JSON object: %v\n%s", err, stdout)
		}
		if dec.More() {
			t.Errorf("more than one JSON value on stdout:\n%s", stdout)
		}
		return out
	}
	env := []string{"KASM_RUNTIME_VISION_ENDPOINT="}

	bad := write("bad.yaml", "name: x\napp: {command: [xterm]}\nsteps:\n  - press_key: ctrl+Foo\n  - wait: 99\n")
	code, stdout, stderr := kasmrtProcess(t, env, "validate", "--json", bad)
	if code != exitBadInput || stderr != "" {
		t.Errorf("bad file: exit %d, stderr %q; want 3 and nothing on stderr", code, stderr)
	}
	out := decode(t, stdout)
	if out.Valid || len(out.Problems) != 2 || len(out.Tools) != 0 {
		t.Fatalf("bad file: %+v", out)
	}
	if p := out.Problems[0]; p.File != bad || p.Line != 4 || p.Column != 16 || p.Key != "steps[0].press_key.key" || !strings.Contains(p.Message, `unknown key "Foo"`) {
		t.Errorf("first problem %+v", p)
	}
	if p := out.Problems[1]; p.Line != 5 || !strings.HasPrefix(p.Key, "steps[1]") || p.Message == "" {
		t.Errorf("second problem %+v", p)
	}

	good := write("good.yaml", "name: greet\napp: {command: [xterm]}\nsteps:\n  - press_key: Return\n")
	code, stdout, stderr = kasmrtProcess(t, env, "validate", "--json", good)
	if code != 0 {
		t.Fatalf("good file: exit %d\n%s", code, stderr)
	}
	out = decode(t, stdout)
	if !out.Valid || out.Scenario != "greet" || out.Mode != "scripted" || len(out.Problems) != 0 || out.Warnings == nil {
		t.Errorf("good file: %+v", out)
	}
	names := map[string]tool{}
	for _, tl := range out.Tools {
		names[tl.Name] = tl
	}
	if press, ok := names["press_key"]; !ok || press.Parameters["type"] != "object" {
		t.Errorf("tools %+v lack press_key with its parameters' schema", out.Tools)
	}
	// A goal that nothing verifies is a warning, at its key.
	goal := write("goal.yaml", "name: g\napp: {command: [xterm]}\ngoal: Print the greeting.\n")
	code, stdout, stderr = kasmrtProcess(t, []string{"KASM_RUNTIME_VISION_ENDPOINT=http://127.0.0.1:9/v1"}, "validate", "--json", goal)
	if code != 0 {
		t.Fatalf("goal file: exit %d\n%s", code, stderr)
	}
	if w := decode(t, stdout).Warnings; len(w) != 1 || w[0].Key != "goal" || w[0].Line != 3 || !strings.Contains(w[0].Message, "nothing the scenario declares verifies the goal") {
		t.Errorf("goal file warnings %+v, want one at goal", w)
	}
	whys := 0
	for _, tl := range append(out.DecidedAtLaunch, out.NotOffered...) {
		if tl.Why != "" {
			whys++
		}
	}
	if len(out.NotOffered) == 0 || whys != len(out.DecidedAtLaunch)+len(out.NotOffered) {
		t.Errorf("decided at launch %+v, not offered %+v: each wants its why", out.DecidedAtLaunch, out.NotOffered)
	}
}
