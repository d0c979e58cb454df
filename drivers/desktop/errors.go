package desktop

import (
	"errors"
	"fmt"
)

// ErrWindowGone is returned for a window that no longer exists.
var ErrWindowGone = errors.New("window gone")

// ErrNoWindow is wrapped by a desktop's FindWindow when no window matched
// in time.
var ErrNoWindow = errors.New("no matching window")

// ErrOffScreen is returned for a pointer position outside the screen.
var ErrOffScreen = errors.New("point outside the screen")

// ErrPingUnsupported means a window does not list _NET_WM_PING among its
// WM_PROTOCOLS, so its client's answer cannot tell whether it is alive.
var ErrPingUnsupported = errors.New("the window does not take part in _NET_WM_PING")

// ErrUnknownKey is wrapped by UnknownKeyError so callers can test with
// errors.Is.
var ErrUnknownKey = errors.New("unknown key")

// UnknownKeyError names a key or modifier that PressKey could not resolve.
type UnknownKeyError struct {
	// Chord is the whole chord as given; Key is the part not understood.
	Chord, Key string
}

func (e *UnknownKeyError) Error() string {
	if e.Chord == e.Key {
		return fmt.Sprintf("unknown key %q", e.Key)
	}
	return fmt.Sprintf("unknown key %q in %q", e.Key, e.Chord)
}

func (e *UnknownKeyError) Is(target error) bool { return target == ErrUnknownKey }

// ErrKeyNotOnLayout is wrapped by KeyNotOnLayoutError so callers can test
// with errors.Is.
var ErrKeyNotOnLayout = errors.New("key not on the keyboard layout")

// KeyNotOnLayoutError names a key PressKey knows but the session's
// keyboard layout does not map, so no physical key would produce it.
type KeyNotOnLayoutError struct {
	// Chord is the whole chord as given; Key is the key the layout lacks.
	Chord, Key string
}

func (e *KeyNotOnLayoutError) Error() string {
	return fmt.Sprintf("the key %q in %q is not on the session's keyboard layout", e.Key, e.Chord)
}

func (e *KeyNotOnLayoutError) Is(target error) bool { return target == ErrKeyNotOnLayout }
