package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/kasmrt/kasmrt/internal/testkit"
	"github.com/kasmrt/kasmrt/suite"
)

// gatedApp is a scenario whose application waits for the file go in dir
// before it shows its window, so a test can stop the run while it waits.
func gatedApp(dir string) string {
	return `name: gated
app:
  command: [sh, -c, 'while [ ! -e ` + filepath.Join(dir, "go") + ` ]; do sleep 0.1; done; exec xmessage -geometry +40+40 hello']
  window: {class: Xmessage}
  startup_timeout_s: 60
steps:
  - observe_screen: {}
`
}

// launchedUnder reports whether an events.jsonl below dir holds
// app.launched.
func launchedUnder(dir string) bool {
	found := false
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "events.jsonl" {
			b, _ := os.ReadFile(path)
			found = found || strings.Contains(string(b), `"kind":"app.launched"`)
		}
		return nil
	})
	return found
}

// TestSignalsEndRunsStartedWithSIGINTIgnored starts run and suite the way
// `kasmrt … &` in a script does, with SIGINT ignored on entry (a shell
// gives its background commands SIG_IGN and exec keeps it), and sends
// SIGINT once the application is launched: each installs its own handler
// whatever it inherited, so the run ends interrupted with exit 2, and the
// suite writes its results with the run interrupted and the rest not run.
func TestSignalsEndRunsStartedWithSIGINTIgnored(t *testing.T) {
	t.Parallel()
	need(t, "Xvfb", "xmessage")
	for _, tt := range []struct {
		name string
		args func(dir string) []string
		want func(t *testing.T, dir string)
	}{
		{"run", func(dir string) []string {
			return []string{"run", filepath.Join(dir, "gated.yaml"), "--headless", "--report", filepath.Join(dir, "out")}
		}, func(t *testing.T, dir string) {
			wantReport(t, filepath.Join(dir, "out"), "interrupted", "interrupt")
		}},
		{"suite", func(dir string) []string {
			return []string{"suite", filepath.Join(dir, "gated.yaml"), "--repeat", "2", "--workers", "1", "--headless", "--out", filepath.Join(dir, "out")}
		}, func(t *testing.T, dir string) {
			sum, err := suite.ReadSummary(filepath.Join(dir, "out"))
			if err != nil {
				t.Fatal(err)
			}
			if sum.Counts[suite.VerdictInterrupted] != 1 || sum.Counts[suite.VerdictNotRun] != 1 {
				t.Errorf("suite.json counts %v, want one interrupted and one not run", sum.Counts)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			testkit.WriteFile(t, dir, "gated.yaml", gatedApp(dir))
			// exec keeps an ignored signal ignored in the new program.
			cmd := exec.Command("sh", append([]string{"-c", `trap '' INT; exec "$0" "$@"`, kasmrtBinary(t)}, tt.args(dir)...)...)
			cmd.Env = append(os.Environ(), "DISPLAY=", "KASM_RUNTIME_DEADLINE_S=60")
			var output strings.Builder
			cmd.Stdout, cmd.Stderr = &output, &output
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if cmd.ProcessState == nil {
					_ = cmd.Process.Kill()
					_ = cmd.Wait()
				}
			})
			testkit.Eventually(t, testkit.ScreenWait, "the application is launched", func() bool { return launchedUnder(filepath.Join(dir, "out")) })
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			if code := cmd.ProcessState.ExitCode(); code != exitTestError {
				t.Fatalf("exit %d (%v), want %d: SIGINT did not end it\n%s", code, err, exitTestError, output.String())
			}
			tt.want(t, dir)
		})
	}
}
