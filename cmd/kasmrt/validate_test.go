package main

import (
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
