package atspi

import (
	"context"
	"fmt"
)

// stateFocused is ATSPI_STATE_FOCUSED: the accessible has the keyboard
// focus.
const stateFocused = 12

// Accessible is an accessible's role and name.
type Accessible struct {
	// Role is the AT-SPI role name ("password text", "text").
	Role string
	// Name is the accessible name; often empty for entries, which are
	// labelled by a neighbouring label instead.
	Name string
}

// Focused returns the showing accessible of the application that has the
// keyboard focus, and false when none has (the focus is in another
// application, or the toolkit does not say).
func (a App) Focused(ctx context.Context) (Accessible, bool, error) {
	rules := rulesFor(a.Toolkit)
	focused := func(n node) bool {
		return n.states.has(stateFocused) && rules.shown(n)
	}
	nodes, _, err := a.walk(ctx, Limits{}.withDefaults(), 0, focused)
	if err != nil {
		return Accessible{}, false, fmt.Errorf("find the focused accessible of %s: %w", a.Name, err)
	}
	if len(nodes) == 0 {
		return Accessible{}, false, nil
	}
	// The deepest focused accessible is the one that receives the keys: a
	// focused window's focused entry.
	n := nodes[len(nodes)-1]
	return Accessible{Role: n.role, Name: n.name}, true, nil
}
