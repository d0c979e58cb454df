package suite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/model/modeltest"
)

// goalRun observes, then records goal-met: each turn is answered from
// what the request holds, so runs sharing one server may interleave.
func goalRun() modeltest.Exchange {
	return modeltest.Delay(300*time.Millisecond, modeltest.Func(func(req modeltest.Request) modeltest.Exchange {
		for _, m := range req.Messages() {
			if m["role"] == "tool" {
				return modeltest.Call("record_verdict", `{"verdict": "goal-met", "reason": "the message is shown"}`)
			}
		}
		return modeltest.Call("observe_screen", `{}`)
	}))
}

// Three goal runs on three workers share services.model.max_concurrent
// 1: the model server never answers two turns at once, the runs that
// waited say so in their events, and every run still ends in its verdict.
func TestSuiteCapacityGate(t *testing.T) {
	suiteNeed(t)
	const turns = 6 // two per run
	script := make([]modeltest.Exchange, turns)
	for i := range script {
		script[i] = goalRun()
	}
	srv := modeltest.New(t, script...)
	files := map[string]string{
		"operator.yaml": suiteOperator + "model:\n  endpoint: " + srv.URL() + "\n  name: " + modeltest.DefaultModel + "\n  retry: 0\nservices:\n  model:\n    max_concurrent: 1\n",
	}
	for i := range 3 {
		files[fmt.Sprintf("goal%d.yaml", i)] = fmt.Sprintf(`name: goal %d
goal: Read the message on the screen.
app:
  command: [xmessage, -geometry, +40+40, "hello %d"]
  window: {class: Xmessage}
`, i, i)
	}
	dir := suiteDir(t, files)
	sum, out := runSuite(t, dir, []string{"goal*.yaml"}, Options{Workers: 3})
	for _, r := range sum.Runs {
		if r.Verdict != "pass" && r.Verdict != "pass-with-concerns" {
			t.Errorf("%s: %s %v %s", r.Key, r.Verdict, r.Reasons, r.Error)
		}
	}
	if n := len(srv.Requests()); n != turns {
		t.Errorf("the server answered %d turns, want %d", n, turns)
	}
	if p := srv.PeakConcurrency(); p != 1 {
		t.Errorf("the server answered %d turns at once; services.model.max_concurrent is 1", p)
	}
	waits, acquired := 0, 0
	for _, r := range sum.Runs {
		evs, err := events.ReadFile(filepath.Join(out, r.Report, "events.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			switch d := e.Data.(type) {
			case events.CapacityWait:
				waits++
				if d.Group != "model" || d.Limit != 1 || d.For != "model" || !strings.Contains(e.Message, "services.model.max_concurrent") {
					t.Errorf("%s: wait %+v %q", r.Key, d, e.Message)
				}
			case events.CapacityAcquired:
				acquired++
				if d.Group != "model" || d.WaitedMS <= 0 {
					t.Errorf("%s: acquired %+v", r.Key, d)
				}
			}
		}
	}
	// Three runs start at once and each turn takes 300 ms: at least the
	// first turns of two runs wait for the third's.
	if waits < 2 || acquired != waits {
		t.Errorf("%d capacity.wait and %d capacity.acquired events, want at least 2 of each and as many of both", waits, acquired)
	}
}

// Two operator files that bound one group differently cannot share a
// suite: refused before anything starts, at the second bound's position.
func TestSuiteGatesMustAgree(t *testing.T) {
	t.Parallel()
	dir := suiteDir(t, map[string]string{
		"a.yaml":   suitePass,
		"b.yaml":   strings.Replace(suitePass, "name: passes", "name: passes too", 1),
		"op1.yaml": "services:\n  model: {max_concurrent: 1}\n",
		"op2.yaml": "services:\n  model:\n    max_concurrent: 2\n",
	})
	lookup := func(string) (string, bool) { return "", false }
	p1, err := Build(Input{Args: []string{filepath.Join(dir, "a.yaml")}, Operator: filepath.Join(dir, "op1.yaml"), Version: "test", Lookup: lookup})
	if err != nil {
		t.Fatal(err)
	}
	p2, err := Build(Input{Args: []string{filepath.Join(dir, "b.yaml")}, Operator: filepath.Join(dir, "op2.yaml"), Version: "test", Lookup: lookup})
	if err != nil {
		t.Fatal(err)
	}
	p1.Runs = append(p1.Runs, p2.Runs...)
	out := filepath.Join(dir, "out")
	_, err = Execute(context.Background(), p1, Options{Out: out, Workers: 2, Version: "test"})
	var bad *BadInputError
	if !errors.As(err, &bad) || !strings.Contains(err.Error(), "op2.yaml:3:5: services.model.max_concurrent") {
		t.Fatalf("err = %v, want bad input at op2.yaml:3:5", err)
	}
	if _, err := os.Stat(filepath.Join(out, "runs")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a run started: %v", err)
	}
}

// A declared tool of a bounded group runs one command at a time across the
// suite's runs: two runs calling a slow check at once never overlap in it
// (the check fails if it finds the other inside), and the later one waits.
func TestSuiteDeclaredToolGate(t *testing.T) {
	suiteNeed(t)
	dir := t.TempDir()
	lock := filepath.Join(dir, "inside")
	files := map[string]string{"operator.yaml": suiteOperator + "services:\n  checks:\n    max_concurrent: 1\n"}
	for i := range 2 {
		files[fmt.Sprintf("check%d.yaml", i)] = fmt.Sprintf(`name: check %d
app:
  command: [xmessage, -geometry, +40+40, "check %d"]
  window: {class: Xmessage}
steps:
  - observe_screen: {}
  - slow_check: {}
tools:
  slow_check:
    run: shell
    env: {LOCK: %q}
    command: 'mkdir "$LOCK" || exit 9; sleep 1.5; rmdir "$LOCK"'
    service: checks
`, i, i, lock)
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	sum, out := runSuite(t, dir, []string{"check*.yaml"}, Options{Workers: 2})
	waits := 0
	for _, r := range sum.Runs {
		if r.Verdict != "pass" {
			t.Errorf("%s: %s %v", r.Key, r.Verdict, r.Reasons)
		}
		evs, err := events.ReadFile(filepath.Join(out, r.Report, "events.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			if d, ok := e.Data.(events.CapacityWait); ok && d.Group == "checks" && d.For == "slow_check" {
				waits++
			}
		}
	}
	if waits != 1 {
		t.Errorf("%d waits for the checks group, want 1: the two 1.5 s checks overlap unless one waits", waits)
	}
}
