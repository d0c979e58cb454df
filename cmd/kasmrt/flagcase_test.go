package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// Errors and help name flags as they are typed: fang capitalises the first
// word of an error message and of a flag's description, which made
// "--graphics" read "--Graphics" and "open report" read "Open report".
func TestFlagNamesAsTyped(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "missing")
	for _, tc := range []struct {
		args       []string
		want, not  string
		wantStdout bool
	}{
		{args: []string{"run", "x.yaml", "--graphics", "bogus"}, want: `--graphics: graphics mode "bogus"`, not: "--Graphics"},
		{args: []string{"replay", missing, "--print"}, want: "open report", not: "Open report"},
		{args: []string{"suite", "--help"}, want: "With --emit k8s: the container image", not: "--Emit", wantStdout: true},
	} {
		_, stdout, stderr := kasmrt(t, tc.args...)
		out := stderr
		if tc.wantStdout {
			out = stdout
		}
		if !strings.Contains(out, tc.want) || strings.Contains(out, tc.not) {
			t.Errorf("kasmrt %s: want %q, not %q, in\n%s", strings.Join(tc.args, " "), tc.want, tc.not, out)
		}
	}
}
