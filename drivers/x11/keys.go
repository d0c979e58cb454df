package x11

import (
	"github.com/jezek/xgb/xproto"

	"github.com/kasmrt/kasmrt/drivers/keysym"
)

// modifierKeysyms maps the modifier words a chord may use to the keysym that
// is held down for them.
var modifierKeysyms = map[string]xproto.Keysym{
	"ctrl":  xproto.Keysym(keysym.ControlL),
	"shift": xproto.Keysym(keysym.ShiftL),
	"alt":   xproto.Keysym(keysym.AltL),
	"super": xproto.Keysym(keysym.SuperL),
}

// chord is a parsed key chord (keysym.Chord) in the X protocol's types.
type chord struct {
	mods []xproto.Keysym
	key  xproto.Keysym
	// name is the key as the chord spelled it.
	name string
}

// parseChord reads a chord as keysym.Parse does.
func parseChord(s string) (chord, error) {
	k, err := keysym.Parse(s)
	if err != nil {
		return chord{}, err
	}
	c := chord{key: xproto.Keysym(k.Key), name: k.Name}
	for _, m := range k.Mods {
		c.mods = append(c.mods, xproto.Keysym(m))
	}
	return c, nil
}

// keysymForRune is the keysym that produces r (keysym.ForRune).
func keysymForRune(r rune) xproto.Keysym { return xproto.Keysym(keysym.ForRune(r)) }

// CheckChord reports whether PressKey understands chord, without an X
// connection: an unknown modifier or key name is an *UnknownKeyError.
// Whether the keyboard has the key is only known at run time.
func CheckChord(chord string) error {
	_, err := parseChord(chord)
	return err
}
