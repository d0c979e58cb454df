package proc

import (
	"strings"
	"sync"
)

// Tail keeps the last bytes a process writes to it (its stderr, say), for
// the error message that says why it ended. It is safe for concurrent use.
type Tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

// NewTail returns a Tail that keeps the last max bytes.
func NewTail(max int) *Tail { return &Tail{max: max} }

func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

// String is what was kept, without surrounding white space.
func (t *Tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.b))
}
