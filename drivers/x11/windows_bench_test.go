package x11

import (
	"context"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/drivers/proc"
)

// BenchmarkWindows measures listing the windows, which every agent step
// does for the window titles the model is told: a 1280x800 session with
// openbox managing an xterm, as a run's desktop has it.
func BenchmarkWindows(b *testing.B) {
	needTool(b, "openbox")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := StartServer(ctx, DisplayOptions{WindowManager: WindowManagerOpenbox})
	if err != nil {
		b.Fatalf("StartServer: %v", err)
	}
	b.Cleanup(func() { s.Close() })
	c, err := Dial(s.Display())
	if err != nil {
		b.Fatalf("Dial: %v", err)
	}
	b.Cleanup(func() { c.Close() })
	p, err := proc.Start(ctx, proc.Spec{
		Argv: []string{"xterm", "-class", "KasmBench", "-e", "sleep", "1000"},
		Env:  []string{"DISPLAY=" + s.Display()},
	})
	if err != nil {
		b.Fatalf("launch xterm: %v", err)
	}
	b.Cleanup(func() { p.Stop(time.Second) })
	if _, err := c.FindWindow(ctx, WindowMatch{Class: "KasmBench"}); err != nil {
		b.Fatalf("FindWindow: %v", err)
	}
	timed(b, func(int) error {
		ws, err := c.Windows()
		if err == nil && len(ws) == 0 {
			b.Fatal("no windows listed")
		}
		return err
	})
}
