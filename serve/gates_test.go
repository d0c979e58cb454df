package serve

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSessionsShareTheCapacityGates opens two sessions whose operator file
// bounds the declared tools' service to one request at a time: while the
// first session's call holds the only slot, the second's waits for it (a
// capacity.wait event) and runs once the first is done.
func TestSessionsShareTheCapacityGates(t *testing.T) {
	need(t, "Xvfb", "xterm")
	ctx := t.Context()
	m, base := testManager(t, ctx)
	shared := filepath.Join(base, "shared")
	if err := os.Mkdir(shared, 0o700); err != nil {
		t.Fatal(err)
	}
	release := filepath.Join(shared, "release")
	scenario := strings.Replace(testScenario, "tools:\n", `tools:
  hold:
    description: Hold the fixtures service until the test releases it.
    run: shell
    service: fixtures
    timeout_s: 30
    command: 'echo x >> `+filepath.Join(shared, "holding")+`; while [ ! -e `+release+` ]; do sleep 0.05; done'
`, 1)
	if err := os.WriteFile(filepath.Join(m.opts.ScenariosDir, "held.yaml"), []byte(scenario), 0o600); err != nil {
		t.Fatal(err)
	}
	operator := filepath.Join(base, "operator.yaml")
	if err := os.WriteFile(operator, []byte("services:\n  fixtures:\n    max_concurrent: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m.opts.Operator = operator
	defer m.CloseAll(ctx)

	var sessions []string
	for range 2 {
		id, _, err := m.Open("held.yaml")
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		sessions = append(sessions, id)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	// A test that gives up still lets the calls end, rather than wait for
	// their timeout.
	defer os.WriteFile(release, nil, 0o600)
	call := func(id string) {
		wg.Go(func() {
			s, err := m.Get(id)
			if err != nil {
				t.Error(err)
				return
			}
			if res, err := s.Call(ctx, "hold", nil); err != nil || res.Status != "ok" {
				t.Errorf("session %s: hold = %+v, %v", id, res, err)
			}
		})
	}
	holding := func() int {
		b, _ := os.ReadFile(filepath.Join(shared, "holding"))
		return strings.Count(string(b), "x")
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("gave up waiting for %s", what)
			}
		}
	}
	call(sessions[0])
	waitFor("the first session's call to hold the slot", func() bool { return holding() == 1 })
	call(sessions[1])
	second, err := m.Get(sessions[1])
	if err != nil {
		t.Fatal(err)
	}
	waitFor("the second session's call to wait for the slot", func() bool {
		b, _ := os.ReadFile(filepath.Join(second.ReportDir(), "events.jsonl"))
		return strings.Contains(string(b), `"kind":"capacity.wait"`)
	})
	if n := holding(); n != 1 {
		t.Errorf("%d calls hold the service bounded to one", n)
	}
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if n := holding(); n != 2 {
		t.Errorf("%d calls ran, want both once the slot was free", n)
	}
}
