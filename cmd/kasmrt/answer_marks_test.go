package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/model/modeltest"
	"github.com/kasmrt/kasmrt/internal/testkit"
)

// TestConsoleSecretAnswerInTmux runs `kasmrt run --tui` in a real
// terminal with a model that asks for a code and types it by its ref. The
// operator marks the answer secret before typing it: the console draws it
// masked, and the code reaches no console frame, no model request and no
// file of the report, while the application still gets it typed.
func TestConsoleSecretAnswerInTmux(t *testing.T) {
	t.Parallel()
	need(t, "tmux", "Xvfb", "xterm")
	// Letters, which no timestamp, duration or count in the report can
	// hold by chance.
	const code = "ZqXwKv"
	srv := modeltest.New(t,
		modeltest.Call("observe_screen", `{}`),
		modeltest.Call("ask_human", `{"question": "What is the code?"}`),
		modeltest.Call("type_text", `{"ref": "answer_q1"}`),
		modeltest.Call("record_verdict", `{"verdict": "goal-met", "reason": "the code is typed"}`))
	dir := t.TempDir()
	op := testkit.WriteFile(t, dir, "operator.yaml", "runner:\n  settle_interval_ms: 30\n  settle_cap_ms: 400\nmodel:\n  endpoint: "+
		srv.URL()+"\n  name: "+modeltest.DefaultModel+"\n  retry: 0\n")
	scenario := testkit.WriteFile(t, dir, "code.yaml", "name: secret answer\ngoal: Enter the code the operator gives.\napp:\n  command: [xterm, -e, sleep, 3600]\n")
	out := filepath.Join(dir, "report")
	term := testkit.StartTerminal(t, "marks", 140, 40,
		"DISPLAY=", kasmrtBinary(t), "run", scenario, "-o", op, "--tui", "--graphics", "blocks", "--report", out)
	term.Screen("What is the code?")
	term.Keys("i")
	term.Screen("private: model can type it, not read it")
	term.Keys("C-s", "C-s")
	term.Screen("secret: masked; model can type it")
	term.Type(code)
	if shown := term.Screen("> ••••••"); strings.Contains(shown, code) {
		t.Fatalf("the secret answer is on the console:\n%s", shown)
	}
	term.Keys("Enter")
	final := term.Screen("(a secret answer of 6 characters)")
	term.Screen("(completed)")
	term.Keys("Escape", "q")
	testkit.Eventually(t, testkit.ScreenWait, "report.json after the console was closed", func() bool {
		_, err := os.Stat(filepath.Join(out, "report.json"))
		return err == nil
	})
	if strings.Contains(final, code) {
		t.Errorf("the secret answer is on the console:\n%s", final)
	}
	rep, raw := readReport(t, out)
	if len(rep.Steps) < 3 || rep.Steps[2].Tool != "type_text" || rep.Steps[2].Status != "ok" {
		t.Errorf("steps %+v, want the answer typed by its ref", rep.Steps)
	}
	for _, r := range srv.Requests() {
		if strings.Contains(r.Text(), code) {
			t.Errorf("model request %d holds the secret answer", r.N)
		}
	}
	if strings.Contains(raw, code) {
		t.Error("report.json holds the secret answer")
	}
	_ = filepath.WalkDir(out, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(path, ".png") {
			return err
		}
		if b, _ := os.ReadFile(path); strings.Contains(string(b), code) {
			t.Errorf("%s holds the secret answer", path)
		}
		return nil
	})
}
