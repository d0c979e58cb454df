package x11

import (
	"context"
	"testing"
	"time"
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
