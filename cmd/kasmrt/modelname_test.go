package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/model/modeltest"
)

// TestUnnamedModelOnAServerOfSeveralIsBadInput runs a goal scenario with
// the default profile and no model.name against a server that serves two
// models: kasmrt cannot pick one, so it says where to set the name, exits
// 3 and launches nothing.
func TestUnnamedModelOnAServerOfSeveralIsBadInput(t *testing.T) {
	t.Setenv("KASM_RUNTIME_VISION_ENDPOINT", "")
	srv := modeltest.New(t)
	srv.ServeModels("org/small-vlm", "org/large-vlm")
	dir := t.TempDir()
	scenario, operator := filepath.Join(dir, "scenario.yaml"), filepath.Join(dir, "operator.yaml")
	for path, body := range map[string]string{
		scenario: "name: unnamed model\napp:\n  command: [xterm]\ngoal: Look.\n",
		operator: "model:\n  endpoint: " + srv.URL() + "\n",
	} {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "report")
	code, stdout, stderr := kasmrt(t, "run", scenario, "-o", operator, "--headless", "--display", "-", "--report", out)
	if code != exitBadInput {
		t.Errorf("exit %d, want %d\n%s\n%s", code, exitBadInput, stdout, stderr)
	}
	if !strings.Contains(stderr, operator+":1:1") || !strings.Contains(stderr, "serves 2 models (org/small-vlm, org/large-vlm); set model.name") {
		t.Errorf("stderr does not place the problem at model.name:\n%s", stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a report directory was created: something was launched")
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d model turns were sent", n)
	}
}
