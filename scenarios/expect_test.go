package scenarios

import (
	"strings"
	"testing"
)

// loadProblems loads a scenario (and an operator file when given) from a
// fresh directory and returns its problems as text, the directory's path
// removed.
func loadProblems(t *testing.T, scenario, operator string) (Problems, string) {
	t.Helper()
	dir := t.TempDir()
	sc, op := writeTestFiles(t, dir, scenario, operator)
	_, err := Load(sc, op, env(map[string]string{"DOCS": "http://127.0.0.1:8090"}))
	if err == nil {
		return nil, ""
	}
	ps, ok := AsProblems(err)
	if !ok {
		t.Fatalf("error is not Problems: %v", err)
	}
	return ps, strings.ReplaceAll(ps.Error(), dir+"/", "")
}

// TestExpectRejections checks that every rule of expect:, cdp_urls and the
// screen size refuses bad input at the key that is wrong.
func TestExpectRejections(t *testing.T) {
	t.Parallel()
	const app = "name: x\napp: {command: [xterm]}\n"
	const browser = "name: x\nbrowser: {start_url: 'http://127.0.0.1:1/index.html'}\ncdp_targets: {heading: h1}\n"
	cases := []struct {
		name, scenario, operator string
		want                     string // file:line:column: key: message (a substring)
	}{
		{"expect checks nothing", app + "steps:\n  - press_key: Return\n    expect: {within_s: 3}\n", "",
			"t.yaml:5:5: steps[0].expect: step 1: expect checks nothing"},
		{"unknown check", app + "steps:\n  - expect: {title: x}\n", "",
			"t.yaml:4:14: steps[0].expect.title: unknown key (known keys: within_s, window_title, screen_text, cdp, controls, click_targets, exit_code, screenshot)"},
		{"two tools beside expect", app + "steps:\n  - {press_key: Return, wait: 1, expect: {exit_code: 0}}\n", "",
			"t.yaml:4:5: steps[0]: a step is one tool call"},
		{"title with both forms", app + "steps:\n  - expect:\n      window_title: {equals: a, contains: b}\n", "",
			"t.yaml:5:7: steps[0].expect.window_title: step 1: a window_title check gives exactly one of equals or contains"},
		{"within above the bound", app + "steps:\n  - expect: {within_s: 301, exit_code: 0}\n", "",
			"t.yaml:4:14: steps[0].expect.within_s: step 1: within_s is seconds between 0 and 300"},
		{"screen text without a text", app + "steps:\n  - expect: {screen_text: {contains: ' '}}\n", "",
			"t.yaml:4:14: steps[0].expect.screen_text: step 1: a screen_text check needs contains"},
		{"cdp without a browser", app + "steps:\n  - expect:\n      cdp: {heading: {visible: true}}\n", "",
			"t.yaml:5:7: steps[0].expect.cdp: step 1: cdp checks need a browser: section"},
		{"cdp check of an undeclared target", browser + "steps:\n  - expect:\n      cdp: {banner: {visible: true}}\n", "",
			`t.yaml:6:13: steps[0].expect.cdp.banner: step 1: "banner" is not a cdp_targets name (declared: heading)`},
		{"cdp check that checks nothing", browser + "steps:\n  - expect:\n      cdp: {heading: {}}\n", "",
			"steps[0].expect.cdp.heading: step 1: say what to check of heading"},
		{"absent element with a text", browser + "steps:\n  - expect:\n      cdp: {heading: {present: false, text: x}}\n", "",
			"t.yaml:6:23: steps[0].expect.cdp.heading.present: step 1: an element expected absent"},
		{"negative count", browser + "steps:\n  - expect:\n      cdp: {heading: {count: -1}}\n", "",
			"t.yaml:6:23: steps[0].expect.cdp.heading.count: step 1: a count cannot be negative"},
		{"controls without an app", browser + "steps:\n  - expect:\n      controls: {Save: {enabled: true}}\n", "",
			"steps[0].expect: step 1: controls and click_targets checks read the app's accessible controls"},
		{"absent control with a state", app + "steps:\n  - expect:\n      controls: {Save: {present: false, enabled: true}}\n", "",
			"t.yaml:5:25: steps[0].expect.controls.Save.present: step 1: a control expected absent has no state"},
		{"click target check of an undeclared target", app + "click_targets: {ok: {x: 10, y: 10}}\nsteps:\n  - expect:\n      click_targets: {yes: {name: Yes}}\n", "",
			`t.yaml:6:23: steps[0].expect.click_targets.yes: step 1: "yes" is not a click_targets name (declared: ok)`},
		{"exit code out of range", app + "steps:\n  - expect: {exit_code: 300}\n", "",
			"t.yaml:4:14: steps[0].expect.exit_code: step 1: an exit code is between 0 and 255, got 300"},
		{"screenshot without a name", app + "steps:\n  - expect: {screenshot: {max_diff_ratio: 0.1}}\n", "",
			"steps[0].expect.screenshot.name: step 1: a screenshot check needs name:"},
		{"screenshot name with a path", app + "steps:\n  - expect: {screenshot: {name: ../main}}\n", "",
			`steps[0].expect.screenshot.name: step 1: a screenshot check needs name:, the baseline's file name without .png (letters, digits, '.', '_', '-'), got "../main"`},
		{"one baseline compared twice", app + "steps:\n  - expect: {screenshot: {name: main}}\n  - expect: {screenshot: {name: main}}\n", "",
			`steps[1].expect.screenshot.name: step 2: the baseline "main" is compared by another check too`},
		{"screenshot ratio above one", app + "steps:\n  - expect: {screenshot: {name: main, max_diff_ratio: 2}}\n", "",
			"steps[0].expect.screenshot.max_diff_ratio: step 1: max_diff_ratio is the share of pixels that may differ, between 0 and 1, got 2"},
		{"screenshot threshold below zero", app + "steps:\n  - expect: {screenshot: {name: main, threshold: -0.5}}\n", "",
			"steps[0].expect.screenshot.threshold: step 1: threshold is a colour distance between 0 (exact) and 1, got -0.5"},
		{"screenshot mask of an undeclared target", app + "steps:\n  - expect: {screenshot: {name: main, mask: [clock]}}\n", "",
			`steps[0].expect.screenshot.mask[0]: step 1: "clock" is neither a click_targets nor a cdp_targets name`},
		{"screenshot mask of a point", app + "click_targets: {ok: {x: 10, y: 10}}\nsteps:\n  - expect: {screenshot: {name: main, mask: [ok]}}\n", "",
			"steps[0].expect.screenshot.mask[0]: step 1: the click target ok is a point, which has no area to mask"},
		{"screenshot mask region without an area", app + "steps:\n  - expect: {screenshot: {name: main, mask_regions: [{x: 1, y: 1, width: 0, height: 4}]}}\n", "",
			"steps[0].expect.screenshot.mask_regions[0]: step 1: a mask region is x, y, width and height in window pixels"},
		{"cdp_urls without a browser", app + "cdp_urls: {home: 'http://h/'}\nsteps: [observe_screen: {}]\n", "",
			"t.yaml:3:1: cdp_urls: cdp_urls need a browser: section"},
		{"cdp_urls with another scheme", browser + "cdp_urls: {run: 'javascript:alert(1)'}\nsteps: [cdp_navigate: run]\n", "",
			`t.yaml:4:12: cdp_urls.run: want an http, https, file or about URL, got scheme "javascript"`},
		{"relative cdp_url without a start page", "name: x\nbrowser: {}\ncdp_urls: {faq: faq.html}\nsteps: [cdp_navigate: faq]\n", "",
			`t.yaml:3:12: cdp_urls.faq: "faq.html" is relative, and there is no browser.start_url`},
		{"cdp_navigate to an undeclared page", browser + "cdp_urls: {faq: faq.html}\nsteps:\n  - cdp_navigate: home\n", "",
			`t.yaml:6:19: steps[0].cdp_navigate.target: step 1: cdp_navigate.target: "home" is not one of faq`},
		{"click target right of the screen", app + "click_targets: {far: {x: 1280, y: 10}}\nsteps: [click: far]\n", "",
			"t.yaml:3:17: click_targets.far: click target far at (1280, 10) is outside the 1280x800 screen"},
		{"click target below a configured screen", app + "click_targets: {low: {x: 10, y: 600}}\nsteps: [click: low]\n", "session: {width: 800, height: 600}\n",
			"t.yaml:3:17: click_targets.low: click target low at (10, 600) is outside the 800x600 screen"},
		{"check_expectation without a model", app + "steps:\n  - check_expectation: the dialog is gone\n", "",
			"t.yaml:4:5: steps[0]: step 1: check_expectation needs a model"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ps, text := loadProblems(t, tc.scenario, tc.operator)
			if ps == nil {
				t.Fatal("accepted bad input")
			}
			if !strings.Contains(text, tc.want) {
				t.Errorf("missing %q in:\n%s", tc.want, text)
			}
		})
	}
}

// TestExpectAccepted loads every form of expect: and checks what the
// loader made of it.
func TestExpectAccepted(t *testing.T) {
	t.Parallel()
	src := `name: x
app: {command: [xterm]}
browser: {start_url: '${DOCS}/en/index.html'}
cdp_targets: {heading: h1, items: li}
cdp_urls: {faq: ch03.html, root: /index.html, abs: '${DOCS}/x.html'}
click_targets: {ok: {x: 1279, y: 799}}
steps:
  - cdp_navigate: faq
    expect:
      within_s: 2
      window_title: {contains: FAQ, within_s: 9}
      cdp:
        heading: {text: Questions, visible: true}
        items: {count: 0}
  - expect:
      controls: {Save: {enabled: false}, Gone: {present: false}}
      click_targets: {ok: {name: OK, role: push button}}
      exit_code: 0
`
	s, ps := ParseScenario("t.yaml", []byte(src), env(map[string]string{"DOCS": "http://127.0.0.1:8090"}))
	if ps != nil {
		t.Fatal(ps)
	}
	o, _ := ParseOperator("", nil, env(nil))
	if errs := crossCheck(s, o); errs != nil {
		t.Fatal(errs)
	}
	nav, only := s.Steps[0], s.Steps[1]
	if nav.Tool != "cdp_navigate" || nav.Args["target"] != "faq" || nav.Expect == nil {
		t.Fatalf("step 1 = %+v", nav)
	}
	e := nav.Expect
	if e.WithinS(e.WindowTitle.Within) != 9 || e.WithinS(e.CDP["heading"].Within) != 2 || *e.CDP["items"].Count != 0 || *e.CDP["heading"].Text != "Questions" {
		t.Errorf("step 1 expect = %+v", e)
	}
	if only.Tool != ExpectTool || only.Expect == nil || *only.Expect.ExitCode != 0 || !only.Expect.NeedsAccessibility() ||
		only.Expect.WithinS(0) != DefaultExpectWithinS {
		t.Errorf("step 2 = %+v", only)
	}
	for name, want := range map[string]string{
		"faq":  "http://127.0.0.1:8090/en/ch03.html",
		"root": "http://127.0.0.1:8090/index.html",
		"abs":  "http://127.0.0.1:8090/x.html",
	} {
		if got, err := s.CDPURL(name); err != nil || got != want {
			t.Errorf("CDPURL(%s) = %q, %v; want %q", name, got, err, want)
		}
	}
}

// TestSuccessRejections checks that success: refuses what cannot be a
// goal's success criteria, at the key that is wrong.
func TestSuccessRejections(t *testing.T) {
	t.Parallel()
	const goal = "name: x\napp: {command: [xterm]}\ngoal: Save the file.\n" +
		"tools:\n  saved: {run: shell, command: test -f out.txt}\n  probe: {run: shell, parameters: {where: {values: {here: 'true'}}}}\n"
	cases := []struct{ name, scenario, want string }{
		{"in a scripted scenario", "name: x\napp: {command: [xterm]}\nsteps: [observe_screen: {}]\nsuccess: {exit_code: 0}\n",
			"t.yaml:4:1: success: success: states what a goal run must have achieved; a scripted scenario checks with expect: on its steps"},
		{"checking nothing", goal + "success: {within_s: 3}\n",
			"t.yaml:7:1: success: success checks nothing"},
		{"an undeclared tool", goal + "success: {tools: [svaed]}\n",
			`t.yaml:7:19: success.tools[0]: success: "svaed" is not a declared tool (declared: probe, saved)`},
		{"a tool with parameters", goal + "success: {tools: [probe]}\n",
			"t.yaml:7:19: success.tools[0]: success: probe takes parameters"},
		{"a tool listed twice", goal + "success: {tools: [saved, saved]}\n",
			"t.yaml:7:26: success.tools[1]: success: saved is listed twice"},
		{"a check expect: takes, wrong", goal + "success:\n  window_title: {equals: a, contains: b}\n",
			"t.yaml:8:3: success.window_title: success: a window_title check gives exactly one of equals or contains"},
		{"an unknown key", goal + "success: {title: x}\n",
			"t.yaml:7:11: success.title: unknown key (known keys: within_s, window_title, screen_text, cdp, controls, click_targets, exit_code, screenshot, tools)"},
		{"check: is true or false", goal + "  flag: {run: shell, command: 'true', check: yes}\n",
			`t.yaml:7:46: tools.flag.check: want true or false, got "yes"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ps, text := loadProblems(t, tc.scenario, "")
			if ps == nil {
				t.Fatal("accepted bad input")
			}
			if !strings.Contains(text, tc.want) {
				t.Errorf("missing %q in:\n%s", tc.want, text)
			}
		})
	}
}

// TestSuccessAccepted loads a goal's success criteria and a check tool,
// and checks that a goal without criteria is warned about, not refused.
func TestSuccessAccepted(t *testing.T) {
	t.Parallel()
	const goal = "name: x\napp: {command: [xterm]}\ngoal: Save the file.\nclick_targets: {entry: {x: 10, y: 10}}\n" +
		"tools:\n  saved: {run: shell, command: test -f out.txt, check: true}\n"
	s, ps := ParseScenario("t.yaml", []byte(goal+`success:
  within_s: 2
  window_title: {contains: Saved, within_s: 9}
  controls: {Save: {enabled: false}}
  click_targets: {entry: {focused: true}}
  exit_code: 0
  tools: [saved]
`), env(nil))
	if ps != nil {
		t.Fatal(ps)
	}
	c := s.Success
	if c == nil || c.WithinS(c.WindowTitle.Within) != 9 || c.WithinS(0) != 2 || *c.ExitCode != 0 || !c.NeedsAccessibility() ||
		len(c.Tools) != 1 || c.Tools[0] != "saved" || !s.Tools["saved"].Check {
		t.Errorf("success = %+v, tools %+v", c, s.Tools)
	}
	if len(s.Warnings) != 0 {
		t.Errorf("warnings %v for a goal with success criteria", s.Warnings)
	}
	bare, ps := ParseScenario("t.yaml", []byte(goal), env(nil))
	if ps != nil {
		t.Fatal(ps)
	}
	if len(bare.Warnings) != 1 || !strings.Contains(bare.Warnings[0].Error(), "t.yaml:3:1: goal: nothing the scenario declares verifies the goal") {
		t.Errorf("warnings %v, want one at goal: that nothing verifies it", bare.Warnings)
	}
	props := ScenarioSchema()["properties"].(map[string]any)
	success := props["success"].(map[string]any)["properties"].(map[string]any)
	for _, key := range []string{"window_title", "screen_text", "cdp", "controls", "click_targets", "exit_code", "within_s", "tools"} {
		if success[key] == nil {
			t.Errorf("the schema's success lacks %s: %v", key, success)
		}
	}
	if props["tools"].(map[string]any)["additionalProperties"].(map[string]any)["properties"].(map[string]any)["check"] == nil {
		t.Error("the schema's declared tools lack check")
	}
}
