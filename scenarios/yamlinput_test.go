package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestYAMLInputsThatWereIgnoredOrEchoed checks that what the YAML reader
// used to drop silently — a second document, a !!binary or local tag — is
// a positioned problem in scenario, operator and suite files alike, and
// that a file that is not YAML, or not this language (a symlink to
// /etc/shadow), is refused without its content in the error.
func TestYAMLInputsThatWereIgnoredOrEchoed(t *testing.T) {
	t.Parallel()
	const shadow = "root:$6$Zr1sALT$hashedsecretvalue:19700:0:99999:7:::\ndaemon:*:19700:0:99999:7:::\n"
	cases := []struct {
		name   string
		kind   string // scenario, operator or suite
		data   string
		want   string // in one problem
		secret string // in none
	}{
		{"second document in a scenario", "scenario", hostileApp + "---\nname: other\napp: {command: [sh, -c, 'touch pwned']}\n",
			"f.yaml:4:1: a second YAML document", ""},
		{"second document in an operator file", "operator", "model: {name: m}\n---\nmodel: {key: sk-other}\n",
			"f.yaml:2:1: a second YAML document", "sk-other"},
		{"second document in a suite", "suite", "scenarios: [{path: a.yaml}]\n---\nscenarios: [{path: b.yaml}]\n",
			"f.yaml:2:1: a second YAML document", ""},
		{"binary in a scenario", "scenario", "name: x\napp: {command: [xterm]}\ngoal: !!binary aGVsbG8=\n",
			"f.yaml:3:7: !!binary is not supported", ""},
		{"binary in an operator file", "operator", "model: {key: !!binary c2stbGl2ZQ==}\n",
			"f.yaml:1:14: !!binary is not supported", "c2stbGl2ZQ=="},
		{"binary in a suite", "suite", "scenarios: [{path: !!binary YS55YW1s}]\n",
			"f.yaml:1:20: !!binary is not supported", ""},
		{"a local tag", "scenario", "name: !secret-tag x\napp: {command: [xterm]}\ngoal: g\n",
			"f.yaml:1:7: a YAML tag other than the standard ones", "secret-tag"},
		{"shadow as a scenario", "scenario", shadow, "f.yaml:1:1: none of the top-level keys is a known key", "hashedsecret"},
		{"shadow as an operator file", "operator", shadow, "f.yaml:1:1: none of the top-level keys is a known key", "hashedsecret"},
		{"shadow as a suite", "suite", shadow, "f.yaml:1:1: none of the top-level keys is a known key", "hashedsecret"},
		{"shadow lines among known keys", "scenario", hostileApp + shadow, "an unknown key that is not a key name (not shown", "hashedsecret"},
		{"an anchor the file never defines", "scenario", "name: *hunter2pw\n", "f.yaml:1:1: YAML syntax: unknown anchor", "hunter2pw"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			file := filepath.Join(t.TempDir(), "f.yaml")
			if err := os.WriteFile(file, []byte(tc.data), 0o644); err != nil {
				t.Fatal(err)
			}
			var ps Problems
			switch tc.kind {
			case "scenario":
				_, ps = LoadScenario(file, env(nil))
			case "operator":
				_, ps = LoadOperator(file, env(nil))
			case "suite":
				_, _, ps = LoadSuite(file, env(nil))
			}
			if len(ps) == 0 {
				t.Fatal("accepted")
			}
			found := false
			for _, p := range ps {
				found = found || strings.Contains(p.Error(), tc.want)
			}
			if !found {
				t.Errorf("no problem says %q; got:\n%v", tc.want, ps)
			}
			for _, leak := range []string{tc.secret, "$6$", "19700"} {
				if leak != "" && strings.Contains(ps.Error(), leak) {
					t.Errorf("the problems quote the file's content %q:\n%v", leak, ps)
				}
			}
		})
	}
}
