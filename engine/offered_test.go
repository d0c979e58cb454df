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
