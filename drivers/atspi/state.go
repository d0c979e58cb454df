package atspi

// stateSet is an AT-SPI state set: bit n of the set is state n of the
// AtspiStateType enumeration, carried over D-Bus as two 32-bit words.
type stateSet uint64

// The AtspiStateType values this package reads. The numbering is part of
// the AT-SPI D-Bus protocol and has been stable since AT-SPI 2.0.
const (
	stateChecked            = 4
	stateDefunct            = 6
	stateEnabled            = 8
	stateSensitive          = 24
	stateShowing            = 25
	stateVisible            = 30
	stateManagesDescendants = 31
)

func newStateSet(words []uint32) stateSet {
	var s stateSet
	for i, w := range words {
		if i > 1 {
			break
		}
		s |= stateSet(w) << (32 * i)
	}
	return s
}

func (s stateSet) has(state uint) bool { return s&(1<<state) != 0 }

// with returns s with state set or cleared.
func (s stateSet) with(state uint, on bool) stateSet {
	if on {
		return s | 1<<state
	}
	return s &^ (1 << state)
}
