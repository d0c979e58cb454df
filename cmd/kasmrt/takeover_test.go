package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunTakeoverRefusals: a takeover address other machines reach, one
// that is no address, and --takeover-pauses-deadline alone are bad input,
// and nothing launches.
func TestRunTakeoverRefusals(t *testing.T) {
	t.Setenv("KASM_RUNTIME_VISION_ENDPOINT", "http://127.0.0.1:9/v1")
	dir := t.TempDir()
	scenario := filepath.Join(dir, "takeover.yaml")
	if err := os.WriteFile(scenario, []byte(listenScenario), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"every interface", []string{"--takeover", "0.0.0.0:5900"}, "--takeover 0.0.0.0:5900 is not a loopback address: VNC authentication carries at most 8 password characters"},
		{"another machine's address", []string{"--takeover", "192.0.2.7:0"}, "short of the 128 bits an address other machines reach needs"},
		{"no port", []string{"--takeover", "127.0.0.1"}, `--takeover "127.0.0.1": want host:port`},
		{"a port out of range", []string{"--takeover", "127.0.0.1:70000"}, "the port must be a number from 0 to 65535"},
		{"pausing the deadline without a takeover", []string{"--takeover-pauses-deadline"}, "--takeover-pauses-deadline needs --takeover"},
	} {
		t.Run(c.name, func(t *testing.T) {
			report := filepath.Join(t.TempDir(), "report")
			code, _, stderr := kasmrt(t, append([]string{"run", scenario, "--headless", "--report", report}, c.args...)...)
			if code != exitBadInput || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, "nothing was launched") {
				t.Errorf("exit %d, stderr %q; want 3 with %q", code, stderr, c.want)
			}
			if _, err := os.Stat(report); !os.IsNotExist(err) {
				t.Errorf("a refused run left its report directory: %v", err)
			}
		})
	}
}

func TestTakeoverAddrIsLoopbackByDefault(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{":5900": "127.0.0.1:5900", "localhost:0": "localhost:0", "[::1]:5901": "[::1]:5901"} {
		if got, err := takeoverAddr(in); err != nil || got != want {
			t.Errorf("takeoverAddr(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}
