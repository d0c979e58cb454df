package proc

import (
	"context"
	"os/exec"
	"slices"
	"testing"
	"time"
)

// TestThreads reads the threads of a sleeping process and its child: each
// named, in a state, and the sleeper's kernel wait named when the kernel
// says it.
func TestThreads(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	p, err := Start(context.Background(), Spec{Argv: []string{"sh", "-c", "sleep 600 & wait"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(time.Second) })
	var threads []Thread
	deadline := time.Now().Add(10 * time.Second)
	for {
		threads = Threads(p.PID())
		if slices.ContainsFunc(threads, func(th Thread) bool { return th.Name == "sleep" && th.State == "S" }) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Threads(%d) = %+v, want the shell and its sleeping child", p.PID(), threads)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if threads[0].PID != p.PID() || threads[0].TID != p.PID() || threads[0].Name != "sh" {
		t.Errorf("first thread = %+v, want the shell's main thread", threads[0])
	}
	for _, th := range threads {
		if th.Name == "sleep" && th.WChan == "" {
			t.Logf("the kernel does not name the sleeper's wait (wchan): %+v", th)
		}
	}
}
