package tui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// liveKeys are the live view's bindings. Every action has a key; the mouse
// is never required.
type liveKeys struct {
	Up, Down, PageUp, PageDown, Follow key.Binding
	Filter, Focus, Compare             key.Binding
	Detail, Why, Close                 key.Binding
	ScrollDown, ScrollUp               key.Binding
	NextFailed, PrevFailed             key.Binding
	Pause, Step, Approve, Reject       key.Binding
	Abort, Note, Takeover, Help, Quit  key.Binding
}

func newLiveKeys() liveKeys {
	b := func(keys []string, k, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(k, desc))
	}
	return liveKeys{
		Up:         b([]string{"k", "up"}, "↑/k", "up"),
		Down:       b([]string{"j", "down"}, "↓/j", "down"),
		PageUp:     b([]string{"pgup", "ctrl+u"}, "pgup", "page up"),
		PageDown:   b([]string{"pgdown", "ctrl+d"}, "pgdn", "page down"),
		Follow:     b([]string{"G", "end"}, "G", "follow newest"),
		Detail:     b([]string{"enter"}, "enter", "step detail"),
		Why:        b([]string{"w"}, "w", "why the model acted"),
		Close:      b([]string{"esc"}, "esc", "close detail"),
		ScrollDown: b([]string{"J"}, "J/K", "scroll detail"),
		ScrollUp:   partner("K"),
		NextFailed: b([]string{"e"}, "e/E", "next/prev failed step"),
		PrevFailed: partner("E"),
		Filter:     b([]string{"f", "/"}, "f", "filter"),
		Focus:      b([]string{"i", "tab"}, "i/tab", "inbox"),
		Compare:    b([]string{"b"}, "b", "before/after"),
		Pause:      b([]string{"p"}, "p", "pause/resume"),
		Step:       b([]string{"s"}, "s", "step mode"),
		Approve:    b([]string{"a"}, "a", "approve"),
		Reject:     b([]string{"r"}, "r", "reject"),
		Abort:      b([]string{"x"}, "x", "abort"),
		Note:       b([]string{"n"}, "n", "note"),
		Takeover:   b([]string{"T"}, "T", "take over the desktop / hand back"),
		Help:       b([]string{"?"}, "?", "help"),
		Quit:       b([]string{"q", "ctrl+c"}, "q", "quit"),
	}
}

func (k liveKeys) ShortHelp() []key.Binding {
	return []key.Binding{k.Pause, k.Step, k.Approve, k.Reject, k.Abort, k.Note, k.Focus, k.Detail, k.Why, k.NextFailed, k.Follow, k.Filter, k.Help, k.Quit}
}

// groups are the live view's own bindings as the full help lists them;
// the inbox's, the screen's and the mouse's follow (Model.helpGroups).
func (k liveKeys) groups() []keyGroup {
	return []keyGroup{
		{"timeline", []key.Binding{k.Up, k.Down, k.PageUp, k.PageDown, k.Follow, k.Filter, k.NextFailed}},
		{"steering", []key.Binding{k.Pause, k.Step, k.Approve, k.Reject, k.Abort, k.Note, k.Takeover}},
		{"detail", []key.Binding{k.Detail, k.Why, k.Close, k.ScrollDown, k.Compare}},
		{"console", []key.Binding{k.Help, k.Quit}},
	}
}

func (k liveKeys) FullHelp() [][]key.Binding { return bindings(k.groups()) }

// mouseHelp tells the help view what the mouse does; every action it
// takes also has a key. The bindings match no key: they only describe.
func mouseHelp() []key.Binding {
	b := func(what, desc string) key.Binding {
		return key.NewBinding(key.WithKeys("mouse "+what), key.WithHelp(what, desc))
	}
	return []key.Binding{
		b("click", "select a row (again: its detail)"),
		b("wheel", "scroll the timeline, the detail or the inbox"),
		b("click inbox", "answer a question"),
	}
}

// inboxKeys apply while the inbox's text area has focus.
type inboxKeys struct {
	Send, Newline, Mark, Leave key.Binding
}

func newInboxKeys() inboxKeys {
	return inboxKeys{
		Send:    key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "send answer")),
		Newline: key.NewBinding(key.WithKeys("ctrl+j", "alt+enter"), key.WithHelp("ctrl+j", "new line")),
		// An answer is private unless marked otherwise: the model can
		// type it by ref but never reads it.
		Mark:  key.NewBinding(key.WithKeys(markKey), key.WithHelp(markKey, "mark private/shareable/secret")),
		Leave: key.NewBinding(key.WithKeys("esc", "tab"), key.WithHelp("esc/tab", "leave inbox")),
	}
}

func (k inboxKeys) ShortHelp() []key.Binding {
	return []key.Binding{k.Send, k.Newline, k.Mark, k.Leave}
}
func (k inboxKeys) FullHelp() [][]key.Binding { return [][]key.Binding{k.ShortHelp()} }

// replayKeys are the replay's bindings.
type replayKeys struct {
	Next, Prev, NextStep, PrevStep, First, Last key.Binding
	NextRefusal, PrevRefusal                    key.Binding
	NextGrounding, PrevGrounding                key.Binding
	NextConcern, PrevConcern                    key.Binding
	NextQuestion, PrevQuestion                  key.Binding
	NextFailed, PrevFailed                      key.Binding
	Detail, Why, Close, ScrollDown, ScrollUp    key.Binding
	Filter, Compare, Help, Quit                 key.Binding
}

func newReplayKeys() replayKeys {
	b := func(keys []string, k, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(k, desc))
	}
	return replayKeys{
		Next:          b([]string{"l", "right"}, "→/l", "next event"),
		Prev:          b([]string{"h", "left"}, "←/h", "previous event"),
		NextStep:      b([]string{"j", "down"}, "↓/j", "next row"),
		PrevStep:      b([]string{"k", "up"}, "↑/k", "previous row"),
		First:         b([]string{"home", "<"}, "<", "first"),
		Last:          b([]string{"end", ">"}, ">", "last"),
		NextRefusal:   b([]string{"r"}, "r/R", "next/prev refusal"),
		PrevRefusal:   partner("R"),
		NextGrounding: b([]string{"g"}, "g/G", "next/prev grounding"),
		PrevGrounding: partner("G"),
		NextConcern:   b([]string{"c"}, "c/C", "next/prev concern"),
		PrevConcern:   partner("C"),
		NextQuestion:  b([]string{"a"}, "a/A", "next/prev question"),
		PrevQuestion:  partner("A"),
		NextFailed:    b([]string{"e"}, "e/E", "next/prev failed step"),
		PrevFailed:    partner("E"),
		Detail:        b([]string{"enter"}, "enter", "step detail"),
		Why:           b([]string{"w"}, "w", "why the model acted"),
		Close:         b([]string{"esc"}, "esc", "close detail"),
		ScrollDown:    b([]string{"J"}, "J/K", "scroll detail"),
		ScrollUp:      partner("K"),
		Filter:        b([]string{"f", "/"}, "f", "filter"),
		Compare:       b([]string{"b"}, "b", "before/after"),
		Help:          b([]string{"?"}, "?", "help"),
		Quit:          b([]string{"q", "ctrl+c", "esc"}, "q", "quit"),
	}
}

func (k replayKeys) ShortHelp() []key.Binding {
	return []key.Binding{k.Next, k.Prev, k.NextFailed, k.NextRefusal, k.NextGrounding, k.NextConcern, k.NextQuestion, k.Detail, k.Why, k.Compare, k.Help, k.Quit}
}

// groups are the replay's own bindings as the full help lists them; the
// screen's and the mouse's follow (Model.helpGroups).
func (k replayKeys) groups() []keyGroup {
	return []keyGroup{
		{"move", []key.Binding{k.Next, k.Prev, k.NextStep, k.PrevStep, k.First, k.Last}},
		{"jump", []key.Binding{k.NextFailed, k.NextRefusal, k.NextGrounding, k.NextConcern, k.NextQuestion}},
		{"detail", []key.Binding{k.Detail, k.Why, k.Close, k.ScrollDown, k.Filter, k.Compare}},
		{"console", []key.Binding{k.Help, k.Quit}},
	}
}

func (k replayKeys) FullHelp() [][]key.Binding { return bindings(k.groups()) }

// promptKeys apply while a one-line prompt (reject reason, note, abort
// confirmation) is open.
type promptKeys struct {
	Submit, Cancel key.Binding
}

func newPromptKeys() promptKeys {
	return promptKeys{
		Submit: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "send")),
		Cancel: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
	}
}

// keyIs matches a key press against a binding.
func keyIs(msg tea.KeyPressMsg, b key.Binding) bool { return key.Matches(msg, b) }
