package tui

import (
	"context"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kasmrt/kasmrt/tui/graphics"
)

// TestFleetEndsWithItsContext cancels the context a fleet console was made
// with: the source's Watch, which runs until its context ends, returns.
func TestFleetEndsWithItsContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	f := NewFleet(ctx, FleetOptions{Source: newFakeFleet(), Title: "cancelled", Run: Options{
		Theme: testTheme(t, false), Graphics: graphics.None, Env: func(string) string { return "" },
	}})
	batch, ok := f.Init()().(tea.BatchMsg)
	if !ok || len(batch) == 0 {
		t.Fatalf("Init gave %T, want a batch whose first command watches the source", f.Init()())
	}
	watched := make(chan tea.Msg, 1)
	go func() { watched <- batch[0]() }()
	cancel()
	select {
	case msg := <-watched:
		if _, ok := msg.(fleetSourceDoneMsg); !ok {
			t.Errorf("the watch ended with %T, want fleetSourceDoneMsg", msg)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the source's Watch went on after the console's context ended")
	}
}
