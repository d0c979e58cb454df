package x11

//go:generate go run gen_keysyms.go

import (
	"strings"
	"unicode/utf8"

	"github.com/jezek/xgb/xproto"
)

// modifierKeysyms maps the modifier words a chord may use to the keysym
// that is held down for them.
var modifierKeysyms = map[string]xproto.Keysym{
	"ctrl":    0xffe3, // Control_L
	"control": 0xffe3,
	"shift":   0xffe1, // Shift_L
	"alt":     0xffe9, // Alt_L
	"super":   0xffeb, // Super_L
}

// keyAliases are the spellings people use for keys whose X names differ.
var keyAliases = map[string]string{
	"enter": "Return", "esc": "Escape", "del": "Delete", "ins": "Insert",
	"pgup": "Prior", "pageup": "Prior", "pgdn": "Next", "pagedown": "Next",
	"backspace": "BackSpace", "capslock": "Caps_Lock", "bksp": "BackSpace",
}

// keysymFolded is keysymByName keyed by lower-case name, for names given in
// the wrong case ("return", "escape"). Where two names fold together
// ("a"/"A", "eacute"/"Eacute") the lower-case name wins.
var keysymFolded = func() map[string]uint32 {
	m := make(map[string]uint32, len(keysymByName))
	for name, sym := range keysymByName {
		low := strings.ToLower(name)
		if _, taken := m[low]; taken && name != low {
			continue
		}
		m[low] = sym
	}
	return m
}()

// chord is a parsed key chord: modifiers held around one key.
type chord struct {
	mods []xproto.Keysym
	key  xproto.Keysym
	// name is the key as the chord spelled it.
	name string
}

// parseChord reads "ctrl+shift+Tab", "Return", "a", "€" or "ctrl++".
// Modifier words are case-insensitive; key names are X keysym names
// (exact case first, then case-insensitively), a few aliases (enter, esc,
// pageup…), or a single character.
func parseChord(s string) (chord, error) {
	if s == "" {
		return chord{}, &UnknownKeyError{Chord: s, Key: s}
	}
	parts := strings.Split(s, "+")
	// "ctrl++" and "+" name the plus key itself.
	if len(parts) >= 2 && parts[len(parts)-1] == "" && parts[len(parts)-2] == "" {
		parts = append(parts[:len(parts)-2], "+")
	}
	var c chord
	for _, p := range parts[:len(parts)-1] {
		sym, ok := modifierKeysyms[strings.ToLower(strings.TrimSpace(p))]
		if !ok {
			return chord{}, &UnknownKeyError{Chord: s, Key: p}
		}
		c.mods = append(c.mods, sym)
	}
	key := parts[len(parts)-1]
	if key != " " {
		key = strings.TrimSpace(key)
	}
	sym, ok := keysymForName(key)
	if !ok {
		return chord{}, &UnknownKeyError{Chord: s, Key: key}
	}
	c.key, c.name = sym, key
	return c, nil
}

// keysymForName resolves a key name or a single character.
func keysymForName(name string) (xproto.Keysym, bool) {
	if sym, ok := keysymByName[name]; ok {
		return xproto.Keysym(sym), true
	}
	if alias, ok := keyAliases[strings.ToLower(name)]; ok {
		return xproto.Keysym(keysymByName[alias]), true
	}
	if sym, ok := keysymFolded[strings.ToLower(name)]; ok {
		return xproto.Keysym(sym), true
	}
	if r, size := utf8.DecodeRuneInString(name); r != utf8.RuneError && size == len(name) {
		return keysymForRune(r), true
	}
	return 0, false
}

// keysymForRune is the keysym that produces r: Latin-1 characters are their
// own keysyms, control characters map to their keys, and everything else
// uses the Unicode keysym range (0x01000000 + code point), which Xlib and
// toolkits translate back to the character.
func keysymForRune(r rune) xproto.Keysym {
	switch {
	case r == '\n' || r == '\r':
		return 0xff0d // Return
	case r == '\t':
		return 0xff09 // Tab
	case r == '\b':
		return 0xff08 // BackSpace
	case r == 0x1b:
		return 0xff1b // Escape
	case r >= 0x20 && r <= 0x7e, r >= 0xa0 && r <= 0xff:
		return xproto.Keysym(r)
	}
	return xproto.Keysym(0x01000000 | r)
}

// CheckChord reports whether PressKey understands chord, without an X
// connection: an unknown modifier or key name is an *UnknownKeyError.
// Whether the keyboard has the key is only known at run time.
func CheckChord(chord string) error {
	_, err := parseChord(chord)
	return err
}
