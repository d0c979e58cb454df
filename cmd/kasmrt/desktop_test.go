package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDesktopFlag checks --desktop as validate and run take it: an
// unknown desktop, or a Wayland run that would borrow an X display, is bad
// input (exit 3, nothing launched); a valid Wayland run's validate names
// what the session lacks and why the browser's tools are not offered.
func TestDesktopFlag(t *testing.T) {
	t.Setenv("KASM_RUNTIME_VISION_ENDPOINT", "")
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	sc := write("ok.yaml", "name: x\napp: {command: [xterm]}\nsteps: [observe_screen: {}]\n")
	browser := write("web.yaml", "name: w\nbrowser: {start_url: \"http://example.test/\"}\nsteps: [observe_screen: {}]\n")
	borrowing := write("op.yaml", "session: {display: \":5\"}\n")
	cases := []struct {
		name      string
		args      []string
		code      int
		out, errs []string
	}{
		{"validate names what wayland lacks", []string{"validate", sc, "--desktop", "wayland"}, 0,
			[]string{"the wayland session lacks (2):", "hang detection (the app_responsive check)",
				"cdp_url                needs a browser: section, which needs the X11 desktop"}, nil},
		{"validate on x11 lacks nothing", []string{"validate", sc, "--desktop", "x11"}, 0, []string{"is valid"}, nil},
		{"unknown desktop", []string{"validate", sc, "--desktop", "mir"}, 3, nil,
			[]string{`error: --desktop: want x11 or wayland, got "mir"; nothing was launched`}},
		{"run with an unknown desktop", []string{"run", sc, "--headless", "--report", filepath.Join(dir, "r1"), "--desktop", "mir"}, 3, nil,
			[]string{`error: --desktop: want x11 or wayland, got "mir"; nothing was launched`}},
		{"wayland borrowing a display", []string{"run", sc, "--headless", "--report", filepath.Join(dir, "r2"), "--desktop", "wayland", "--display", ":3"}, 3, nil,
			[]string{"--desktop: a Wayland session is always the run's own compositor; --display borrows an X display; nothing was launched"}},
		{"wayland over an operator's display", []string{"validate", sc, "-o", borrowing, "--desktop", "wayland"}, 3, nil,
			[]string{"the operator file's session.display borrows an X display"}},
		{"wayland taken over", []string{"run", sc, "--headless", "--report", filepath.Join(dir, "r3"), "--desktop", "wayland", "--takeover", "127.0.0.1:0"}, 3, nil,
			[]string{"--takeover: the Wayland desktop cannot be taken over", "(--desktop x11); nothing was launched"}},
		{"a scripted run cached", []string{"run", sc, "--headless", "--report", filepath.Join(dir, "r4"), "--cache", "read-write"}, 3, nil,
			[]string{"--cache read-write: a scripted scenario makes no model calls to cache (the action cache is for goal runs); leave the flag out; nothing was launched"}},
		{"wayland with a browser", []string{"validate", browser, "--desktop", "wayland"}, 3, nil,
			[]string{"--desktop: a browser: section needs the X11 desktop"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := kasmrt(t, c.args...)
			if code != c.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, c.code, out, errs)
			}
			wantIn(t, "stdout", out, c.out)
			wantIn(t, "stderr", errs, c.errs)
			if c.code == 3 {
				if _, err := os.Stat(filepath.Join(dir, "r1")); err == nil && strings.HasPrefix(c.name, "run") {
					t.Errorf("a refused run left its report directory")
				}
			}
		})
	}
}
