package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSuiteExampleLoads(t *testing.T) {
	t.Parallel()
	s, list, ps := LoadSuite("examples/suites/scripted.yaml", env(nil))
	if ps != nil {
		t.Fatal(ps)
	}
	if s.Name != "scripted examples" || s.Workers != 2 || s.OperatorPath() != filepath.Join("examples", "suites", "operator.yaml") {
		t.Errorf("suite = %+v", s)
	}
	if len(list) != 3 || list[1].Repeat != 2 || list[0].Repeat != 1 || list[0].Env["KASM_DEMO_DIR"] != "/tmp" {
		t.Errorf("scenarios = %+v", list)
	}
	for _, sc := range list {
		lookup := SuiteEntryLookup(sc.Env, env(nil))
		if _, err := Load(sc.Path, s.OperatorPath(), lookup); err != nil {
			t.Errorf("%s does not load with its entry's env: %v", sc.Path, err)
		}
	}
}

// Every key of the suite language appears in an example, and every
// example matches the published schema.
func TestSuiteSchemaAndExamples(t *testing.T) {
	t.Parallel()
	schema := compileSchema(t, SuiteSchemaID, SuiteSchema())
	files, _ := filepath.Glob("examples/suites/*.yaml")
	seen := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !IsSuite(b) {
			continue
		}
		if err := schema.Validate(yamlAsJSON(t, f)); err != nil {
			t.Errorf("%s does not match the suite schema: %v", f, err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "- "))
			if k, _, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(line, "#") {
				seen[k] = true
			}
		}
	}
	var keys []string
	collectKeys(SuiteSchema(), &keys)
	collectKeys(SuiteSchema()["properties"].(map[string]any)["scenarios"].(map[string]any)["items"].(map[string]any), &keys)
	for _, k := range keys {
		if !seen[k] {
			t.Errorf("no suite example uses the key %q", k)
		}
	}
	bad := map[string]any{"scenarios": []any{map[string]any{"path": "a.yaml", "colour": "red"}}}
	if err := schema.Validate(bad); err == nil {
		t.Error("the suite schema accepted an unknown key")
	}
}

func TestIsSuite(t *testing.T) {
	t.Parallel()
	for data, want := range map[string]bool{
		"scenarios:\n  - path: a.yaml\n": true,
		"name: x\nsteps: []\n":           false,
		"- scenarios\n":                  false,
		"":                               false,
		"{{{":                            false,
	} {
		if got := IsSuite([]byte(data)); got != want {
			t.Errorf("IsSuite(%q) = %v, want %v", data, got, want)
		}
	}
}

// Every rule of the suite file refuses bad input with a positioned message
// naming the key, all problems together.
func TestSuiteRejections(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.yaml"), []byte("name: a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, suite string
		want        []string // each "line:col: path: text"
	}{
		{"unknown key", "scenarios:\n  - path: a.yaml\ncolour: red\n", []string{"3:1: colour: unknown key"}},
		{"unknown entry key", "scenarios:\n  - path: a.yaml\n    colour: red\n", []string{"3:5: scenarios[0].colour: unknown key"}},
		{"no scenarios", "scenarios: []\n", []string{"1:1: scenarios: a suite needs at least one scenario"}},
		{"repeat out of range", "repeat: 1001\nworkers: -1\nscenarios:\n  - path: a.yaml\n    repeat: -2\n",
			[]string{"1:1: repeat: must be between 1 and 1000", "2:1: workers: must be between 1 and 256", "5:5: scenarios[0].repeat: must be between"}},
		{"glob matches nothing", "scenarios:\n  - path: nothing-*.yaml\n  - tags: [x]\n", []string{`2:5: scenarios[0].path: "nothing-*.yaml" matches no file`, "3:5: scenarios[1]: an entry needs a path"}},
		{"listed twice", "scenarios:\n  - path: a.yaml\n  - path: '*.yaml'\n", []string{"3:5: scenarios[1].path: " + filepath.Join(dir, "a.yaml") + " is already listed by scenarios[0]"}},
		{"bad tag and env", "scenarios:\n  - path: a.yaml\n    tags: ['has space']\n    env: {'A=B': x}\n", []string{"3:12: scenarios[0].tags[0]: tag", "4:11: scenarios[0].env.A=B: not a valid environment variable name"}},
		{"missing operator", "operator: nope.yaml\nscenarios:\n  - path: a.yaml\n", []string{"1:1: operator: cannot read the operator file"}},
		{"wrong type", "scenarios: a.yaml\n", []string{"1:12: scenarios: want a list"}},
		{"unset placeholder", "scenarios:\n  - path: ${NOPE}.yaml\n", []string{"2:11: scenarios[0].path: environment variable NOPE is not set"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".suite.yaml")
			if err := os.WriteFile(path, []byte(tt.suite), 0o600); err != nil {
				t.Fatal(err)
			}
			_, _, ps := LoadSuite(path, env(nil))
			if ps == nil {
				t.Fatalf("accepted:\n%s", tt.suite)
			}
			got := ps.Error()
			for _, w := range tt.want {
				if !strings.Contains(got, path+":"+w) {
					t.Errorf("problems lack %q:\n%s", w, got)
				}
			}
		})
	}
}
