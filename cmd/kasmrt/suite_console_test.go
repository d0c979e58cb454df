package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/model/modeltest"
	"github.com/kasmrt/kasmrt/internal/testkit"
)

// fleetModel plays two goal runs from one server: each observes; beta
// then asks the operator which colour, and both record goal-met, beta
// with the answer it was given.
func fleetModel() modeltest.Exchange {
	return modeltest.Func(func(req modeltest.Request) modeltest.Exchange {
		var results []string
		for _, m := range req.Messages() {
			if m["role"] == "tool" {
				results = append(results, fmt.Sprint(m["content"]))
			}
		}
		beta := strings.Contains(req.Text(), "beta")
		switch {
		case len(results) == 0:
			return modeltest.Call("observe_screen", `{}`)
		case beta && len(results) == 1:
			return modeltest.Call("ask_human", `{"question": "Which colour for beta?"}`)
		}
		return modeltest.Call("record_verdict", fmt.Sprintf(`{"verdict": "goal-met", "reason": %q}`, "told: "+results[len(results)-1]))
	})
}

// TestSuiteConsoleInTmux runs `kasmrt suite` in a real terminal with two
// goal runs: the table lists both, enter watches one and esc goes back,
// the question of the second run is answered from the one inbox and
// reaches that run's model, and quitting prints every run's line and the
// summary.
func TestSuiteConsoleInTmux(t *testing.T) {
	t.Parallel()
	need(t, "tmux", "Xvfb", "xmessage")
	script := make([]modeltest.Exchange, 8)
	for i := range script {
		script[i] = fleetModel()
	}
	srv := modeltest.New(t, script...)
	dir := t.TempDir()
	op := testkit.WriteFile(t, dir, "operator.yaml", "runner:\n  settle_interval_ms: 30\n  settle_cap_ms: 400\nsession: {width: 640, height: 400}\nmodel:\n  endpoint: "+
		srv.URL()+"\n  name: "+modeltest.DefaultModel+"\n  retry: 0\nservices:\n  model: {max_concurrent: 1}\n")
	var args []string
	for _, name := range []string{"alpha", "beta"} {
		args = append(args, testkit.WriteFile(t, dir, name+".yaml", fmt.Sprintf("name: %s\ngoal: Read the message for %s.\napp:\n  command: [xmessage, -geometry, +40+40, %s]\n  window: {class: Xmessage}\n", name, name, name)))
	}
	out := filepath.Join(dir, "out")
	log := filepath.Join(dir, "stdout")
	cmdline := fmt.Sprintf("%s suite %s %s -o %s --workers 2 --graphics blocks --out %s; echo exit=$? > %s; sleep 60",
		kasmrtBinary(t), args[0], args[1], op, out, log)
	term := testkit.StartTerminal(t, "fleet", 140, 40, "DISPLAY=", "sh", "-c", cmdline)
	term.Screen("kasmrt suite")
	term.Screen("alpha")
	term.Screen("beta #0: Which colour for beta?")
	// Watch alpha's panes, then back to the table.
	term.Keys("g", "Enter")
	term.Screen("esc back to the runs")
	term.Screen("kasmrt · alpha")
	term.Keys("Escape")
	term.Screen("runs · 2 of 2")
	// Answer beta's question from the one inbox, marked shareable: the
	// model must read which colour.
	term.Keys("i")
	term.Screen("▸ beta #0: Which colour for beta?")
	term.Screen("private: model can type it, not read it")
	term.Keys("C-s")
	term.Screen("shareable: model can read it")
	term.Type("blue")
	term.Keys("Enter")
	term.Screen("2 ended")
	term.Keys("q")
	var exit []byte
	testkit.Eventually(t, testkit.ScreenWait, "kasmrt suite exits after q", func() bool {
		exit, _ = os.ReadFile(log)
		return len(exit) > 0
	})
	final := term.Screen("suite kasmrt: 2 runs")
	if !strings.Contains(final, "[2/2]") || strings.TrimSpace(string(exit)) != "exit=0" {
		t.Errorf("after the console: %s\n%s", exit, final)
	}
	var told bool
	for _, r := range srv.Requests() {
		if strings.Contains(r.Text(), "blue") {
			told = true
		}
	}
	if !told {
		t.Error("no model request of beta carried the operator's answer")
	}
	runs, _ := filepath.Glob(filepath.Join(out, "runs", "beta-*", "events.jsonl"))
	if len(runs) != 1 {
		t.Fatalf("beta's events: %v", runs)
	}
	evs, err := events.ReadFile(runs[0])
	if err != nil {
		t.Fatal(err)
	}
	var answered bool
	for _, e := range evs {
		if e.Kind == events.KindAnswer && e.Question != nil && e.Question.Answer == "blue" {
			answered = true
		}
	}
	if !answered {
		t.Error("beta's events have no answer \"blue\"")
	}
}
