package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/drivers/vnc/vnctest"
	"github.com/kasmrt/kasmrt/engine/events"
	mt "github.com/kasmrt/kasmrt/engine/model/modeltest"
)

// TestTakeoverTypesIntoTheApp takes over a real run: x11vnc serves the
// embedded Xvfb, a VNC client in the test authenticates with the one-time
// password and types a line into the xterm under test, whose shell writes
// it to a file; the client leaves, which hands the desktop back, and the
// model's next turn is told the operator acted and the screen changed.
// The password reaches no report file and not the model.
func TestTakeoverTypesIntoTheApp(t *testing.T) {
	t.Parallel()
	loopNeed(t, "xterm", "x11vnc")
	out := filepath.Join(t.TempDir(), "typed")
	scenario := `name: takeover xterm
app:
  command: [xterm, -geometry, 60x12+20+20, -e, sh, -c, 'IFS= read -r l; printf %s "$l" > ` + out + `; exec sleep 600']
goal: Say whether the operator typed something.
`
	got := make(chan takeoverReply, 1)
	typed := make(chan error, 1)
	r := loopRun(t, loopCase{
		scenario: scenario,
		script:   []mt.Exchange{loopObserve, loopGoalMet},
		before: func(r *Runner) {
			r.takeover, r.vnc = newTakeoverDesk("127.0.0.1:0", false), x11vnc{}
			go func() {
				a, err := r.TakeOver(context.Background(), "api")
				got <- takeoverReply{access: a, err: err}
				if err != nil {
					typed <- err
					return
				}
				typed <- operate(a, out)
			}()
		},
	})
	rep := <-got
	if rep.err != nil {
		t.Fatalf("TakeOver: %v", rep.err)
	}
	if err := <-typed; err != nil {
		t.Fatalf("the operator's VNC session: %v", err)
	}
	b, err := os.ReadFile(out)
	if err != nil || string(b) != "hello kasmrt" {
		t.Fatalf("the app received %q (%v), want what the operator typed", b, err)
	}
	ended := eventsOf(r.events, events.KindTakeoverEnded)
	if len(ended) != 1 {
		t.Fatalf("%d takeover.ended events", len(ended))
	}
	if d, _ := ended[0].Data.(events.TakeoverEnded); d.Ended != events.TakeoverClientLeft || !d.ScreenChanged {
		t.Errorf("takeover.ended = %+v: want the client's leaving and a changed screen", d)
	}
	if len(r.reqs) == 0 || !strings.Contains(string(r.reqs[0].Raw), "The operator took over the desktop") ||
		!strings.Contains(string(r.reqs[0].Raw), "the screen changed in") {
		t.Errorf("the model's first turn was not told of the takeover")
	}
	if !strings.Contains(strings.Join(r.rep.Concerns, "\n"), "the operator took over the desktop") {
		t.Errorf("concerns = %q", r.rep.Concerns)
	}
	wantNoSecret(t, r, rep.access.Password)
}

// operate is the operator at a VNC viewer: connect, type a line, wait
// until the app has it, leave.
func operate(a TakeoverAccess, out string) error {
	c, err := vnctest.Dial(a.Addr, a.Password)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Type("hello kasmrt"); err != nil {
		return err
	}
	if err := c.Key(vnctest.KeyReturn); err != nil {
		return err
	}
	// The shell writes the line when it reads Return; the file is the
	// event this waits for (bounded, so a lost key fails the test).
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(out); err == nil && len(b) > 0 {
			return nil
		}
	}
	return os.ErrNotExist
}
