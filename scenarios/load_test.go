package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// env is a fixed environment for tests.
func env(vars map[string]string) Lookup {
	return func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
}

var exampleEnv = env(map[string]string{
	EnvVisionEndpoint: "http://127.0.0.1:9/v1",
	"KASM_DEMO_DIR":   "/tmp",
	"APP_PASSWORD":    "hunter2-secret",
	"LOGIN_URL":       "http://127.0.0.1:8089/login",
	"MODEL_API_KEY":   "sk-test",
	"DOCS_URL":        "http://127.0.0.1:8090",
})

// examplePairs returns each example scenario with the operator file beside
// it that it needs (operator-<kind>.yaml by convention), or "".
func examplePairs(t testing.TB) map[string]string {
	t.Helper()
	files, err := filepath.Glob("examples/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	pairs := map[string]string{}
	for _, f := range files {
		base := filepath.Base(f)
		if strings.HasPrefix(base, "operator") {
			continue
		}
		op := ""
		if strings.HasPrefix(base, "browser") {
			op = "examples/operator-browser.yaml"
		}
		pairs[f] = op
	}
	return pairs
}

func TestExamplesValidate(t *testing.T) {
	t.Parallel()
	for sc, op := range examplePairs(t) {
		t.Run(filepath.Base(sc), func(t *testing.T) {
			t.Parallel()
			if _, err := Load(sc, op, exampleEnv); err != nil {
				t.Fatalf("example does not validate:\n%v", err)
			}
			// Goal examples validate with only the endpoint variable set.
			if _, err := Load(sc, "examples/operator-goal.yaml", exampleEnv); err != nil {
				t.Fatalf("example does not validate with operator-goal.yaml:\n%v", err)
			}
		})
	}
}

func TestExamplesCoverEveryKey(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	files, _ := filepath.Glob("examples/*.yaml")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "- "))
			if k, _, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(line, "#") {
				seen[k] = true
			}
		}
	}
	var keys []string
	collectKeys(ScenarioSchema(), &keys)
	collectKeys(OperatorSchema(), &keys)
	// A step's expect: is inside the steps list, which collectKeys does
	// not enter (the tools there are covered by the tool docs instead).
	collectKeys(ScenarioSchema()["properties"].(map[string]any)["steps"].(map[string]any)["items"].(map[string]any)["properties"].(map[string]any)[ExpectTool].(map[string]any), &keys)
	for _, k := range keys {
		if !seen[k] {
			t.Errorf("no example uses the key %q", k)
		}
	}
}

func collectKeys(schema map[string]any, out *[]string) {
	props, _ := schema["properties"].(map[string]any)
	for k, v := range props {
		*out = append(*out, k)
		if m, ok := v.(map[string]any); ok {
			if m["type"] == "object" && m["properties"] != nil {
				collectKeys(m, out)
			}
			// A map of named entries (click_targets, expect's cdp) has
			// its keys under additionalProperties.
			if a, ok := m["additionalProperties"].(map[string]any); ok && a["type"] == "object" && a["properties"] != nil {
				collectKeys(a, out)
			}
		}
	}
}

// TestRejections checks that each validation rule refuses bad input with a
// positioned message naming the key.
func TestRejections(t *testing.T) {
	t.Parallel()
	const app = "app: {command: [xterm]}\n"
	cases := []struct {
		name     string
		scenario string
		operator string
		env      map[string]string
		want     []string // substrings; each must appear in one problem
	}{
		{"unknown top-level key", "name: x\n" + app + "steps: [observe_screen: {}]\ncolour: red\n", "", nil,
			[]string{"t.yaml:4:1: colour: unknown key"}},
		{"unknown nested key", "name: x\napp: {command: [xterm], colour: red}\nsteps: [observe_screen: {}]\n", "", nil,
			[]string{"t.yaml:2:25: app.colour: unknown key"}},
		{"wrong type", "name: x\napp: {command: xterm}\nsteps: [observe_screen: {}]\n", "", nil,
			[]string{"t.yaml:2:16: app.command: want a list"}},
		{"missing placeholder", "name: ${NOPE}\n" + app + "steps: [observe_screen: {}]\n", "", nil,
			[]string{"t.yaml:1:7: name: environment variable NOPE is not set"}},
		{"both goal and steps", "name: x\n" + app + "goal: g\nsteps: [observe_screen: {}]\n", "", map[string]string{EnvVisionEndpoint: "http://h"},
			[]string{"steps: a scenario has either a goal or steps"}},
		{"neither goal nor steps", "name: x\n" + app, "", nil,
			[]string{"goal: a scenario needs a goal"}},
		{"too many steps", "name: x\n" + app + "steps:\n" + strings.Repeat("  - observe_screen: {}\n", 41), "", nil,
			[]string{"41 steps; a scripted scenario may have at most 40"}},
		{"too long a plan", "name: x\n" + app + "goal: g\nplan:\n" + strings.Repeat("  - look\n", 41), "", map[string]string{EnvVisionEndpoint: "http://h"},
			[]string{"41 plan steps"}},
		{"click_grounded without expect", "name: x\n" + app + "steps:\n  - click_grounded: {description: the OK button}\n", "", map[string]string{EnvVisionEndpoint: "http://h"},
			[]string{"t.yaml:4:5: steps[0]: step 1: a scripted click_grounded needs expect"}},
		{"undefined ref", "name: x\n" + app + "provides: {a: b}\nsteps:\n  - type_text: {ref: nope}\n", "", nil,
			[]string{`t.yaml:5:17: steps[0].type_text.ref: step 1: type_text.ref: "nope" is not one of a`}},
		{"undeclared click target", "name: x\n" + app + "steps:\n  - click: ok_button\n", "", nil,
			[]string{`click.target: "ok_button" is not one of center`}},
		{"click target of two kinds", "name: x\n" + app + "click_targets:\n  ok: {x: 1, y: 2, text: OK}\nsteps:\n  - click: ok\n", "", nil,
			[]string{"t.yaml:4:7: click_targets.ok: click target ok: give exactly one of a point (x and y), a text or a name"}},
		{"click target with half a point", "name: x\n" + app + "click_targets:\n  ok: {x: 1}\nsteps:\n  - click: ok\n", "", nil,
			[]string{"click target ok: a point needs both x and y"}},
		{"text target near nothing, in no region", "name: x\n" + app + "click_targets:\n  ok: {text: OK, near: cancel, within: {x: 0, y: 0, width: 0, height: 5}}\nsteps:\n  - click: ok\n", "", nil,
			[]string{`click_targets.ok.near: "cancel" is not a click target`, "click_targets.ok.within: a region needs"}},
		{"role without a name", "name: x\n" + app + "click_targets:\n  ok: {text: OK, role: button}\nsteps:\n  - click: ok\n", "", nil,
			[]string{"click_targets.ok.role: role narrows a name target"}},
		{"near on a name target", "name: x\n" + app + "click_targets:\n  ok: {name: OK, near: ok}\nsteps:\n  - click: ok\n", "", nil,
			[]string{"click_targets.ok.near: near narrows a text target"}},
		{"two text conditions", "name: x\n" + app + "wait_conditions:\n  w: {text_visible: a, text_absent: b}\nsteps:\n  - wait_while: w\n", "", nil,
			[]string{"wait condition w: set exactly one of screen_changing, window_title, file_missing, text_visible, text_absent"}},
		{"unknown tool in a step", "name: x\n" + app + "steps:\n  - teleport: {}\n", "", nil,
			[]string{`unknown tool "teleport"`}},
		{"step with two tools", "name: x\n" + app + "steps:\n  - {observe_screen: {}, wait: 1}\n", "", nil,
			[]string{"a step is one tool call"}},
		{"wait above the bound", "name: x\n" + app + "steps:\n  - wait: 45\n", "", nil,
			[]string{"wait.seconds: 45 is outside [0, 30]"}},
		{"declared tool param not an enum", "name: x\n" + app + "steps: [observe_screen: {}]\ntools:\n  reset:\n    run: shell\n    parameters:\n      which: {description: free text}\n", "", nil,
			[]string{"tools.reset.parameters.which: a declared tool's parameters are enums"}},
		{"declared value without command", "name: x\n" + app + "steps: [observe_screen: {}]\ntools:\n  reset:\n    run: shell\n    parameters:\n      which: {values: {a: ''}}\n", "", nil,
			[]string{`allowed value "a" has no command`}},
		{"declared tool collides with a built-in", "name: x\n" + app + "steps: [observe_screen: {}]\ntools:\n  click:\n    run: shell\n    command: 'true'\n", "", nil,
			[]string{"tools.click: click is a built-in tool"}},
		{"declared tool runs something else", "name: x\n" + app + "steps: [observe_screen: {}]\ntools:\n  t1:\n    run: python\n    command: 'true'\n", "", nil,
			[]string{"tools.t1.run: the only kind of declared tool is run: shell"}},
		{"goal without model", "name: x\n" + app + "goal: do it\n", "", nil,
			[]string{"goal: a goal scenario needs a model"}},
		{"disabled unknown tool", "name: x\n" + app + "steps: [observe_screen: {}]\n", "tools: {disabled: [teleport]}\n", nil,
			[]string{`op.yaml:1:20: tools.disabled[0]: "teleport" is not a built-in tool`}},
		{"disabling strands a tool", "name: x\n" + app + "steps: [observe_screen: {}]\n", "tools: {disabled: [observe_screen, check_expectation]}\n", nil,
			[]string{"strands click, press_key, type_text"}},
		{"endpoint with credentials", "name: x\n" + app + "steps: [observe_screen: {}]\n", "model: {endpoint: 'https://u:pw@host/v1'}\n", nil,
			[]string{"model.endpoint: the URL embeds credentials"}},
		{"env endpoint with credentials", "name: x\n" + app + "steps: [observe_screen: {}]\n", "", map[string]string{EnvVisionEndpoint: "https://u:pw@host"},
			[]string{"environment: " + EnvVisionEndpoint + ": the URL embeds credentials"}},
		{"out of range", "name: x\n" + app + "steps: [observe_screen: {}]\n", "model: {temperature: 3}\nrunner: {max_iterations: -1}\n", nil,
			[]string{"model.temperature: out of range", "runner.max_iterations: cannot be negative"}},
		{"model keys out of range", "name: x\n" + app + "steps: [observe_screen: {}]\n", "model: {tool_choice: any, max_tokens: 4000, max_context_length: 4512}\n", nil,
			[]string{`model.tool_choice: want auto, required or none, got "any"`, "model.max_context_length: must exceed 4000 (model.max_tokens) plus 512, got 4512"}},
		{"context without max_tokens", "name: x\n" + app + "steps: [observe_screen: {}]\n", "model: {max_context_length: 4000}\n", nil,
			[]string{"model.max_context_length: must exceed 4096 (the default reserve when model.max_tokens is unset) plus 512, got 4000"}},
		{"bad deadline", "name: x\n" + app + "steps: [observe_screen: {}]\n", "", map[string]string{EnvDeadline: "soon"},
			[]string{EnvDeadline + `: want a number of seconds, got "soon"`}},
		{"missing secret", "name: x\n" + app + "provides: {pw: {secret: {env: NOT_SET}}}\nsteps: [observe_screen: {}]\n", "", nil,
			[]string{"secret pw: environment variable NOT_SET is not set"}},
		{"bad fatal pattern", "name: x\napp: {command: [xterm], fatal_patterns: ['(']}\nsteps: [observe_screen: {}]\n", "", nil,
			[]string{"app.fatal_patterns[0]: not a valid regular expression"}},
		{"duplicate key", "name: x\nname: y\n" + app + "steps: [observe_screen: {}]\n", "", nil,
			[]string{"t.yaml:2:1: name: duplicate key"}},
		{"reference image missing", "name: x\n" + app + "goal: g\nreference_images: [nope.png]\n", "", map[string]string{EnvVisionEndpoint: "http://h"},
			[]string{"reference_images[0]: cannot read"}},
		{"reference image in a script", "name: x\n" + app + "steps: [observe_screen: {}]\nreference_images: [a.png]\n", "", nil,
			[]string{"reference_images[0]: reference images are shown to the model"}},
		{"unknown cache mode", "name: x\n" + app + "steps: [observe_screen: {}]\n", "runner: {max_iterations: 5}\ncache: sometimes\n", nil,
			[]string{`op.yaml:2:1: cache: want read-write, read-only or off, got "sometimes"`}},
		{"unknown window manager", "name: x\n" + app + "steps: [observe_screen: {}]\n", "session: {window_manager: twm}\n", nil,
			[]string{`op.yaml:1:11: session.window_manager: want openbox or none, got "twm"`}},
		{"unknown desktop", "name: x\n" + app + "steps: [observe_screen: {}]\n", "session:\n  desktop: mir\n", nil,
			[]string{`op.yaml:2:3: session.desktop: want x11 or wayland, got "mir"`}},
		{"wayland borrowing a display", "name: x\n" + app + "steps: [observe_screen: {}]\n", "session: {desktop: wayland, display: \":1\"}\n", nil,
			[]string{"session.display: a Wayland session is always the run's own compositor"}},
		{"wayland with a window manager", "name: x\n" + app + "steps: [observe_screen: {}]\n", "session: {desktop: wayland, window_manager: openbox}\n", nil,
			[]string{"session.window_manager: a Wayland session's compositor (sway) manages its windows"}},
		{"wayland with a browser", "name: x\nbrowser: {start_url: \"http://example.test/\"}\nsteps: [observe_screen: {}]\n", "session: {desktop: wayland}\n", nil,
			[]string{"browser: a browser: section needs the X11 desktop"}},
		{"home without isolation", "name: x\n" + app + "steps: [observe_screen: {}]\n", "session: {isolate: false, home: h}\n", nil,
			[]string{"session.home: session.home is the isolated HOME"}},
		{"expected exit code out of range", "name: x\napp: {command: [xterm], expect_exit: {codes: [256], within_s: -1}}\nsteps: [observe_screen: {}]\n", "", nil,
			[]string{"app.expect_exit.codes[0]: an exit code is between 0 and 255, got 256", "app.expect_exit.within_s: cannot be negative"}},
		{"negative hang timeout", "name: x\napp: {command: [xterm], hang_timeout_s: -1}\nsteps: [observe_screen: {}]\n", "", nil,
			[]string{"t.yaml:2:25: app.hang_timeout_s: cannot be negative"}},
		{"misspelt hang timeout", "name: x\napp: {command: [xterm], hang_timeout: 5}\nsteps: [observe_screen: {}]\n", "", nil,
			[]string{"hang_timeout"}},
		{"expected exit and success codes", "name: x\napp: {command: [xterm], success_exit_codes: [0], expect_exit: {}}\nsteps: [observe_screen: {}]\n", "", nil,
			[]string{"app.expect_exit: expect_exit and success_exit_codes both say how the app ends"}},
		{"window without a matcher", "name: x\n" + app + "windows: {dialog: {pid: true}}\nsteps: [observe_screen: {}]\n", "", nil,
			[]string{"window dialog: give a class or a title"}},
		{"badly named window", "name: x\n" + app + "windows: {Save-Dialog: {title: Save}}\nsteps: [observe_screen: {}]\n", "", nil,
			[]string{"windows.Save-Dialog: a window name is lower-case letters"}},
		{"undeclared window", "name: x\n" + app + "windows: {dialog: {title: Save}}\nsteps:\n  - switch_window: other\n", "", nil,
			[]string{`steps[0].switch_window.name: step 1: switch_window.name: "other" is not one of dialog`}},
		{"switch_window without windows", "name: x\n" + app + "steps:\n  - switch_window: dialog\n", "", nil,
			[]string{"step 1: switch_window acts on a window the scenario names: declare it under windows:"}},
		{"syntax error", "name: [x\n", "", nil, []string{"t.yaml:1:1: YAML syntax"}},
		{"not a mapping", "- a\n- b\n", "", nil, []string{"the top level must be a mapping"}},
		{"all errors together", "name: ''\napp: {command: []}\ncolour: red\n", "", nil,
			[]string{"name: a scenario needs a name", "app.command", "colour: unknown key", "goal: a scenario needs a goal"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			sc, op := writeTestFiles(t, dir, tc.scenario, tc.operator)
			_, err := Load(sc, op, env(tc.env))
			if err == nil {
				t.Fatal("accepted bad input")
			}
			ps, ok := AsProblems(err)
			if !ok {
				t.Fatalf("error is not Problems: %v", err)
			}
			text := strings.ReplaceAll(ps.Error(), dir+"/", "")
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("missing %q in:\n%s", w, text)
				}
			}
			for _, p := range ps {
				if p.File == "" || (p.Line == 0 && p.File != "environment") {
					t.Errorf("problem without a position: %v", p)
				}
			}
		})
	}
}

func TestSecretsStayOutOfPrintableForms(t *testing.T) {
	t.Parallel()
	f, err := Load("examples/browser-login.yaml", "examples/operator-browser.yaml", exampleEnv)
	if err != nil {
		t.Fatal(err)
	}
	val, secret, ok := f.Scenario.Value("password")
	if !ok || !secret || val != "hunter2-secret" {
		t.Fatalf("Value(password) = %q, %v, %v", val, secret, ok)
	}
	for _, form := range []string{mustJSON(t, f.Scenario), fmtV(f.Scenario)} {
		if strings.Contains(form, "hunter2-secret") {
			t.Fatalf("secret value in printable form: %s", form)
		}
	}
}

func TestScalarStepShorthand(t *testing.T) {
	t.Parallel()
	s, ps := ParseScenario("t.yaml", []byte("name: x\napp: {command: [xterm]}\nsteps:\n  - press_key: ctrl+l\n  - wait: 2\n"), env(nil))
	if ps != nil {
		t.Fatal(ps)
	}
	o, _ := ParseOperator("", nil, env(nil))
	if errs := crossCheck(s, o); errs != nil {
		t.Fatal(errs)
	}
	if got := s.Steps[0].Args["key"]; got != "ctrl+l" {
		t.Errorf("press_key shorthand = %v", got)
	}
	if got := s.Steps[1].Args["seconds"]; got != 2.0 {
		t.Errorf("wait shorthand = %#v", got)
	}
}

func TestOperatorDefaults(t *testing.T) {
	t.Parallel()
	o, ps := ParseOperator("", nil, env(map[string]string{EnvDeadline: "90"}))
	if ps != nil {
		t.Fatal(ps)
	}
	checks := []struct {
		name      string
		got, want float64
	}{
		{"max_iterations", float64(o.Runner.MaxIterations), 25},
		{"max_retries_per_step", float64(o.Runner.MaxRetriesPerStep), 3},
		{"wait_tool_max_s", o.Runner.WaitToolMaxS, 30},
		{"grounding_attempts", float64(o.Runner.GroundingAttempts), 2},
		{"model.retry", float64(o.ModelRetry()), 8},
		{"model.timeout", o.Model.Timeout, 600},
		{"model.disable_after", float64(o.Model.DisableAfter), 2},
		{"memory.keep_images", float64(o.Memory.KeepImages), 3},
		{"deadline", o.DeadlineS, 90},
		{"max_tool_errors (unbounded)", float64(o.Runner.MaxToolErrors), 0},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestPlaceholders(t *testing.T) {
	t.Parallel()
	src := "name: ${WHO} $$ $HOME $${LITERAL}\napp: {command: [xterm]}\nsteps: [observe_screen: {}]\n"
	s, ps := ParseScenario("p.yaml", []byte(src), env(map[string]string{"WHO": "kasm"}))
	if ps != nil {
		t.Fatal(ps)
	}
	if want := "kasm $$ $HOME ${LITERAL}"; s.Name != want {
		t.Errorf("name = %q, want %q", s.Name, want)
	}
}
