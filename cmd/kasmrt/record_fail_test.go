package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/model/modeltest"
)

// TestRecordModelWriteFailureIsAConcern records into /dev/full, where
// every write fails: the run still makes each model call once (no retry,
// the model is not switched off), passes with a concern that says the
// recording stopped, and exits 0.
func TestRecordModelWriteFailureIsAConcern(t *testing.T) {
	need(t, "Xvfb", "xterm")
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skipf("this test writes to /dev/full: %v", err)
	}
	t.Parallel()
	srv := modeltest.New(t,
		modeltest.Call("observe_screen", `{}`),
		modeltest.Call("observe_screen", `{}`),
		modeltest.Call("record_verdict", `{"verdict": "goal-met", "reason": "seen"}`),
	)
	dir := t.TempDir()
	scenario, operator := filepath.Join(dir, "scenario.yaml"), filepath.Join(dir, "operator.yaml")
	for path, body := range map[string]string{
		scenario: "name: record fails\napp:\n  command: [xterm, -geometry, 60x10+0+0, -e, sh]\ngoal: Look at the terminal.\n",
		operator: "runner:\n  settle_interval_ms: 30\n  settle_cap_ms: 400\nsession: {width: 640, height: 400}\nmodel:\n  endpoint: " + srv.URL() + "\n  retry: 2\n",
	} {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "report")
	code, stdout, stderr := kasmrtProcess(t, []string{"KASM_RUNTIME_VISION_ENDPOINT="}, "run", scenario, "-o", operator, "--headless", "--display", "-", "--report", out, "--record-model", "/dev/full")
	if code != exitPass {
		t.Errorf("exit %d, want %d\n%s\n%s", code, exitPass, stdout, stderr)
	}
	rep, _ := readReport(t, out)
	if rep.Verdict != "pass-with-concerns" || !strings.Contains(strings.Join(rep.Concerns, "\n"), "recording the model exchanges stopped") {
		t.Errorf("verdict %s, concerns %q", rep.Verdict, rep.Concerns)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("the model got %d requests, want 3 (one per turn, none retried)", n)
	}
	if strings.Contains(stdout, "model retry") || strings.Contains(stdout, "model off") {
		t.Errorf("the recording failure reached the model client:\n%s", stdout)
	}
}
