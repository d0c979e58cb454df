package sanitize

import (
	"strings"
	"testing"
	"time"
)

type inner struct {
	Name string
	Tags []string
}

type kind string

type outer struct {
	Kind    kind
	At      time.Time
	Inner   *inner
	Data    any
	Args    map[string]any
	private string
	Count   int
}

// TestValueNeutralisesEveryString checks that Value reaches strings in
// every shape an event or a report holds them, leaves the original alone
// and returns a clean value without copying it.
func TestValueNeutralisesEveryString(t *testing.T) {
	t.Parallel()
	const bad = "\x1b]52;c;cHduZWQ=\a\x1b[2J\u009b31m\u202e"
	now := time.Now()
	in := outer{
		Kind:  kind("k" + bad),
		At:    now,
		Inner: &inner{Name: "n" + bad, Tags: []string{"ok", "t" + bad}},
		Data:  inner{Name: "d" + bad},
		Args: map[string]any{"k" + bad: "v" + bad, "list": []any{"e" + bad, 1.0}, "nested": map[string]any{"x": "y" + bad},
			"nil": nil},
		private: bad,
		Count:   3,
	}
	out := Value(in)
	var all []string
	all = append(all, string(out.Kind), out.Inner.Name, out.Inner.Tags[1], out.Data.(inner).Name)
	for k, v := range out.Args {
		if strings.HasPrefix(k, "k") {
			all = append(all, k)
		}
		switch v := v.(type) {
		case string:
			all = append(all, v)
		case []any:
			all = append(all, v[0].(string))
		case map[string]any:
			all = append(all, v["x"].(string))
		}
	}
	for _, s := range all {
		if !clean(s, false) {
			t.Errorf("a control reached the copy: %q", s)
		}
		if !strings.Contains(s, `\x1b]52`) {
			t.Errorf("the neutralised text is not shown: %q", s)
		}
	}
	if len(out.Args) != 4 || out.Count != 3 || !out.At.Equal(now) || out.private != bad {
		t.Errorf("the copy lost what holds no string: %+v", out)
	}
	if in.Inner.Name != "n"+bad || in.Args["k"+bad] != "v"+bad {
		t.Error("Value changed its argument")
	}
	plain := &inner{Name: "plain"}
	if got := Value(plain); got != plain {
		t.Error("a clean value was copied")
	}
}
