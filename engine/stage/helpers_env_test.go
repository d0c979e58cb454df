package stage

import (
	"bytes"
	"context"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/internal/testkit"
	"github.com/kasmrt/kasmrt/scenarios"
)

// TestHelpersHoldNoSecret sets a real stage (Xvfb, openbox, the isolated
// session bus, the accessibility bus and zenity) while the runtime's
// environment holds a secret under its source variable and under another
// name, and reads /proc/PID/environ of every process the stage started:
// none holds the secret's value, and the application still gets the
// runtime's other variables.
func TestHelpersHoldNoSecret(t *testing.T) {
	testkit.Need(t, "Xvfb", "openbox", "dbus-daemon", "zenity")
	const secret = "Hq3v-helper-secret-81"
	t.Setenv("KASM_STAGE_SECRET", secret)
	t.Setenv("KASM_STAGE_ALIAS", secret)
	t.Setenv("KASM_STAGE_PLAIN", "plain")
	dir := t.TempDir()
	path := filepath.Join(dir, "scenario.yaml")
	scenario := `name: helpers hold no secret
app:
  command: [zenity, --question, "--text=Proceed?"]
  startup_timeout_s: 20
provides:
  pw: {secret: {env: KASM_STAGE_SECRET}}
steps:
  - observe_screen: {}
  - click_element: {name: "Yes"}
`
	if err := os.WriteFile(path, []byte(scenario), 0o600); err != nil {
		t.Fatal(err)
	}
	files, err := scenarios.Load(path, "", os.LookupEnv)
	if err != nil {
		t.Fatalf("load the scenario: %v", err)
	}
	rep := &logReporter{}
	st := New(Config{
		Files: files, Machine: Drivers{}, ReportDir: dir, AppDir: dir,
		// The engine names both: the secret's source, and a variable that
		// holds a secret's value.
		Unset:  []string{"KASM_STAGE_ALIAS", "KASM_STAGE_SECRET"},
		Getenv: os.Getenv,
		Output: func() io.Writer { return io.Discard },
	}, rep)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	defer st.Strike()
	if err := st.Set(ctx, ctx); err != nil {
		t.Fatalf("set the stage: %v (log: %q)", err, rep.lines)
	}
	if st.A11y == nil || !st.A11y.Found {
		t.Fatalf("zenity's controls were not found, so the accessibility bus was not started: %+v", st.A11y)
	}

	started := descendants(t, os.Getpid())
	seen := map[string]bool{}
	for _, p := range started {
		seen[p.name] = true
		if bytes.Contains(p.environ, []byte(secret)) {
			t.Errorf("%s (pid %d) holds the secret in its environment", p.name, p.pid)
		}
		if p.pid == st.App.PID() && !bytes.Contains(p.environ, []byte("KASM_STAGE_PLAIN=plain\x00")) {
			t.Errorf("the application lost the runtime's other variables: %q", p.environ)
		}
	}
	for _, want := range []string{"Xvfb", "openbox", "dbus-daemon", "at-spi-bus-laun", "at-spi2-registr", "zenity"} {
		if !seen[want] {
			t.Errorf("no %s among the processes the stage started (%v), so its environment was not read", want, slices.Sorted(maps.Keys(seen)))
		}
	}
}

// process is one running process: its command name and environment.
type process struct {
	pid     int
	name    string
	environ []byte
}

// descendants lists the running descendants of pid and the members of
// their process groups, read from /proc. Each child the stage starts leads
// its own group, and the services a D-Bus session bus activates stay in the
// bus's group after they leave it for init.
func descendants(t *testing.T, pid int) []process {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	type stat struct {
		name        string
		ppid, group int
	}
	all := map[int]stat{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // it ended meanwhile
		}
		// The name is in parentheses and may hold spaces; the state, the
		// parent's pid and the process group follow it.
		s := string(raw)
		open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || closing < open {
			continue
		}
		fields := strings.Fields(s[closing+1:])
		if len(fields) < 3 {
			continue
		}
		ppid, _ := strconv.Atoi(fields[1])
		group, _ := strconv.Atoi(fields[2])
		all[p] = stat{name: s[open+1 : closing], ppid: ppid, group: group}
	}
	descends := func(p int) bool {
		for a := all[p].ppid; a > 1; a = all[a].ppid {
			if a == pid {
				return true
			}
		}
		return false
	}
	var out []process
	for p, st := range all {
		if !descends(p) && !(st.group != p && descends(st.group)) {
			continue
		}
		if environ, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p), "environ")); err == nil {
			out = append(out, process{pid: p, name: st.name, environ: environ})
		}
	}
	return out
}
