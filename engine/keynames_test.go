package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/scenarios"
)

func TestCheckKeyNames(t *testing.T) {
	t.Parallel()
	cases := []struct {
		key  string
		want string // "" when the key is fine
	}{
		{"Return", ""}, {"ctrl+l", ""}, {"shift+Tab", ""}, {"alt+F4", ""}, {"super+a", ""},
		{"Control+Shift+Escape", ""}, {"ctrl++", ""}, {"€", ""}, {"enter", ""}, {"pagedown", ""},
		{"ctrl+Foo", `unknown key "Foo" in "ctrl+Foo"; a key is an X keysym name`},
		{"Retrun", `unknown key "Retrun"; a key is an X keysym name`},
		{"ctl+a", `unknown key "ctl" in "ctl+a"; modifiers are ctrl`},
		{"F99", `unknown key "F99"`},
	}
	for _, c := range cases {
		t.Run(c.key, func(t *testing.T) {
			t.Parallel()
			src := "name: k\napp: {command: [xterm]}\nsteps:\n  - press_key: {key: '" + c.key + "'}\n"
			s, ps := scenarios.ParseScenario("k.yaml", []byte(src), func(string) (string, bool) { return "", false })
			if ps != nil {
				t.Fatal(ps)
			}
			// ParseScenario leaves the argument where the step put it.
			got := checkKeyNames(s)
			if c.want == "" {
				if got != nil {
					t.Fatalf("refused: %v", got)
				}
				return
			}
			if len(got) != 1 || !strings.Contains(got[0].Msg, c.want) || got[0].Line != 4 || got[0].Column != 17 || got[0].Path != "steps[0].press_key.key" {
				t.Fatalf("problems %v, want one at k.yaml:4:17 steps[0].press_key.key saying %q", got, c.want)
			}
		})
	}
}

// TestNewRefusesUnknownKeyNames: a run whose script presses a key the
// driver does not know is refused before anything is launched, with the
// key's position (it used to fail at that step, after the app started).
func TestNewRefusesUnknownKeyNames(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "k.yaml")
	src := "name: k\napp: {command: [xterm]}\nsteps:\n  - observe_screen: {}\n  - press_key: ctrl+nosuchkey\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	files, err := scenarios.Load(path, "", func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(files, Options{ReportDir: filepath.Join(dir, "report"), Display: "-"})
	ps, ok := scenarios.AsProblems(err)
	if !ok || len(ps) != 1 || !strings.Contains(ps[0].Error(), `k.yaml:5:16: steps[1].press_key.key: step 2: unknown key "nosuchkey" in "ctrl+nosuchkey"`) {
		t.Fatalf("New = %v, want the key refused at its position", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "report")); !os.IsNotExist(err) {
		t.Errorf("a refused run left a report directory (%v)", err)
	}
}

// TestLoadSessionReportsEveryProblem: a session's scenario (loaded as
// `kasmrt serve` and `kasmrt mcp` load it) with no goal, an unknown key
// and a key no keyboard has is refused with all three, so an author fixes
// them in one pass rather than one per try.
func TestLoadSessionReportsEveryProblem(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := "name: k\napp: {command: [xterm]}\ncolour: red\nsteps:\n  - observe_screen: {}\n  - press_key: ctrl+nosuchkey\n"
	path, _ := writeRunFiles(t, dir, src, "")
	_, err := LoadSession(path, "", lookupIn(nil))
	ps, ok := scenarios.AsProblems(err)
	if !ok {
		t.Fatalf("LoadSession = %v, want problems", err)
	}
	var got []string
	for _, p := range ps {
		got = append(got, p.Error())
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{"colour: unknown key", "needs a goal", `unknown key "nosuchkey"`} {
		if !strings.Contains(all, want) {
			t.Errorf("problems:\n%s\nwant one saying %q", all, want)
		}
	}
}
