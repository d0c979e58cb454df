package wayland

import (
	"fmt"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/kasmrt/kasmrt/drivers/keysym"
)

// keymap is the virtual keyboard's layout: one key per keysym, one level
// each, so a key produces its keysym whatever the modifiers, and a
// character no key has yet gets a key of its own (the keymap is sent
// again). The modifier keys are in their modifier maps, so pressing them
// changes the state the compositor reports to the client, as a real
// keyboard's do.
type keymap struct {
	syms  []uint32
	index map[uint32]int
}

// baseKeys are on the keyboard from the start: the modifiers, and the
// keys typing and chords use most, so the layout rarely changes.
func baseKeys() []uint32 {
	syms := []uint32{keysym.ShiftL, keysym.ControlL, keysym.AltL, keysym.SuperL}
	for r := rune(0x20); r <= 0x7e; r++ {
		syms = append(syms, keysym.ForRune(r))
	}
	// Return, Tab, BackSpace, Escape, Delete, Home, Left, Up, Right, Down,
	// Prior, Next, End, F1-F12.
	syms = append(syms, 0xff0d, 0xff09, 0xff08, 0xff1b, 0xffff, 0xff50, 0xff51, 0xff52, 0xff53, 0xff54, 0xff55, 0xff56, 0xff57)
	for f := uint32(0xffbe); f <= 0xffc9; f++ {
		syms = append(syms, f)
	}
	return syms
}

// code is the evdev key code of sym, adding a key for it when the layout
// has none; added reports whether the layout changed.
func (k *keymap) code(sym uint32) (code uint32, added bool) {
	if k.index == nil {
		k.index = map[uint32]int{}
		for _, s := range baseKeys() {
			k.add(s)
		}
	}
	i, ok := k.index[sym]
	if !ok {
		i = k.add(sym)
		added = true
	}
	// xkb key codes are evdev codes plus 8; the first key is xkb code 9.
	return uint32(i) + 1, added
}

func (k *keymap) add(sym uint32) int {
	if i, ok := k.index[sym]; ok {
		return i
	}
	k.syms = append(k.syms, sym)
	k.index[sym] = len(k.syms) - 1
	return len(k.syms) - 1
}

// text is the keymap in xkb's text format.
func (k *keymap) text() string {
	if k.index == nil {
		k.code(keysym.ShiftL)
	}
	var b strings.Builder
	b.WriteString("xkb_keymap {\nxkb_keycodes \"kasmrt\" {\n\tminimum = 8;\n")
	fmt.Fprintf(&b, "\tmaximum = %d;\n", len(k.syms)+9)
	for i := range k.syms {
		fmt.Fprintf(&b, "\t<K%d> = %d;\n", i, i+9)
	}
	b.WriteString("};\nxkb_types \"kasmrt\" { include \"complete\" };\n")
	b.WriteString("xkb_compatibility \"kasmrt\" { include \"complete\" };\n")
	b.WriteString("xkb_symbols \"kasmrt\" {\n")
	for i, s := range k.syms {
		fmt.Fprintf(&b, "\tkey <K%d> { [ 0x%08x ] };\n", i, s)
	}
	for mod, sym := range map[string]uint32{"Shift": keysym.ShiftL, "Control": keysym.ControlL, "Mod1": keysym.AltL, "Mod4": keysym.SuperL} {
		fmt.Fprintf(&b, "\tmodifier_map %s { <K%d> };\n", mod, k.index[sym])
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

// key presses (down) or releases the key for sym.
func (c *client) key(sym uint32, down bool) error {
	code, added := c.keymap.code(sym)
	if added {
		if err := c.uploadKeymap(); err != nil {
			return err
		}
	}
	state := uint32(0)
	if down {
		state = 1
	}
	return c.w.send(c.kbd, 1, new(msg).uint(c.now()).uint(code).uint(state))
}

// modMasks are the xkb modifier masks of the modifier keys (Shift,
// Control, Mod1, Mod4 of the core modifiers).
var modMasks = map[uint32]uint32{keysym.ShiftL: 1, keysym.ControlL: 4, keysym.AltL: 8, keysym.SuperL: 64}

// modifiers sets the modifiers the compositor reports as held.
func (c *client) modifiers(depressed uint32) error {
	return c.w.send(c.kbd, 2, new(msg).uint(depressed).uint(0).uint(0).uint(0))
}

// pressChord holds the chord's modifiers around a press of its key. The
// modifier keys are pressed, as a person's are, and the modifiers they
// hold are also set outright: the compositor takes a virtual keyboard's
// modifiers from what it is told, not from its keys.
func (c *client) pressChord(ch keysym.Chord) error {
	c.inputMu.Lock()
	defer c.inputMu.Unlock()
	var mask uint32
	for _, m := range ch.Mods {
		if err := c.key(m, true); err != nil {
			return err
		}
		mask |= modMasks[m]
		if err := c.modifiers(mask); err != nil {
			return err
		}
	}
	err := c.key(ch.Key, true)
	if err == nil {
		err = c.key(ch.Key, false)
	}
	for i := len(ch.Mods) - 1; i >= 0; i-- {
		if rerr := c.key(ch.Mods[i], false); err == nil {
			err = rerr
		}
		mask &^= modMasks[ch.Mods[i]]
		if rerr := c.modifiers(mask); err == nil {
			err = rerr
		}
	}
	if err != nil {
		return err
	}
	return c.w.roundtrip()
}

// typeText types s one character at a time.
func (c *client) typeText(s string) error {
	c.inputMu.Lock()
	defer c.inputMu.Unlock()
	for _, r := range s {
		sym := keysym.ForRune(r)
		if err := c.key(sym, true); err != nil {
			return err
		}
		if err := c.key(sym, false); err != nil {
			return err
		}
	}
	return c.w.roundtrip()
}
