package x11

import (
	"context"
	"testing"
	"time"

	"github.com/jezek/xgb/xproto"
)

// TestPressKeyPausesAfterTypedText presses Return straight after typed
// text: the key waits until TypingPause has passed since the text was
// read, as a person pauses between a name and Return, and a second key
// does not pause again. Only lower bounds are asserted, which load can
// only make longer.
func TestPressKeyPausesAfterTypedText(t *testing.T) {
	t.Parallel()
	s, c := newDisplay(t)
	launch(t, s.Display(), "xterm", "-class", "KasmPause", "-e", "sh", "-c", "exec cat")
	w := findWindow(t, c, WindowMatch{Class: "KasmPause"})
	if err := c.Focus(w); err != nil {
		t.Fatalf("Focus: %v", err)
	}
	ctx := context.Background()
	start := time.Now()
	if err := c.TypeText(ctx, "name"); err != nil {
		t.Fatalf("TypeText: %v", err)
	}
	if err := c.PressKey(ctx, "Return"); err != nil {
		t.Fatalf("PressKey: %v", err)
	}
	if took := time.Since(start); took < TypingPause {
		t.Errorf("Return was sent %v after the typing began, want at least the pause of %v", took, TypingPause)
	}
	if !c.typedAt.IsZero() {
		t.Errorf("the pause is still pending after the key that waited for it")
	}
}

// TestPingClient pings real applications: a GTK window lists
// _NET_WM_PING and answers from its main loop; xterm does not list it and
// is not asked.
func TestPingClient(t *testing.T) {
	t.Parallel()
	s, c := newDisplay(t)
	launch(t, s.Display(), "zenity", "--info", "--text", "ping", "--class", "KasmPing")
	launch(t, s.Display(), "xterm", "-class", "KasmNoPing")
	// An app still starting may be too busy to answer within the ping's
	// bound, so the answering one is asked until it answers.
	gtk := findWindow(t, c, WindowMatch{Class: "KasmPing"})
	eventually(t, "zenity's answer to a ping", func() bool {
		answered, err := c.pingClient(context.Background(), xproto.Window(gtk.ID))
		if err != nil {
			t.Fatalf("ping zenity: %v", err)
		}
		return answered
	})
	// A window that does not list the protocol is not waited for: the
	// answer is no at once, whatever the load.
	xterm := findWindow(t, c, WindowMatch{Class: "KasmNoPing"})
	if answered, err := c.pingClient(context.Background(), xproto.Window(xterm.ID)); err != nil || answered {
		t.Errorf("ping xterm: answered %v (%v), want no answer from a window without _NET_WM_PING", answered, err)
	}
}
