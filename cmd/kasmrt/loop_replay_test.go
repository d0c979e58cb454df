package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/model/modeltest"
	"github.com/kasmrt/kasmrt/engine/report"
	"github.com/kasmrt/kasmrt/internal/testkit"
)

// TestLoopRecordReplay records a goal run's model exchanges with
// --record-model against the model test server, then re-runs the scenario
// with --replay-model and no endpoint at all: the replay takes the same
// steps to the same verdict (pass-with-concerns: the scenario declares
// no success criteria), and the recording holds no secret.
func TestLoopRecordReplay(t *testing.T) {
	t.Parallel()
	need(t, "Xvfb", "xterm")
	const key = "sk-loop-record-key-4711"
	const secret = "hunter2-loop-secret"
	env := []string{"LOOP_REPLAY_SECRET=" + secret, "KASM_RUNTIME_VISION_ENDPOINT="}
	srv := modeltest.New(t,
		modeltest.Call("observe_screen", `{}`),
		modeltest.Call("type_text", `{"ref": "password"}`),
		modeltest.Call("observe_screen", `{}`),
		modeltest.Call("press_key", `{"key": "Return"}`),
		modeltest.Call("record_verdict", `{"verdict": "goal-met", "reason": "the password was entered"}`),
	)
	dir := t.TempDir()
	scenario := testkit.WriteFile(t, dir, "scenario.yaml", `name: loop record replay
app:
  command: [xterm, -geometry, 60x10+0+0, -e, sh, -c, 'stty -echo; read -r pw; sleep 3600']
goal: Enter the password in the terminal.
provides:
  password: {secret: {env: LOOP_REPLAY_SECRET}}
`)
	settle := "runner:\n  settle_interval_ms: 30\n  settle_cap_ms: 400\nsession: {width: 640, height: 400}\n"
	recordOp := testkit.WriteFile(t, dir, "record.yaml", settle+"model:\n  endpoint: "+srv.URL()+"\n  key: "+key+"\n  retry: 0\n")
	replayOp := testkit.WriteFile(t, dir, "replay.yaml", settle+"model:\n  retry: 0\n")
	recording := filepath.Join(dir, "model.jsonl")

	runOnce := func(name string, args ...string) report.Report {
		t.Helper()
		out := filepath.Join(dir, name)
		code, stdout, stderr := kasmrtProcess(t, env, append([]string{"run", scenario, "--headless", "--display", "-", "--report", out}, args...)...)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", name, code, stdout, stderr)
		}
		rep, _ := readReport(t, out)
		return rep
	}
	recorded := runOnce("recorded", "-o", recordOp, "--record-model", recording)
	replayed := runOnce("replayed", "-o", replayOp, "--replay-model", recording)

	steps := func(r report.Report) []string {
		var out []string
		for _, s := range r.Steps {
			out = append(out, s.Tool+" "+string(s.Status)+" "+s.Message)
		}
		return out
	}
	if got, want := strings.Join(steps(replayed), "\n"), strings.Join(steps(recorded), "\n"); got != want || len(recorded.Steps) != 5 {
		t.Errorf("replayed steps:\n%s\nrecorded steps:\n%s", got, want)
	}
	if recorded.Verdict != "pass-with-concerns" || replayed.Verdict != recorded.Verdict || replayed.Outcome != recorded.Outcome ||
		replayed.Loop.Iterations != 5 || replayed.ModelVerdict == nil || replayed.ModelVerdict.Reason != "the password was entered" {
		t.Errorf("recorded %s/%s, replayed %s/%s loop %+v model verdict %+v", recorded.Verdict, recorded.Outcome, replayed.Verdict, replayed.Outcome, replayed.Loop, replayed.ModelVerdict)
	}
	if recorded.Usage.Total["total_tokens"] != 550 || replayed.Usage.Total["total_tokens"] != 550 {
		t.Errorf("usage: recorded %v, replayed %v", recorded.Usage.Total, replayed.Usage.Total)
	}
	raw, err := os.ReadFile(recording)
	if err != nil {
		t.Fatal(err)
	}
	// The default profile names no model: the first exchange asks the
	// server for its one model, and the replay answers it from the file.
	if n := strings.Count(string(raw), "\n"); n != 6 || !strings.HasPrefix(string(raw), `{"method":"GET","path":"/v1/models"`) {
		t.Errorf("the recording has %d exchanges, want the model list and 5 turns:\n%.300s", n, raw)
	}
	for _, req := range srv.Requests() {
		if m := req.Model(); m != modeltest.DefaultModel {
			t.Errorf("request %d names model %q, want the server's only model %q", req.N, m, modeltest.DefaultModel)
		}
	}
	for _, s := range []string{key, secret, srv.URL()} {
		if strings.Contains(string(raw), s) {
			t.Errorf("the recording contains %q", s)
		}
	}
}
