package engine

import (
	"slices"
	"strings"
	"testing"
)

// TestRulesNotOffered: `kasmrt validate` lists the built-in tools a run
// will not have, sorted by name, each with what to add to have it; the
// tools the run lists are not among them, and a tool the operator
// disabled says so.
func TestRulesNotOffered(t *testing.T) {
	t.Parallel()
	files := loadRunFiles(t, t.TempDir(), rulesApp+"steps:\n  - observe_screen: {}\n", "tools:\n  disabled: [wait]\n", nil)
	out := NotOffered(files)
	var names []string
	why := map[string]string{}
	for _, u := range out {
		names = append(names, u.Tool.Name)
		why[u.Tool.Name] = u.Why
	}
	if !slices.IsSorted(names) || len(names) < 2 {
		t.Errorf("not offered %q: want several, sorted by name", names)
	}
	for _, listed := range []string{"observe_screen", "press_key", "type_text"} {
		if _, found := why[listed]; found {
			t.Errorf("%s is on the run's list but reported not offered (%q)", listed, why[listed])
		}
	}
	if w := why["click_grounded"]; !strings.HasPrefix(w, "needs a model: set ") {
		t.Errorf("click_grounded: %q, want what gives a model", w)
	}
	if w := why["cdp_url"]; w != "needs a browser: section" {
		t.Errorf("cdp_url: %q", w)
	}
	if w := why["wait"]; w != "disabled by the operator file (tools.disabled)" {
		t.Errorf("wait: %q, want the operator's disabling", w)
	}
}

// TestRulesDesktopLacksXClients: on Wayland, validate names each declared
// tool whose command runs an X client (the gallery's calculator reads the
// clipboard with xclip), which fails at run time with "Can't open
// display"; a file that only carries the name, and X11, say nothing.
func TestRulesDesktopLacksXClients(t *testing.T) {
	t.Parallel()
	scenario := rulesApp + `steps:
  - observe_screen: {}
tools:
  copied:
    run: shell
    command: 'test "$(/usr/bin/xclip -o -selection clipboard)" = 408'
  result_is:
    run: shell
    parameters:
      value: {values: {"408": 'xsel -b | grep -q 408'}}
  saved:
    run: shell
    command: 'grep -q 408 xclip.txt'
`
	tests := []struct {
		operator string
		want     []string
		not      []string
	}{
		{"session:\n  desktop: wayland\n", []string{"declared tool copied: its command runs xclip", "declared tool result_is: its command runs xsel"}, []string{"saved"}},
		{"", nil, []string{"copied", "result_is", "saved"}},
	}
	for _, tt := range tests {
		lacks := strings.Join(DesktopLacks(loadRunFiles(t, t.TempDir(), scenario, tt.operator, nil)), "\n")
		for _, w := range tt.want {
			if !strings.Contains(lacks, w) {
				t.Errorf("operator %q: lacks %q, want %q in it", tt.operator, lacks, w)
			}
		}
		for _, n := range tt.not {
			if strings.Contains(lacks, "declared tool "+n) {
				t.Errorf("operator %q: lacks names %s: %q", tt.operator, n, lacks)
			}
		}
	}
}
