package x11

import (
	"context"
	"fmt"
	"time"

	"github.com/jezek/xgb/xproto"
	"github.com/jezek/xgb/xtest"
)

// keymap is the server's keycode→keysyms table at one moment.
type keymap struct {
	min     xproto.Keycode
	perCode int
	syms    []xproto.Keysym
}

func (c *Conn) readKeymap() (*keymap, error) {
	setup := xproto.Setup(c.x)
	min, max := setup.MinKeycode, setup.MaxKeycode
	r, err := xproto.GetKeyboardMapping(c.x, min, byte(max-min+1)).Reply()
	if err != nil {
		return nil, fmt.Errorf("read keyboard mapping: %w", err)
	}
	return &keymap{min: min, perCode: int(r.KeysymsPerKeycode), syms: r.Keysyms}, nil
}

func (k *keymap) codes() int { return len(k.syms) / k.perCode }

// lookup finds a keycode producing sym, unshifted if possible, else with
// shift (the second keysym of a keycode is its shifted level).
func (k *keymap) lookup(sym xproto.Keysym) (code xproto.Keycode, shift, ok bool) {
	for level := 0; level < 2 && level < k.perCode; level++ {
		for i := 0; i < k.codes(); i++ {
			if k.syms[i*k.perCode+level] == sym {
				return k.min + xproto.Keycode(i), level == 1, true
			}
		}
	}
	return 0, false, false
}

// spare returns a keycode with no keysyms at all, skipping taken ones.
func (k *keymap) spare(taken map[xproto.Keycode]bool) (xproto.Keycode, bool) {
	// Search from the top: low keycodes are the physical keys some
	// toolkits treat specially.
	for i := k.codes() - 1; i >= 0; i-- {
		code := k.min + xproto.Keycode(i)
		if taken[code] {
			continue
		}
		empty := true
		for _, s := range k.syms[i*k.perCode : (i+1)*k.perCode] {
			if s != 0 {
				empty = false
				break
			}
		}
		if empty {
			return code, true
		}
	}
	return 0, false
}

// resolve returns the keycode for sym and whether shift must be held,
// binding sym to a spare keycode when the keymap lacks it. Callers hold
// inputMu.
func (c *Conn) resolve(km *keymap, sym xproto.Keysym) (xproto.Keycode, bool, error) {
	if code, shift, ok := km.lookup(sym); ok {
		return code, shift, nil
	}
	if code, ok := c.scratch[sym]; ok {
		return code, false, nil
	}
	taken := make(map[xproto.Keycode]bool, len(c.scratch))
	for _, code := range c.scratch {
		taken[code] = true
	}
	code, ok := km.spare(taken)
	if !ok {
		if len(c.scratch) == 0 {
			return 0, false, fmt.Errorf("bind keysym 0x%x: no spare keycode", uint32(sym))
		}
		// Every spare keycode holds an earlier binding: give them back
		// and start over. Events already sent used them, so let the
		// clients read those first.
		if err := c.sync(); err != nil {
			return 0, false, err
		}
		time.Sleep(scratchSettle)
		c.restoreScratch()
		return c.resolve(km, sym)
	}
	// Both levels carry sym so a held shift does not change the result.
	err := xproto.ChangeKeyboardMappingChecked(c.x, 1, code, 2, []xproto.Keysym{sym, sym}).Check()
	if err != nil {
		return 0, false, fmt.Errorf("bind keysym 0x%x to keycode %d: %w", uint32(sym), code, err)
	}
	c.scratch[sym] = code
	return code, false, nil
}

// scratchSettle is how long to wait before rebinding scratch keycodes
// whose key events are already sent: clients look keycodes up lazily after
// MappingNotify, so a rebinding that overtakes them changes what they type.
const scratchSettle = 50 * time.Millisecond

// restoreScratch unbinds every keycode TypeText bound. It runs
// on Close, not after each call, for the reason given at scratchSettle.
// Callers hold inputMu.
func (c *Conn) restoreScratch() {
	for sym, code := range c.scratch {
		xproto.ChangeKeyboardMapping(c.x, 1, code, 2, []xproto.Keysym{0, 0})
		delete(c.scratch, sym)
	}
	_ = c.sync()
}

func (c *Conn) fake(kind byte, detail byte) {
	xtest.FakeInput(c.x, kind, detail, 0, c.root, 0, 0, 0)
}

// PressKey presses and releases a chord such as "Return", "ctrl+l",
// "shift+Tab", "alt+F4", "super+a" or "A". Modifiers are ctrl (control),
// alt, shift and super, in any case; the key is an X keysym name, an alias
// (enter, esc, pageup…) or one character. A key that needs shift on this
// keymap ("A", "exclam") gets it added. An unknown name is an
// *UnknownKeyError (errors.Is ErrUnknownKey); a known key the keymap does
// not map ("€" on a US layout) is a *KeyNotOnLayoutError (errors.Is
// ErrKeyNotOnLayout).
func (c *Conn) PressKey(ctx context.Context, keys string) error {
	ch, err := parseChord(keys)
	if err != nil {
		return fmt.Errorf("press %s: %w", keys, err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("press %s: %w", keys, err)
	}
	c.inputMu.Lock()
	defer c.inputMu.Unlock()
	km, err := c.readKeymap()
	if err != nil {
		return fmt.Errorf("press %s: %w", keys, err)
	}
	var held []xproto.Keycode
	hasShift := false
	for _, m := range ch.mods {
		code, _, ok := km.lookup(m)
		if !ok {
			return fmt.Errorf("press %s: modifier keysym 0x%x is not on the keyboard", keys, uint32(m))
		}
		hasShift = hasShift || m == modifierKeysyms["shift"]
		held = append(held, code)
	}
	// Unlike TypeText, PressKey never binds a spare keycode: a test presses
	// only keys a person at this keyboard could press.
	code, shift, ok := km.lookup(ch.key)
	if bound, scratch := c.scratch[ch.key]; scratch && bound == code {
		// TypeText's own binding is not the layout's.
		ok = false
	}
	if !ok {
		return fmt.Errorf("press %s: %w", keys, &KeyNotOnLayoutError{Chord: keys, Key: ch.name})
	}
	if shift && !hasShift {
		shiftCode, _, ok := km.lookup(modifierKeysyms["shift"])
		if !ok {
			return fmt.Errorf("press %s: no Shift key on the keyboard", keys)
		}
		held = append(held, shiftCode)
	}
	if err := c.pauseAfterTyping(ctx); err != nil {
		return fmt.Errorf("press %s: %w", keys, err)
	}
	for _, h := range held {
		c.fake(xproto.KeyPress, byte(h))
	}
	c.fake(xproto.KeyPress, byte(code))
	c.fake(xproto.KeyRelease, byte(code))
	for i := len(held) - 1; i >= 0; i-- {
		c.fake(xproto.KeyRelease, byte(held[i]))
	}
	if err := c.sync(); err != nil {
		return fmt.Errorf("press %s: %w", keys, err)
	}
	return nil
}

// TypeText types s one character at a time: a press/release per character
// on the keycode the keymap has for it, with shift where that keycode needs
// it. Characters the keymap lacks are bound to a spare keycode first (as
// xdotool does); those bindings are undone when the Conn closes. Newlines
// and tabs press Return and Tab.
func (c *Conn) TypeText(ctx context.Context, s string) error {
	c.inputMu.Lock()
	defer c.inputMu.Unlock()
	km, err := c.readKeymap()
	if err != nil {
		return fmt.Errorf("type text: %w", err)
	}
	shiftCode, _, haveShift := km.lookup(modifierKeysyms["shift"])
	for i, r := range []rune(s) {
		// Sync now and then so a cancelled context stops typing promptly
		// and the request queue stays short.
		if i%64 == 63 {
			if err := c.sync(); err != nil {
				return fmt.Errorf("type text: %w", err)
			}
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("type text: stopped after %d characters: %w", i, err)
		}
		code, shift, err := c.resolve(km, keysymForRune(r))
		if err != nil {
			return fmt.Errorf("type text: character %q: %w", r, err)
		}
		if shift && !haveShift {
			return fmt.Errorf("type text: character %q needs Shift, which the keyboard lacks", r)
		}
		if shift {
			c.fake(xproto.KeyPress, byte(shiftCode))
		}
		c.fake(xproto.KeyPress, byte(code))
		c.fake(xproto.KeyRelease, byte(code))
		if shift {
			c.fake(xproto.KeyRelease, byte(shiftCode))
		}
	}
	if err := c.sync(); err != nil {
		return fmt.Errorf("type text: %w", err)
	}
	c.markTyped(ctx)
	return nil
}

// Click moves the pointer to (x, y) in root coordinates and clicks the
// left button.
func (c *Conn) Click(ctx context.Context, x, y int) error {
	return c.ClickButton(ctx, x, y, 1)
}

// ClickButton moves the pointer to (x, y) and presses and releases button
// (1 left, 2 middle, 3 right, 4/5 wheel up/down).
func (c *Conn) ClickButton(ctx context.Context, x, y, button int) error {
	if button < 1 || button > 255 {
		return fmt.Errorf("click at %d,%d: invalid button %d", x, y, button)
	}
	if err := checkPoint(ctx, c, x, y); err != nil {
		return fmt.Errorf("click at %d,%d: %w", x, y, err)
	}
	c.inputMu.Lock()
	defer c.inputMu.Unlock()
	c.motion(x, y)
	c.fake(xproto.ButtonPress, byte(button))
	c.fake(xproto.ButtonRelease, byte(button))
	if err := c.sync(); err != nil {
		return fmt.Errorf("click at %d,%d: %w", x, y, err)
	}
	return nil
}

// MovePointer moves the pointer to (x, y) in root coordinates.
func (c *Conn) MovePointer(ctx context.Context, x, y int) error {
	if err := checkPoint(ctx, c, x, y); err != nil {
		return fmt.Errorf("move pointer to %d,%d: %w", x, y, err)
	}
	c.inputMu.Lock()
	defer c.inputMu.Unlock()
	c.motion(x, y)
	if err := c.sync(); err != nil {
		return fmt.Errorf("move pointer to %d,%d: %w", x, y, err)
	}
	return nil
}

// motion sends an absolute pointer motion (detail 0 means absolute).
func (c *Conn) motion(x, y int) {
	xtest.FakeInput(c.x, xproto.MotionNotify, 0, 0, c.root, int16(x), int16(y), 0)
}

func checkPoint(ctx context.Context, c *Conn, x, y int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if x < 0 || y < 0 || x >= c.width || y >= c.height {
		return ErrOffScreen
	}
	return nil
}
