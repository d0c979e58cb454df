package wayland

import (
	"fmt"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/kasmrt/kasmrt/drivers/keysym"
)

// keymap is the virtual keyboard's layout. Letters are on two-level keys
// as on a real keyboard ("s" and "S" on one key, the capital with Shift),
// so a toolkit sees Shift+s as a person's keyboard makes it; every other
// keysym is on a one-level key of its own, and a character no key has yet
// gets a key (the keymap is sent again). The modifier keys are in their
// modifier maps, so pressing them changes the state the compositor reports
// to the client, as a real keyboard's do.
type keymap struct {
	keys  []keyDef
	index map[uint32]keyLevel
}

// keyDef is one key: its keysym, and its capital for a letter (0 for none).
type keyDef struct{ sym, shifted uint32 }

// keyLevel is where a keysym is: its key, and whether Shift picks it.
type keyLevel struct {
	key   int
	shift bool
}

// baseKeys are on the keyboard from the start: the modifiers, the
// letters, and the keys typing and chords use most, so the layout rarely
// changes.
func baseKeys() []keyDef {
	keys := []keyDef{{sym: keysym.ShiftL}, {sym: keysym.ControlL}, {sym: keysym.AltL}, {sym: keysym.SuperL}}
	for r := 'a'; r <= 'z'; r++ {
		keys = append(keys, keyDef{sym: uint32(r), shifted: uint32(r - 'a' + 'A')})
	}
	for r := rune(0x20); r <= 0x7e; r++ {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			continue
		}
		keys = append(keys, keyDef{sym: keysym.ForRune(r)})
	}
	// Return, Tab, BackSpace, Escape, Delete, Home, Left, Up, Right, Down,
	// Prior, Next, End, F1-F12.
	for _, sym := range []uint32{0xff0d, 0xff09, 0xff08, 0xff1b, 0xffff, 0xff50, 0xff51, 0xff52, 0xff53, 0xff54, 0xff55, 0xff56, 0xff57} {
		keys = append(keys, keyDef{sym: sym})
	}
	for f := uint32(0xffbe); f <= 0xffc9; f++ {
		keys = append(keys, keyDef{sym: f})
	}
	return keys
}

// code is the evdev key code that produces sym, and whether Shift must be
// held for it, adding a key for it when the layout has none; added
// reports whether the layout changed.
func (k *keymap) code(sym uint32) (code uint32, shift, added bool) {
	if k.index == nil {
		k.index = map[uint32]keyLevel{}
		for _, d := range baseKeys() {
			k.add(d)
		}
	}
	at, ok := k.index[sym]
	if !ok {
		at = k.add(keyDef{sym: sym})
		added = true
	}
	// xkb key codes are evdev codes plus 8; the first key is xkb code 9.
	return uint32(at.key) + 1, at.shift, added
}

func (k *keymap) add(d keyDef) keyLevel {
	if at, ok := k.index[d.sym]; ok {
		return at
	}
	k.keys = append(k.keys, d)
	i := len(k.keys) - 1
	k.index[d.sym] = keyLevel{key: i}
	if d.shifted != 0 {
		k.index[d.shifted] = keyLevel{key: i, shift: true}
	}
	return keyLevel{key: i}
}

// text is the keymap in xkb's text format.
func (k *keymap) text() string {
	if k.index == nil {
		k.code(keysym.ShiftL)
	}
	var b strings.Builder
	b.WriteString("xkb_keymap {\nxkb_keycodes \"kasmrt\" {\n\tminimum = 8;\n")
	fmt.Fprintf(&b, "\tmaximum = %d;\n", len(k.keys)+9)
	for i := range k.keys {
		fmt.Fprintf(&b, "\t<K%d> = %d;\n", i, i+9)
	}
	b.WriteString("};\nxkb_types \"kasmrt\" { include \"complete\" };\n")
	b.WriteString("xkb_compatibility \"kasmrt\" { include \"complete\" };\n")
	b.WriteString("xkb_symbols \"kasmrt\" {\n")
	for i, d := range k.keys {
		if d.shifted != 0 {
			fmt.Fprintf(&b, "\tkey <K%d> { type = \"ALPHABETIC\", [ 0x%08x, 0x%08x ] };\n", i, d.sym, d.shifted)
			continue
		}
		fmt.Fprintf(&b, "\tkey <K%d> { [ 0x%08x ] };\n", i, d.sym)
	}
	for mod, sym := range map[string]uint32{"Shift": keysym.ShiftL, "Control": keysym.ControlL, "Mod1": keysym.AltL, "Mod4": keysym.SuperL} {
		fmt.Fprintf(&b, "\tmodifier_map %s { <K%d> };\n", mod, k.index[sym].key)
	}
	b.WriteString("};\n};\n")
	return b.String()
}

// uploadKeymap sends the keymap to the compositor (with inputMu held, or
// before the client is shared).
func (c *client) uploadKeymap() error {
	text := c.keymap.text()
	fd, err := unix.MemfdCreate("kasmrt-keymap", unix.MFD_CLOEXEC)
	if err != nil {
		return fmt.Errorf("create the keymap: %w", err)
	}
	defer unix.Close(fd)
	data := append([]byte(text), 0)
	if _, err := unix.Write(fd, data); err != nil {
		return fmt.Errorf("write the keymap: %w", err)
	}
	const xkbV1 = 1
	return c.w.send(c.kbd, 0, new(msg).uint(xkbV1).fd(fd).uint(uint32(len(data))))
}

// key presses (down) or releases the key for sym, and reports whether
// Shift must be held for it.
func (c *client) key(sym uint32, down bool) (shift bool, err error) {
	code, shift, added := c.keymap.code(sym)
	if added {
		if err := c.uploadKeymap(); err != nil {
			return false, err
		}
	}
	state := uint32(0)
	if down {
		state = 1
	}
	return shift, c.w.send(c.kbd, 1, new(msg).uint(c.now()).uint(code).uint(state))
}

// modMasks are the xkb modifier masks of the modifier keys (Shift,
// Control, Mod1, Mod4 of the core modifiers).
var modMasks = map[uint32]uint32{keysym.ShiftL: 1, keysym.ControlL: 4, keysym.AltL: 8, keysym.SuperL: 64}

// modifiers sets the modifiers the compositor reports as held.
func (c *client) modifiers(depressed uint32) error {
	return c.w.send(c.kbd, 2, new(msg).uint(depressed).uint(0).uint(0).uint(0))
}

// stroke holds mods around a press and release of sym, adding Shift when
// sym is a capital on its key. The modifier keys are pressed, as a
// person's are, and the modifiers they hold are also set outright: the
// compositor takes a virtual keyboard's modifiers from what it is told,
// not from its keys.
func (c *client) stroke(mods []uint32, sym uint32) error {
	_, shift, added := c.keymap.code(sym)
	if added {
		if err := c.uploadKeymap(); err != nil {
			return err
		}
	}
	if shift && !slices.Contains(mods, keysym.ShiftL) {
		mods = append(slices.Clone(mods), keysym.ShiftL)
	}
	var mask uint32
	for _, m := range mods {
		if _, err := c.key(m, true); err != nil {
			return err
		}
		mask |= modMasks[m]
		if err := c.modifiers(mask); err != nil {
			return err
		}
	}
	_, err := c.key(sym, true)
	if err == nil {
		_, err = c.key(sym, false)
	}
	for i := len(mods) - 1; i >= 0; i-- {
		if _, rerr := c.key(mods[i], false); err == nil {
			err = rerr
		}
		mask &^= modMasks[mods[i]]
		if rerr := c.modifiers(mask); err == nil {
			err = rerr
		}
	}
	return err
}

// pressChord holds the chord's modifiers around a press of its key.
func (c *client) pressChord(ch keysym.Chord) error {
	c.inputMu.Lock()
	defer c.inputMu.Unlock()
	if err := c.stroke(ch.Mods, ch.Key); err != nil {
		return err
	}
	return c.w.roundtrip()
}

// typeText types s one character at a time.
func (c *client) typeText(s string) error {
	c.inputMu.Lock()
	defer c.inputMu.Unlock()
	for _, r := range s {
		if err := c.stroke(nil, keysym.ForRune(r)); err != nil {
			return err
		}
	}
	return c.w.roundtrip()
}
