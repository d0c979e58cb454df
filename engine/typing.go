package engine

import (
	"context"
	"fmt"
)

// secretChunk is how many characters of a secret type_text types between
// two reads of where the focus is. A focus that moves while a secret is
// typed takes at most this many of its characters with it.
const secretChunk = 4

// focusMark is where typed keys land, as far as the runtime can read it:
// the X window with the focus (0: unknown), and the page's focused element
// or the focused accessible as destination describes them (read says
// whether either could be read).
type focusMark struct {
	window uint32
	where  string
	read   bool
}

// movedTo reports whether the focus is somewhere else at now than at m. A
// read that fails (a busy application, a slow page) proves nothing, so
// only two places both known and different count.
func (m focusMark) movedTo(now focusMark) bool {
	return m.window != 0 && now.window != 0 && m.window != now.window ||
		m.read && now.read && m.where != now.where
}

// String names the place for a step's message, never what was typed.
func (m focusMark) String() string {
	if m.window == 0 {
		return m.where
	}
	return fmt.Sprintf("%s (window 0x%x)", m.where, m.window)
}

// focusMark reads where typed keys land now.
func (e *environment) focusMark(ctx context.Context) focusMark {
	d, where := e.destination(ctx, "")
	m := focusMark{where: where, read: d.Origin != "" || d.Role != ""}
	if w, ok, err := e.desk.FocusedWindow(); err == nil && ok {
		m.window = w.ID
	}
	return m
}

// typeWatchingFocus types a secret in chunks of secretChunk characters and
// reads where the focus is before the first and after each: checked is
// where it was when type_text was allowed. When the focused element or
// accessible is no longer the checked one, or the focused window changed
// while typing, it stops and says where the focus went and how much was
// typed; moved is "" when the whole value went where it was checked.
func (e *environment) typeWatchingFocus(ctx context.Context, value string, checked focusMark) (moved string, err error) {
	runes := []rune(value)
	start := e.focusMark(ctx)
	// Focusing the application window before typing may change the X
	// window legitimately; the place the check allowed must stay.
	if checked.read && start.read && start.where != checked.where {
		return fmt.Sprintf("the focus moved from %s to %s before the first character", checked, start), nil
	}
	for i := 0; i < len(runes); i += secretChunk {
		end := min(i+secretChunk, len(runes))
		if err := e.desk.TypeText(ctx, string(runes[i:end])); err != nil {
			return "", err
		}
		if now := e.focusMark(ctx); start.movedTo(now) {
			return fmt.Sprintf("the focus moved from %s to %s after %d of its %d characters", start, now, end, len(runes)), nil
		}
	}
	return "", nil
}
