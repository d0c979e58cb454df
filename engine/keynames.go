package engine

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kasmrt/kasmrt/drivers/desktop"
	"github.com/kasmrt/kasmrt/engine/stage"
	"github.com/kasmrt/kasmrt/scenarios"
)

// checkKeyNames refuses press_key steps whose chord the X driver would not
// understand, at the key, before anything is launched.
func checkKeyNames(s *scenarios.Scenario) scenarios.Problems {
	var ps scenarios.Problems
	for i, st := range s.Steps {
		if st.Tool != "press_key" {
			continue
		}
		key, ok := st.Args["key"].(string)
		if !ok {
			continue // the loader says press_key needs key
		}
		err := stage.CheckChord(key)
		if err == nil {
			continue
		}
		pos, found := st.ArgPos["key"]
		if !found {
			pos = st.Pos
		}
		pos.Path = fmt.Sprintf("steps[%d].press_key.key", i)
		msg := err.Error()
		var uk *desktop.UnknownKeyError
		if errors.As(err, &uk) {
			msg = uk.Error() + "; " + keyHint(uk)
		}
		ps = append(ps, scenarios.Problem{Pos: pos, Msg: fmt.Sprintf("step %d: %s", i+1, msg)})
	}
	return ps
}

// keyHint says what press_key accepts in place of the part it did not
// understand.
func keyHint(uk *desktop.UnknownKeyError) string {
	if !strings.HasSuffix(strings.TrimSpace(uk.Chord), uk.Key) {
		return "modifiers are ctrl (or control), shift, alt and super, joined with + (e.g. ctrl+shift+Tab)"
	}
	return "a key is " + keyNames + "; see docs/language.md"
}

// keyNames says what press_key takes as a key, to an author and to the
// model alike.
const keyNames = "an X keysym name (Return, Tab, Escape, BackSpace, F1…F35, Left, Home, Prior, space…), an alias (enter, esc, del, pageup, pagedown, backspace) or one character"
