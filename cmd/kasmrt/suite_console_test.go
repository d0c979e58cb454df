package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/model/modeltest"
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
	need(t, "tmux", "Xvfb", "xmessage")
	script := make([]modeltest.Exchange, 8)
	for i := range script {
		script[i] = fleetModel()
	}
	srv := modeltest.New(t, script...)
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	op := write("operator.yaml", "runner:\n  settle_interval_ms: 30\n  settle_cap_ms: 400\nsession: {width: 640, height: 400}\nmodel:\n  endpoint: "+
		srv.URL()+"\n  name: "+modeltest.DefaultModel+"\n  retry: 0\nservices:\n  model: {max_concurrent: 1}\n")
	var args []string
	for _, name := range []string{"alpha", "beta"} {
		args = append(args, write(name+".yaml", fmt.Sprintf("name: %s\ngoal: Read the message for %s.\napp:\n  command: [xmessage, -geometry, +40+40, %s]\n  window: {class: Xmessage}\n", name, name, name)))
	}
	out := filepath.Join(dir, "out")
	socket := filepath.Join(dir, "tmux.sock")
	tmux := func(args ...string) (string, error) {
		b, err := exec.Command("tmux", append([]string{"-S", socket}, args...)...).CombinedOutput()
		return string(b), err
	}
	log := filepath.Join(dir, "stdout")
	cmdline := fmt.Sprintf("%s suite %s %s -o %s --workers 2 --graphics blocks --out %s; echo exit=$? > %s; sleep 60",
		kasmrtBinary(t), args[0], args[1], op, out, log)
	if o, err := tmux("new-session", "-d", "-x", "140", "-y", "40", "-s", "fleet", "env", "TERM=tmux-256color", "DISPLAY=", "sh", "-c", cmdline); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, o)
	}
	t.Cleanup(func() { _, _ = tmux("kill-server") })
	screen := func(want string) string {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			o, err := tmux("capture-pane", "-p", "-t", "fleet")
			if err == nil && strings.Contains(o, want) {
				return o
			}
			if time.Now().After(deadline) {
				t.Fatalf("the console never showed %q; last screen:\n%s", want, o)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	keys := func(k ...string) {
		t.Helper()
		for _, key := range k {
			if o, err := tmux("send-keys", "-t", "fleet", key); err != nil {
				t.Fatalf("send-keys %s: %v\n%s", key, err, o)
			}
			time.Sleep(150 * time.Millisecond)
		}
	}
	screen("kasmrt suite")
	screen("alpha")
	screen("beta #0: Which colour for beta?")
	// Watch alpha's panes, then back to the table.
	keys("g", "Enter")
	screen("esc back to the runs")
	screen("kasmrt · alpha")
	keys("Escape")
	screen("runs · 2 of 2")
	// Answer beta's question from the one inbox.
	keys("i")
	screen("▸ beta #0: Which colour for beta?")
	keys("blue", "Enter")
	screen("2 ended")
	keys("q")
	deadline := time.Now().Add(20 * time.Second)
	var exit []byte
	for {
		if b, err := os.ReadFile(log); err == nil && len(b) > 0 {
			exit = b
			break
		}
		if time.Now().After(deadline) {
			o, _ := tmux("capture-pane", "-p", "-t", "fleet")
			t.Fatalf("kasmrt suite did not exit after q; screen:\n%s", o)
		}
		time.Sleep(100 * time.Millisecond)
	}
	final := screen("suite kasmrt: 2 runs")
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
