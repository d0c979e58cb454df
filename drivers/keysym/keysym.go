// Package keysym reads key chords ("ctrl+shift+Tab", "Return", "€") into
// X keysyms, the key names both X11 and Wayland (through xkbcommon) use,
// so every desktop driver understands the same chords the same way.
package keysym

//go:generate go run gen_keysyms.go

import (
	"strings"
	"unicode/utf8"

	"github.com/kasmrt/kasmrt/drivers/desktop"
)

// The keysyms held down for the modifier words a chord may use.
const (
	ControlL uint32 = 0xffe3
	ShiftL   uint32 = 0xffe1
	AltL     uint32 = 0xffe9
	SuperL   uint32 = 0xffeb
)

// modifiers maps the modifier words a chord may use to the keysym that is
// held down for them.
var modifiers = map[string]uint32{
	"ctrl":    ControlL,
	"control": ControlL,
	"shift":   ShiftL,
	"alt":     AltL,
	"super":   SuperL,
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

// Chord is a parsed key chord: modifiers held around one key.
type Chord struct {
	// Mods are the modifier keysyms (ControlL, ShiftL, AltL, SuperL) in
	// the order the chord names them.
	Mods []uint32
	Key  uint32
	// Name is the key as the chord spelled it.
	Name string
}

// Parse reads "ctrl+shift+Tab", "Return", "a", "€" or "ctrl++". Modifier
// words are case-insensitive; key names are X keysym names (exact case
// first, then case-insensitively), a few aliases (enter, esc, pageup…), or
// a single character. An unknown modifier or key is a
// *desktop.UnknownKeyError.
func Parse(s string) (Chord, error) {
	if s == "" {
		return Chord{}, &desktop.UnknownKeyError{Chord: s, Key: s}
	}
	parts := strings.Split(s, "+")
	// "ctrl++" and "+" name the plus key itself.
	if len(parts) >= 2 && parts[len(parts)-1] == "" && parts[len(parts)-2] == "" {
		parts = append(parts[:len(parts)-2], "+")
	}
	var c Chord
	for _, p := range parts[:len(parts)-1] {
		sym, ok := modifiers[strings.ToLower(strings.TrimSpace(p))]
		if !ok {
			return Chord{}, &desktop.UnknownKeyError{Chord: s, Key: p}
		}
		c.Mods = append(c.Mods, sym)
	}
	key := parts[len(parts)-1]
	if key != " " {
		key = strings.TrimSpace(key)
	}
	sym, ok := ForName(key)
	if !ok {
		return Chord{}, &desktop.UnknownKeyError{Chord: s, Key: key}
	}
	c.Key, c.Name = sym, key
	return c, nil
}

// ForName resolves a key name or a single character.
func ForName(name string) (uint32, bool) {
	if sym, ok := keysymByName[name]; ok {
		return sym, true
	}
	if alias, ok := keyAliases[strings.ToLower(name)]; ok {
		return keysymByName[alias], true
	}
	if sym, ok := keysymFolded[strings.ToLower(name)]; ok {
		return sym, true
	}
	if r, size := utf8.DecodeRuneInString(name); r != utf8.RuneError && size == len(name) {
		return ForRune(r), true
	}
	return 0, false
}

// ForRune is the keysym that produces r: Latin-1 characters are their own
// keysyms, control characters map to their keys, and everything else uses
// the Unicode keysym range (0x01000000 + code point), which Xlib,
// xkbcommon and the toolkits translate back to the character.
func ForRune(r rune) uint32 {
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
		return uint32(r)
	}
	return 0x01000000 | uint32(r)
}
