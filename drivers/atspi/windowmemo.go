package atspi

import (
	"sync"
)

// windowMemo remembers the window each accessible is in, as climbing from
// it through its parents found, while the application's events say
// nothing moved in its tree. Without it every question about a control's
// window climbs the tree again, one round trip per level: a GTK 4 button
// sits about ten levels below its window, and listing a window's controls
// with their windows took hundreds of round trips per read.
//
// The memo belongs to a control cache, whose follower forgets it on every
// event that can move an accessible to another parent (children changed,
// a parent property changed, shown or hidden, a window event); a climb that
// overlapped such an event keeps nothing.
type windowMemo struct {
	mu  sync.Mutex
	gen uint64
	of  map[ref]ref
}

// lookup is the window of r, if a climb found it since the last change,
// and the memo's generation, which a climb that misses hands to remember.
func (m *windowMemo) lookup(r ref) (win ref, known bool, gen uint64) {
	if m == nil {
		return ref{}, false, 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	win, known = m.of[r]
	return win, known, m.gen
}

// remember notes that every accessible of chain is in the window win,
// unless the tree changed since gen.
func (m *windowMemo) remember(gen uint64, chain []ref, win ref) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.gen != gen {
		return
	}
	if m.of == nil {
		m.of = map[ref]ref{}
	}
	for _, r := range chain {
		m.of[r] = win
	}
}

// forget drops what the memo knows: the tree may have changed shape.
func (m *windowMemo) forget() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gen++
	m.of = nil
}
