package tui

import "charm.land/bubbles/v2/key"

// fleetKeys are the fleet console's bindings. The table's own movement
// keys (↑/↓, j/k, pgup/pgdn, g/G) are the table component's.
type fleetKeys struct {
	Up, Watch, Back, Filter, Sort, Reverse key.Binding
	Inbox, Select, Send, Mark, Leave, Quit key.Binding
	Interrupt                              key.Binding
	// focus picks which bindings the help bar shows.
	focus fleetFocus
}

func newFleetKeys() fleetKeys {
	b := func(keys []string, k, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(k, desc))
	}
	return fleetKeys{
		Up:        b([]string{"k", "up"}, "↑/↓", "move"),
		Watch:     b([]string{"enter"}, "enter", "watch run"),
		Back:      b([]string{"esc", "q"}, "esc", "back to the runs"),
		Filter:    b([]string{"/"}, "/", "filter"),
		Sort:      b([]string{"s"}, "s", "sort column"),
		Reverse:   b([]string{"S"}, "S", "reverse"),
		Inbox:     b([]string{"i", "tab"}, "i/tab", "inbox"),
		Select:    b([]string{"up", "down"}, "↑/↓", "pick question"),
		Send:      b([]string{"enter"}, "enter", "send answer"),
		Mark:      newInboxKeys().Mark,
		Leave:     b([]string{"esc", "tab"}, "esc", "leave inbox"),
		Quit:      b([]string{"q"}, "q", "quit"),
		Interrupt: b([]string{"ctrl+c"}, "ctrl+c", "stop the suite"),
	}
}

// forFocus returns the keys for the help bar of a focus.
func (k fleetKeys) forFocus(f fleetFocus) fleetKeys {
	k.focus = f
	return k
}

func (k fleetKeys) ShortHelp() []key.Binding {
	switch k.focus {
	case fleetInbox:
		return []key.Binding{k.Select, k.Send, k.Mark, k.Leave, k.Interrupt}
	case fleetFilter:
		return []key.Binding{
			key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "keep filter")),
			key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear filter")),
		}
	}
	return []key.Binding{k.Up, k.Watch, k.Filter, k.Sort, k.Reverse, k.Inbox, k.Quit}
}

func (k fleetKeys) FullHelp() [][]key.Binding { return [][]key.Binding{k.ShortHelp()} }
