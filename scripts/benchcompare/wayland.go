package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/kasmrt/kasmrt/drivers/desktop"
	"github.com/kasmrt/kasmrt/drivers/proc"
	"github.com/kasmrt/kasmrt/drivers/wayland"
	"github.com/kasmrt/kasmrt/internal/screenpng"
)

// compareWayland measures the Wayland desktop's two steps on one headless
// sway with an editable zenity text window: the screen as a PNG
// (kasmrt's screencopy capture and encoding, against grim), and a key
// until the screen it led to (kasmrt's virtual keyboard, settle on damage
// and capture, against wtype then grim). kasmrt's side is the driver the
// runtime uses, in process; the other side runs a process per action, as
// a shell-driven agent would.
func compareWayland(ctx context.Context, n int) ([]row, error) {
	for _, bin := range []string{"sway", "grim", "wtype", "zenity"} {
		if _, err := exec.LookPath(bin); err != nil {
			return nil, fmt.Errorf("%s is not installed (scripts/setup.sh)", bin)
		}
	}
	sess, err := wayland.StartServer(ctx, desktop.DisplayOptions{Width: 1280, Height: 800})
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	c, err := wayland.Dial(sess.Display())
	if err != nil {
		return nil, err
	}
	defer c.Close()
	dir, err := os.MkdirTemp("", "kasmrt-bench-wayland-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	app, err := proc.Start(ctx, proc.Spec{
		Argv:  []string{"zenity", "--text-info", "--editable", "--title=KasmBench", "--width=1200", "--height=760"},
		Env:   append(sess.ClientEnv(), "XDG_RUNTIME_DIR="+dir, "NO_AT_BRIDGE=1", "GSETTINGS_BACKEND=memory"),
		Unset: sess.ClientUnset(),
	})
	if err != nil {
		return nil, err
	}
	defer app.Stop(time.Second)
	findCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	w, err := c.FindWindow(findCtx, desktop.WindowMatch{Title: "KasmBench"})
	cancel()
	if err != nil {
		return nil, err
	}
	if err := c.Focus(w); err != nil {
		return nil, err
	}
	if _, err := c.WaitPainted(ctx, w, desktop.SettleOptions{Cap: 10 * time.Second}); err != nil {
		return nil, err
	}
	// The runtime's settle for an action (runner defaults).
	settle := desktop.SettleOptions{Interval: 60 * time.Millisecond, Cap: 2 * time.Second, Quiet: 30 * time.Millisecond, Response: 300 * time.Millisecond}

	observe := func(int) error {
		img, err := c.Capture(ctx)
		if err != nil {
			return err
		}
		_, err = screenpng.Bytes(img)
		return err
	}
	key := func(int) error {
		since := time.Now()
		if err := c.PressKey(ctx, "a"); err != nil {
			return err
		}
		settle.Since = since
		img, _, err := c.WaitSettled(ctx, settle)
		if err != nil {
			return err
		}
		_, err = screenpng.Bytes(img)
		return err
	}

	shot := filepath.Join(dir, "shot.png")
	env := append(proc.HelperEnv(sess.ClientEnv()...), "XDG_RUNTIME_DIR="+dir)
	run := func(argv ...string) error {
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Env = env
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %w: %s", argv[0], err, b)
		}
		return nil
	}
	grim := func(int) error { return run("grim", "-l", "1", shot) }
	wtype := func(int) error {
		if err := run("wtype", "b"); err != nil {
			return err
		}
		return run("grim", "-l", "1", shot)
	}
	observes, grims, err := interleave(n, observe, grim)
	if err != nil {
		return nil, err
	}
	keys, wtypes, err := interleave(n, key, wtype)
	if err != nil {
		return nil, err
	}
	cmd := "go run ./scripts/benchcompare -only wayland"
	return []row{
		{what: "Wayland (headless sway 1280x800): observe_screen, the screen as a PNG", other: "grim",
			kasmrt: median(observes), p95: p95(observes), them: median(grims), themP95: p95(grims), reproduce: cmd},
		{what: "Wayland: a key until the screen it led to (settled on damage)", other: "wtype + grim (no settle)",
			kasmrt: median(keys), p95: p95(keys), them: median(wtypes), themP95: p95(wtypes), reproduce: cmd},
	}, nil
}
